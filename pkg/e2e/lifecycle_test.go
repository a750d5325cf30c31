package e2e

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/convida/convida/pkg/campaign"
	"github.com/convida/convida/pkg/program"
	"github.com/convida/convida/pkg/testenv"
)

func (s *stack) outboxTypes(tn *tenant) map[string]int {
	s.t.Helper()
	rows, err := s.deps.Pool.Query(context.Background(), `SELECT type FROM outbox WHERE merchant_id = $1`, tn.merchant.ID)
	if err != nil {
		s.t.Fatal(err)
	}
	defer rows.Close()
	counts := map[string]int{}
	for rows.Next() {
		var typ string
		_ = rows.Scan(&typ)
		counts[typ]++
	}
	return counts
}

// TestSaleLifecycle follows sales from both platforms through the whole
// pipeline over TCP: pending credit, warranty release, refund of a pending
// and of an approved referral, as the member-facing API shows them.
func TestSaleLifecycle(t *testing.T) {
	t.Parallel()
	s := startStack(t, stackOptions{})
	tn := s.newTenant(campaign.Campaign{Name: "Padrão", RewardType: campaign.RewardPercentage, RewardValue: 10, WarrantyDays: 7, IsActive: true})
	m := s.newMember(tn, "ana@example.com", "Ana Souza")

	// Guru sale of R$ 97,90, paid a week and a minute ago (its webhook
	// late) → 979 pending until the scheduler's next tick.
	weekAgo := s.clock.Now().Add(-7*24*time.Hour - time.Minute).UTC().Format(time.RFC3339)
	sale := fixture(t, guruApproved, map[string]any{"api_token": tn.guruToken, "id": "guru-order-1", "status": "approved",
		"payment.coupon.coupon_code": strings.ToLower(m.CouponCode), "payment.total": 97.9, "dates.confirmed_at": weekAgo})
	if res := s.postGuru(tn, sale); res.Status != 200 {
		t.Fatalf("guru sale = %d %s", res.Status, res.Body)
	}
	s.waitBalance(tn, m.Email, wallet{totalEarned: 979, pending: 979})
	if got, want := s.transactionStatuses(tn, m.Email), []string{"credit:979:pending"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("transactions = %v, want %v", got, want)
	}

	// The warranty has passed: the scheduler (leader) releases it.
	sched := program.NewScheduler(s.deps)
	defer sched.Close()
	if err := sched.Tick(context.Background()); err != nil {
		t.Fatal(err)
	}
	s.waitBalance(tn, m.Email, wallet{totalEarned: 979, available: 979})

	// Yampi sale of R$ 100,00 paid later → 1000 pending.
	paid := fixture(t, yampiPaid, map[string]any{"resource.id": 770001, "resource.promocode.data.code": m.CouponCode,
		"resource.value_total": 100.0})
	if res := s.postYampi(tn, paid, ""); res.Status != 200 {
		t.Fatalf("yampi sale = %d %s", res.Status, res.Body)
	}
	s.waitBalance(tn, m.Email, wallet{totalEarned: 1979, available: 979, pending: 1000})

	// Yampi refund while pending → the credit is cancelled.
	if res := s.postYampi(tn, yampiOrder(t, yampiRefunded, 770001, m.CouponCode, 100.0), ""); res.Status != 200 {
		t.Fatalf("yampi refund = %d %s", res.Status, res.Body)
	}
	s.waitBalance(tn, m.Email, wallet{totalEarned: 979, available: 979, cancelled: 1000})

	// Guru refund after approval → the credit is reversed.
	if res := s.postGuru(tn, guruSale(t, tn, "guru-order-1", m.CouponCode, 97.9, "refunded")); res.Status != 200 {
		t.Fatalf("guru refund = %d %s", res.Status, res.Body)
	}
	s.waitBalance(tn, m.Email, wallet{cancelled: 1979})
	if got, want := s.transactionStatuses(tn, m.Email), []string{"credit:1000:cancelled", "credit:979:reversed"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("transactions = %v, want %v", got, want)
	}

	status, body := s.api(tn, http.MethodGet, "/member/referrals?email="+m.Email, nil)
	refs := body["data"].(map[string]any)["referrals"].([]any)
	if status != 200 || len(refs) != 2 {
		t.Fatalf("referrals = %d %v", status, body)
	}
	for _, r := range refs {
		if st := r.(map[string]any)["status"]; st != "cancelled" {
			t.Errorf("referral status = %v, want cancelled", st)
		}
	}
	// Each refund took money out of the wallet: one wallet.debited each.
	want := map[string]int{"member.created": 1, "referral.created": 2, "wallet.credited": 2, "referral.approved": 1,
		"referral.cancelled": 2, "wallet.debited": 2}
	testenv.Eventually(t, 5*time.Second, "outbox events", func() bool { return fmt.Sprint(s.outboxTypes(tn)) == fmt.Sprint(want) })
	testenv.Eventually(t, 5*time.Second, "every event relayed", func() bool {
		var unrelayed int
		_ = s.deps.Pool.QueryRow(context.Background(), `SELECT count(*) FROM outbox_pending`).Scan(&unrelayed)
		return unrelayed == 0
	})
}
