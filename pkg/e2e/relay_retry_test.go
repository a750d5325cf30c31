package e2e

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/convida/convida/pkg/ledger"
	"github.com/convida/convida/pkg/outbox"
	"github.com/convida/convida/pkg/program"
	"github.com/convida/convida/pkg/testenv"
)

// armedRelay is the production relay whose next call fails once armed, as
// a publish does when the broker is away for a moment.
type armedRelay struct {
	ledger.Relayer
	armed atomic.Bool
}

func (r *armedRelay) Relay(ctx context.Context, recs []outbox.Record) error {
	if r.armed.CompareAndSwap(true, false) {
		return errors.New("kafka: publish failed (the test's broker hiccup)")
	}
	return r.Relayer.Relay(ctx, recs)
}

// TestLedgerRelaysAgainAfterAFailedRelay: the relay of a committed sale's
// events fails once; the ledger relays them again itself, so the webhooks
// arrive within a couple of seconds — no scheduler runs here, so nothing
// else would ever publish them — each once, and the outbox has nothing
// left pending.
func TestLedgerRelaysAgainAfterAFailedRelay(t *testing.T) {
	t.Parallel()
	s, tn, ana := startWithAna(t, stackOptions{noLedger: true, dispatcher: true, env: webhookEnv(t, nil)}, 1500)
	rc := newReceiver(t, nil)
	s.hook(tn, rc, "referral.created", "wallet.credited")
	l := program.NewLedger(s.deps)
	relay := &armedRelay{Relayer: l.Relay}
	l.Relay = relay
	s.run(t.Context(), "ledger", func(ctx context.Context, _ *program.Deps) error { return l.Run(ctx) })

	// Warm: consumers joined, the receiver's connection open.
	wantStatus(t, s.postGuru(tn, guruSale(t, tn, "relay-warm", ana.CouponCode, 97.9, "approved")), 200)
	testenv.Eventually(t, 30*time.Second, "the first sale's two webhooks", func() bool { return len(rc.received()) == 2 })

	relay.armed.Store(true)
	sent := time.Now()
	wantStatus(t, s.postGuru(tn, guruSale(t, tn, "relay-hiccup", ana.CouponCode, 97.9, "approved")), 200)
	testenv.Eventually(t, 4*time.Second, "the webhooks of the sale whose relay failed", func() bool { return len(rc.received()) >= 4 })
	took := time.Since(sent)
	if relay.armed.Load() {
		t.Fatal("the relay never failed: the test proves nothing")
	}
	t.Logf("the webhooks of a sale whose relay failed arrived %v after the sale", took.Round(time.Millisecond))
	time.Sleep(time.Second) // a second publish would show now
	seen := map[string]int{}
	for _, g := range rc.received() {
		seen[g.id]++
	}
	for id, n := range seen {
		if n != 1 {
			t.Errorf("event %s delivered %d times, want once", id, n)
		}
	}
	if n := s.count(`SELECT count(*) FROM outbox_pending WHERE merchant_id = $1`, tn.merchant.ID); n != 0 {
		t.Errorf("%d events still pending in the outbox, want 0", n)
	}
}
