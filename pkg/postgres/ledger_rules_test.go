package postgres_test

import (
	"context"
	"slices"
	"strconv"
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
// rules and the creator tiers read — the campaign's thresholds (the
// creator velocity limit among them), the
// member's document and creator profile, the campaign's tiers and the
// member's referrals of the last hour and the month — and a batch with
// many sales of one member counts them one after another.
func TestLedgerLoadsRules(t *testing.T) {
	t.Parallel()
	pool := testenv.MustPool(t)
	ctx := context.Background()
	// m is a creator: the creator limit (3) applies to her, not the
	// members' (1), which would have held her 2nd sale of the hour.
	perHour, creatorPerHour, monthCap := 1, 3, int64(4000)
	c := campaign.Campaign{Name: "Regras", RewardType: campaign.RewardPercentage, RewardValue: 5, WarrantyDays: 0, IsActive: true,
		Rules: campaign.Rules{MaxReferralsPerHour: &perHour, MaxCreatorReferralsPerHour: &creatorPerHour, MaxRewardPerMonth: &monthCap,
			BlockDisposableEmails: true}}
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
	// (Silver 15 %, a tier change), the 4th: over the creator's 3 and
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

// TestLedgerKeepsMemberStats: the counts the fraud rules and tiers read
// are kept on the wallet between batches (ledger.MemberStats): velocity
// over separate batches and past the RecentKept times it keeps, the hour
// sliding on, the monthly cap freed by a reject, and a new month starting
// the cap again. CheckLedger compares what is kept with the referrals.
func TestLedgerKeepsMemberStats(t *testing.T) {
	t.Parallel()
	pool := testenv.MustPool(t)
	ctx := context.Background()
	perHour, monthCap := 3, int64(3000)
	c := campaign.Campaign{Name: "Contas", RewardType: campaign.RewardFixed, RewardValue: 1000, WarrantyDays: 7, IsActive: true,
		Rules: campaign.Rules{MaxReferralsPerHour: &perHour, MaxRewardPerMonth: &monthCap}}
	s := mustSeed(t, pool, c, 2)
	m, busy := s.members[0], s.members[1]
	now := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	clock := now
	store := postgres.NewLedgerStore(pool, func() time.Time { return clock })
	reads := postgres.NewReferralReads(pool)
	n := 0
	sell := func(memberID [16]byte) ledger.Command {
		n++
		id := "o" + strconv.Itoa(n)
		return ledger.Command{ID: id, Type: ledger.CmdCreditSale, MerchantID: s.merchant.ID, MemberID: memberID, IssuedAt: clock,
			Sale: sale(id, 10000, "buyer"+strconv.Itoa(n)+"@example.com", clock)}
	}
	held := func(book *ledger.Book) []string {
		var reasons []string
		for _, r := range book.NewReferrals {
			reasons = append(reasons, r.ReviewReasons...)
		}
		return reasons
	}
	check := func(what string) {
		t.Helper()
		if err := postgres.CheckLedger(ctx, pool); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}

	// Three sales in three batches within the hour, the 4th over it.
	for i := 0; i < 3; i++ {
		clock = now.Add(time.Duration(i) * 10 * time.Minute)
		if r := held(mustApply(t, store, sell(m.ID))); len(r) != 0 {
			t.Fatalf("sale %d held for %v", i+1, r)
		}
	}
	check("three sales")
	clock = now.Add(30 * time.Minute)
	fourth := mustApply(t, store, sell(m.ID))
	if r := held(fourth); !slices.Equal(r, []string{fraud.ReasonVelocity, fraud.ReasonMonthlyCap}) || fourth.NewReferrals[0].RewardAmount != 0 {
		t.Fatalf("4th sale of the hour: reasons %v reward %d; want velocity and the cap reached, 0", r, fourth.NewReferrals[0].RewardAmount)
	}
	// An hour after the 2nd, two of the hour are gone: room for one more,
	// but the month's cap is reached.
	clock = now.Add(71 * time.Minute)
	if r := held(mustApply(t, store, sell(m.ID))); !slices.Equal(r, []string{fraud.ReasonMonthlyCap}) {
		t.Fatalf("sale after the hour slid on: reasons %v, want the cap only", r)
	}
	// Rejecting a counted referral frees its 1000 of the cap.
	list, _, err := reads.ListReferrals(ctx, s.merchant.ID, referral.Filter{Limit: 50})
	if err != nil {
		t.Fatal(err)
	}
	first := list[len(list)-1]
	mustApply(t, store, ledger.Command{ID: "reject-1", Type: ledger.CmdReject, MerchantID: s.merchant.ID, MemberID: m.ID,
		IssuedAt: clock, ReferralID: first.ID, Reason: "test"})
	check("after the reject")
	clock = now.Add(3 * time.Hour)
	if b := mustApply(t, store, sell(m.ID)); len(held(b)) != 0 || b.NewReferrals[0].RewardAmount != 1000 {
		t.Fatalf("sale after the reject: reasons %v reward %d; want none, 1000", held(b), b.NewReferrals[0].RewardAmount)
	}
	// A new month: the cap starts again.
	clock = time.Date(2026, 12, 1, 0, 30, 0, 0, time.UTC)
	if b := mustApply(t, store, sell(m.ID)); len(held(b)) != 0 || b.NewReferrals[0].RewardAmount != 1000 {
		t.Fatalf("the month's 1st sale: reasons %v reward %d; want none, 1000", held(b), b.NewReferrals[0].RewardAmount)
	}
	check("a new month")

	// Past the times kept: with 100 an hour, 70 sales in one batch keep
	// RecentKept of them, and the next batch's 31st sale is the 101st.
	hundred := 100
	if _, err := pool.Exec(ctx, `UPDATE campaigns SET max_referrals_per_hour = $3, max_reward_per_month = NULL
WHERE merchant_id = $1 AND id = $2`, s.merchant.ID, s.campaign.ID, hundred); err != nil {
		t.Fatal(err)
	}
	clock = time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	var cmds []ledger.Command
	for i := 0; i < 70; i++ {
		cmds = append(cmds, sell(busy.ID))
	}
	if r := held(mustApply(t, store, cmds...)); len(r) != 0 {
		t.Fatalf("70 sales under 100 an hour held for %v", r)
	}
	clock = clock.Add(time.Minute)
	cmds = cmds[:0]
	for i := 0; i < 32; i++ {
		cmds = append(cmds, sell(busy.ID))
	}
	book := mustApply(t, store, cmds...)
	for i, r := range book.NewReferrals {
		if over := i >= 30; r.ReviewRequired != over {
			t.Errorf("sale %d of the hour: review %v, want %v", 71+i, r.ReviewRequired, over)
		}
	}
	check("past the times kept")
}

// TestLedgerCreatorVelocity: past the RecentKept referral times a wallet
// keeps, the store counts the hour's referrals only for a velocity limit
// above them. A creator the campaign leaves without a limit is never held
// and costs no count, though the members' limit is 20; once the campaign
// sets her one, her sale over it is held, counted past the kept times.
func TestLedgerCreatorVelocity(t *testing.T) {
	t.Parallel()
	pool := testenv.MustPool(t)
	ctx := context.Background()
	c := campaign.Campaign{Name: "Criadores", RewardType: campaign.RewardFixed, RewardValue: 1000, WarrantyDays: 7, IsActive: true,
		Rules: campaign.DefaultRules()}
	s := mustSeed(t, pool, c, 1)
	ana := s.members[0]
	if _, err := pool.Exec(ctx, `INSERT INTO creator_profiles (merchant_id, member_id, display_name, token_hash, token_enc)
VALUES ($1, $2, 'Ana', $3, '\x00')`, s.merchant.ID, ana.ID, creator.HashToken(creator.NewToken())); err != nil {
		t.Fatal(err)
	}
	clock := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	store := postgres.NewLedgerStore(pool, func() time.Time { return clock })
	n := 0
	sell := func(count int) *ledger.Book {
		t.Helper()
		var cmds []ledger.Command
		for range count {
			n++
			id := "c" + strconv.Itoa(n)
			cmds = append(cmds, ledger.Command{ID: id, Type: ledger.CmdCreditSale, MerchantID: s.merchant.ID, MemberID: ana.ID,
				IssuedAt: clock, Sale: sale(id, 10000, "buyer"+strconv.Itoa(n)+"@example.com", clock)})
		}
		clock = clock.Add(time.Minute)
		return mustApply(t, store, cmds...)
	}
	heldFrom := func(book *ledger.Book) int {
		for i, r := range book.NewReferrals {
			if r.ReviewRequired {
				return i
			}
		}
		return -1
	}

	sell(70)
	book := sell(40)
	if i := heldFrom(book); i >= 0 {
		t.Fatalf("creator without a limit: sale %d of the hour held for %v", 71+i, book.NewReferrals[i].ReviewReasons)
	}
	if got := book.Stats[ledger.ScopedID{MerchantID: s.merchant.ID, ID: ana.ID}].LastHour; got != ledger.RecentKept+40 {
		t.Errorf("creator without a limit: the hour's count is %d, want the kept %d and the batch's 40 (the store counted the hour)",
			got, ledger.RecentKept)
	}
	if _, err := pool.Exec(ctx, `UPDATE campaigns SET max_creator_referrals_per_hour = 150 WHERE merchant_id = $1 AND id = $2`,
		s.merchant.ID, s.campaign.ID); err != nil {
		t.Fatal(err)
	}
	book = sell(42)
	if i := heldFrom(book); i != 40 || !slices.Equal(book.NewReferrals[41].ReviewReasons, []string{fraud.ReasonVelocity}) {
		t.Errorf("creator limit 150 after 110 sales of the hour: held from the batch's sale %d (reasons %v), want its 41st, the 151st, for velocity",
			i+1, book.NewReferrals[len(book.NewReferrals)-1].ReviewReasons)
	}
	if err := postgres.CheckLedger(ctx, pool); err != nil {
		t.Fatal(err)
	}
}
