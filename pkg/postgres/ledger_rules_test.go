package postgres_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/convida/convida/pkg/campaign"
	"github.com/convida/convida/pkg/creator"
	"github.com/convida/convida/pkg/event"
	"github.com/convida/convida/pkg/fraud"
	"github.com/convida/convida/pkg/ledger"
	"github.com/convida/convida/pkg/postgres"
	"github.com/convida/convida/pkg/referral"
	"github.com/convida/convida/pkg/testenv"
)

// TestLedgerLoadsRules: the store's one round trip loads what the fraud
// rules and the creator tiers read — the campaign's thresholds, the
// member's document and creator profile, the campaign's tiers and the
// member's referrals of the last hour and the month — and a batch with
// many sales of one member counts them one after another.
func TestLedgerLoadsRules(t *testing.T) {
	t.Parallel()
	pool := testenv.MustPool(t)
	ctx := context.Background()
	perHour, monthCap := 3, int64(4000)
	c := campaign.Campaign{Name: "Regras", RewardType: campaign.RewardPercentage, RewardValue: 5, WarrantyDays: 0, IsActive: true,
		Rules: campaign.Rules{MaxReferralsPerHour: &perHour, MaxRewardPerMonth: &monthCap, BlockDisposableEmails: true}}
	s := mustSeed(t, pool, c, 2)
	m, other := s.members[0], s.members[1]
	if _, err := pool.Exec(ctx, `UPDATE members SET document = '529.982.247-25' WHERE merchant_id = $1 AND id = $2`, s.merchant.ID, m.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO creator_profiles (merchant_id, member_id, display_name, token_hash, token_enc)
VALUES ($1, $2, 'Ana', $3, '\x00')`, s.merchant.ID, m.ID, creator.HashToken(creator.NewToken())); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO campaign_tiers (merchant_id, campaign_id, position, name, min_sales, commission_bp)
VALUES ($1, $2, 0, 'Bronze', 0, 1000), ($1, $2, 1, 'Silver', 3, 1500)`, s.merchant.ID, s.campaign.ID); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	clock := now
	store := postgres.NewLedgerStore(pool, func() time.Time { return clock })
	cmd := func(id string, memberID [16]byte, order, buyer, doc string) ledger.Command {
		sl := sale(order, 10000, buyer, now)
		sl.BuyerDocument = doc
		return ledger.Command{ID: id, Type: ledger.CmdCreditSale, MerchantID: s.merchant.ID, MemberID: memberID, IssuedAt: now, Sale: sl}
	}

	// Last month: a sale counts neither for this month's tier nor its cap,
	// but it is within the velocity hour of nothing.
	clock = now.AddDate(0, -1, 0)
	mustApply(t, store, cmd("o0", m.ID, "o0", "z@example.com", ""))
	// Two hours ago: this month's 1st (Bronze 10 %).
	clock = now.Add(-2 * time.Hour)
	mustApply(t, store, cmd("o1", m.ID, "o1", "a@example.com", ""))
	// Now, one batch: the 2nd (Bronze), a self-referral by CPF, the 3rd
	// (Silver 15 %, a tier change), the 4th: over the hour's 3 and
	// crossing the 4000 cap (1000+1000+1500 = 3500: 500 left).
	clock = now
	book := mustApply(t, store,
		cmd("o2", m.ID, "o2", "b@example.com", ""),
		cmd("o3", m.ID, "o3", "c@example.com", "52998224725"),
		cmd("o4", m.ID, "o4", "d@example.com", ""),
		cmd("o5", m.ID, "o5", "e@example.com", ""),
		cmd("p1", other.ID, "p1", "f@mailinator.com", "529.982.247-25"), // another member: not self, disposable
	)
	want := map[string]struct {
		status  string
		reward  int64
		reasons []string
	}{
		"o0": {referral.StatusPending, 1000, nil},
		"o1": {referral.StatusPending, 1000, nil},
		"o2": {referral.StatusPending, 1000, nil},
		"o3": {referral.StatusRejected, 1500, nil},
		"o4": {referral.StatusPending, 1500, nil},
		"o5": {referral.StatusPending, 500, []string{fraud.ReasonVelocity, fraud.ReasonMonthlyCap}},
		"p1": {referral.StatusPending, 500, []string{fraud.ReasonDisposableEmail}},
	}
	reads := postgres.NewReferralReads(pool)
	list, total, err := reads.ListReferrals(ctx, s.merchant.ID, referral.Filter{Limit: 50})
	if err != nil || total != len(want) {
		t.Fatalf("ListReferrals = %d, %v; want %d", total, err, len(want))
	}
	for _, l := range list {
		w := want[l.OrderID]
		if l.Status != w.status || l.RewardAmount != w.reward || !slices.Equal(l.ReviewReasons, w.reasons) && len(w.reasons)+len(l.ReviewReasons) > 0 ||
			l.ReviewRequired != (len(w.reasons) > 0) {
			t.Errorf("%s: %s reward %d review %v %v; want %s %d %v", l.OrderID, l.Status, l.RewardAmount, l.ReviewRequired, l.ReviewReasons, w.status, w.reward, w.reasons)
		}
	}
	var changes int
	for _, e := range book.Events {
		if e.Type == event.CreatorTierChanged {
			changes++
		}
	}
	if changes != 1 {
		t.Errorf("%d creator.tier_changed events in the batch, want 1 (Bronze → Silver)", changes)
	}

	yes, no := true, false
	held, heldTotal, err := reads.ListReferrals(ctx, s.merchant.ID, referral.Filter{ReviewRequired: &yes, Limit: 50})
	if err != nil || heldTotal != 2 || len(held) != 2 {
		t.Errorf("review queue = %d, %v; want o5 and p1", heldTotal, err)
	}
	if _, notHeld, _ := reads.ListReferrals(ctx, s.merchant.ID, referral.Filter{ReviewRequired: &no, Limit: 50}); notHeld != 5 {
		t.Errorf("review_required=false lists %d, want 5", notHeld)
	}
	due, err := postgres.NewSchedulerStore(pool).DueReferrals(ctx, now.Add(time.Hour), 100, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range due {
		if d.MerchantID == s.merchant.ID && (d.ReferralID == held[0].ID || d.ReferralID == held[1].ID) {
			t.Errorf("the sweep found a referral held for review")
		}
	}
}
