package e2e

import (
	"net/http"
	"testing"
	"time"

	"github.com/convida/convida/pkg/testenv"
)

// TestEveryRoleOutlivesALostBroker: the broker goes away under a running
// ledger, recorder, dispatcher and scheduler, for longer than any client
// retries a request. None of them stops (the stack fails the test if a
// role returns), /readyz says unavailable naming kafka, a sale is answered
// 503; once the broker is back on its address, a new sale is credited and
// its webhook delivered without restarting anything.
func TestEveryRoleOutlivesALostBroker(t *testing.T) {
	t.Parallel()
	broker := testenv.StartBrokerServer(t) // before the stack: closed after it
	s, tn, ana := startWithAna(t, stackOptions{brokers: broker.Addrs(), dispatcher: true, scheduler: true,
		env: webhookEnv(t, map[string]string{"SCHEDULER_INTERVAL": "1s"})}, 1500)
	rc := newReceiver(t, nil)
	s.hook(tn, rc, "referral.created")
	wantStatus(t, s.postGuru(tn, guruSale(t, tn, "lost-warm", ana.CouponCode, 97.9, "approved")), 200)
	testenv.Eventually(t, 30*time.Second, "the first sale's webhook", func() bool { return len(rc.received()) == 1 })

	broker.Stop()
	wantStatus(t, s.postGuru(tn, guruSale(t, tn, "lost-during", ana.CouponCode, 97.9, "approved")), http.StatusServiceUnavailable)
	time.Sleep(3 * time.Second) // the readiness probe's last answer expires; the roles meet the outage
	if got := s.readiness(t); got != "unavailable" {
		t.Errorf("/readyz with the broker gone = %q, want unavailable", got)
	}
	time.Sleep(10 * time.Second)

	broker.Start()
	testenv.Eventually(t, 30*time.Second, "a sale accepted again", func() bool {
		return s.postGuru(tn, guruSale(t, tn, "lost-after", ana.CouponCode, 97.9, "approved")).Status == http.StatusOK
	})
	s.waitBalance(tn, ana.Email, wallet{totalEarned: 3000, pending: 3000})
	testenv.Eventually(t, 60*time.Second, "the webhook of the sale after the outage", func() bool { return len(rc.received()) >= 2 })
	testenv.Eventually(t, 10*time.Second, "/readyz ready", func() bool { return s.readiness(t) == "ready" })
	if err := checkLedger(s); err != nil {
		t.Error(err)
	}
}
