package ledger

import (
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/campaign"
	"github.com/convida/convida/pkg/member"
	"github.com/convida/convida/pkg/referral"
)

var t0 = time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)

// newTestBook returns a book with one member on a 10 % campaign.
func newTestBook(active bool, status string) (*Book, *member.Member) {
	b := NewBook(func() time.Time { return t0 })
	merchant := uuid.New()
	c := &campaign.Campaign{ID: uuid.New(), MerchantID: merchant, RewardType: campaign.RewardPercentage, RewardValue: 10, WarrantyDays: 7, IsActive: active}
	m := &member.Member{ID: uuid.New(), MerchantID: merchant, Email: "Ana@Example.com", Name: "Ana", CampaignID: c.ID, Status: status}
	b.Members[ScopedID{merchant, m.ID}] = m
	b.Campaigns[ScopedID{merchant, c.ID}] = c
	return b, m
}

func saleCmd(m *member.Member, id, typ, order, buyer string) Command {
	return Command{ID: id, Type: typ, MerchantID: m.MerchantID, MemberID: m.ID, IssuedAt: t0,
		Sale: &Sale{Source: "guru", OrderID: order, Amount: 10000, BuyerEmail: buyer, PaidAt: t0}}
}

func TestCreditSaleRules(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		active      bool
		status      string
		buyer       string
		wantOutcome string
		wantRef     string // referral status, "" = none
		wantPending int64
	}{
		{"14: a sale of an active member is credited pending", true, member.StatusActive, "bruno@example.com", OutcomeApplied, referral.StatusPending, 1000},
		{"14: a self-referral, in any case, is created rejected and credits nothing", true, member.StatusActive, " ana@EXAMPLE.com ", OutcomeApplied, referral.StatusRejected, 0},
		{"14: an inactive campaign attributes nothing", false, member.StatusActive, "bruno@example.com", OutcomeNoop, "", 0},
		{"14: a blocked member is attributed nothing", true, member.StatusBlocked, "bruno@example.com", OutcomeNoop, "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b, m := newTestBook(tt.active, tt.status)
			b.Apply(saleCmd(m, "c1", CmdCreditSale, "o1", tt.buyer))
			if got := b.Outcomes[0].Status; got != tt.wantOutcome {
				t.Errorf("outcome = %s, want %s", got, tt.wantOutcome)
			}
			gotRef := ""
			if len(b.NewReferrals) == 1 {
				gotRef = b.NewReferrals[0].Status
			}
			if gotRef != tt.wantRef {
				t.Errorf("referral = %q, want %q", gotRef, tt.wantRef)
			}
			var pending int64
			if w := b.Wallets[ScopedID{m.MerchantID, m.ID}]; w != nil {
				pending = w.Pending
			}
			if pending != tt.wantPending {
				t.Errorf("pending = %d, want %d", pending, tt.wantPending)
			}
		})
	}
}

func TestRefundBeforeSaleAndRepeats(t *testing.T) {
	t.Parallel()
	b, m := newTestBook(true, member.StatusActive)
	b.Apply(saleCmd(m, "r1", CmdRefund, "o1", "bruno@example.com"))
	b.Apply(saleCmd(m, "s1", CmdCreditSale, "o1", "bruno@example.com"))
	b.Apply(saleCmd(m, "s1", CmdCreditSale, "o1", "bruno@example.com")) // same id: skipped, no outcome
	if len(b.Outcomes) != 2 {
		t.Fatalf("outcomes = %d, want 2", len(b.Outcomes))
	}
	if b.Outcomes[1].Status != OutcomeNoop {
		t.Errorf("sale after refund: outcome %s, want noop", b.Outcomes[1].Status)
	}
	if len(b.Entries) != 0 || len(b.NewReferrals) != 1 || b.NewReferrals[0].Status != referral.StatusCancelled {
		t.Errorf("entries %d, referrals %+v: want none and one cancelled", len(b.Entries), b.NewReferrals)
	}
}

func TestReversalNeverGoesNegative(t *testing.T) {
	t.Parallel()
	b, m := newTestBook(true, member.StatusActive)
	b.Apply(saleCmd(m, "s1", CmdCreditSale, "o1", "bruno@example.com"))
	r := b.NewReferrals[0]
	b.Apply(Command{ID: "rel", Type: CmdRelease, MerchantID: m.MerchantID, MemberID: m.ID, ReferralID: r.ID, IssuedAt: t0.Add(8 * 24 * time.Hour)})
	// Pretend 600 of the 1000 were redeemed: only 400 remain available.
	w := b.Wallets[ScopedID{m.MerchantID, m.ID}]
	w.Available, w.TotalRedeemed = 400, 600
	b.Apply(saleCmd(m, "r1", CmdRefund, "o1", "bruno@example.com"))
	if w.Available != 0 || w.Cancelled != 400 || r.UnrecoveredAmount != 600 || r.Status != referral.StatusCancelled {
		t.Errorf("after refund: available %d cancelled %d unrecovered %d status %s; want 0 400 600 cancelled",
			w.Available, w.Cancelled, r.UnrecoveredAmount, r.Status)
	}
	if w.Available+w.Pending != w.TotalEarned-w.TotalRedeemed {
		t.Errorf("invariant: %d + %d != %d - %d", w.Available, w.Pending, w.TotalEarned, w.TotalRedeemed)
	}
}
