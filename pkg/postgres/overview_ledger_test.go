package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/ledger"
	"github.com/convida/convida/pkg/postgres"
	"github.com/convida/convida/pkg/redemption"
	"github.com/convida/convida/pkg/report"
	"github.com/convida/convida/pkg/testenv"
)

// TestOverviewMatchesWalletsAndLedger: a merchant's history made by the
// real ledger store (sales; releases; refunds before and after release;
// a refund after part of the reward was redeemed; a rejection after an
// approval), then the overview's reward figures compared with SQL sums
// over the ledger entries of the referrals of the same range and, for a
// range that holds every referral, with the sums of the wallets.
func TestOverviewMatchesWalletsAndLedger(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := testenv.MustPool(t)
	s := mustSeed(t, pool, testenv.FixedCampaign(1000, 7), 3)
	ana, bia, cris := s.members[0].ID, s.members[1].ID, s.members[2].ID
	zone, err := report.LoadZone("")
	if err != nil {
		t.Fatal(err)
	}
	day0 := time.Date(2026, 10, 1, 15, 0, 0, 0, zone)
	now := day0
	store := postgres.NewLedgerStore(pool, func() time.Time { return now })
	apply := func(memberID uuid.UUID, cmd ledger.Command) {
		t.Helper()
		cmd.MerchantID, cmd.MemberID, cmd.IssuedAt = s.merchant.ID, memberID, now
		if cmd.ID == "" {
			cmd.ID = "cmd-" + uuid.NewString()
		}
		book := mustApply(t, store, cmd)
		if len(book.Outcomes) != 1 || book.Outcomes[0].Status != ledger.OutcomeApplied {
			t.Fatalf("%s: outcomes %+v, want applied", cmd.Type, book.Outcomes)
		}
	}
	referrals := map[string]uuid.UUID{}
	saleOf := func(memberID uuid.UUID, order string) {
		t.Helper()
		apply(memberID, ledger.Command{Type: ledger.CmdCreditSale, Sale: sale(order, 10000, order+"@buyer.example", now)})
		var id uuid.UUID
		if err := pool.QueryRow(ctx, `SELECT id FROM referrals WHERE merchant_id = $1 AND order_id = $2`, s.merchant.ID, order).
			Scan(&id); err != nil {
			t.Fatalf("the sale of %s made no referral: %v", order, err)
		}
		referrals[order] = id
	}
	refund := func(memberID uuid.UUID, order string) {
		apply(memberID, ledger.Command{Type: ledger.CmdRefund, Sale: sale(order, 10000, order+"@buyer.example", now)})
	}
	release := func(memberID uuid.UUID, order string) {
		apply(memberID, ledger.Command{Type: ledger.CmdRelease, ReferralID: referrals[order]})
	}

	// Day 0: an old sale, released after its warranty.
	saleOf(ana, "old")
	// Day 40: the range's sales (reward R$ 10,00 each).
	now = day0.AddDate(0, 0, 40)
	for _, o := range []string{"pending", "released", "cancelled", "reversed", "rejected", "approved-rejected"} {
		saleOf(ana, o)
	}
	saleOf(bia, "part-redeemed")
	saleOf(cris, "cris-released")
	refund(ana, "cancelled") // refund before release: cancelled
	apply(ana, ledger.Command{Type: ledger.CmdReject, ReferralID: referrals["rejected"], Reason: "fraud"})
	apply(ana, ledger.Command{Type: ledger.CmdApprove, ReferralID: referrals["approved-rejected"]})
	apply(ana, ledger.Command{Type: ledger.CmdReject, ReferralID: referrals["approved-rejected"], Reason: "fraud"}) // reversed in full
	// Day 48: warranties over.
	now = day0.AddDate(0, 0, 48)
	for _, o := range []string{"old", "released", "reversed"} {
		release(ana, o)
	}
	release(bia, "part-redeemed")
	release(cris, "cris-released")
	apply(bia, ledger.Command{Type: ledger.CmdRedeem, Redeem: &ledger.Redeem{RedemptionID: uuid.New(), Amount: 600, Type: redemption.TypeStoreCredit}})
	refund(ana, "reversed")      // after release: reversed
	refund(bia, "part-redeemed") // after release, R$ 6,00 already redeemed: R$ 4,00 reversed, R$ 6,00 unrecovered
	now = day0.AddDate(0, 0, 50)

	// What the ledger says of the referrals created in [from, to).
	type sums struct{ credited, released, reversed, cancelled int64 }
	ledgerSums := func(from, to time.Time) sums {
		t.Helper()
		var l sums
		if err := pool.QueryRow(ctx, `SELECT
  COALESCE(sum(e.amount) FILTER (WHERE e.type = 'credit'), 0),
  COALESCE(sum(e.amount) FILTER (WHERE e.type = 'release'), 0) - COALESCE(sum(e.amount) FILTER (WHERE e.type = 'adjustment'), 0),
  COALESCE(sum(e.amount) FILTER (WHERE e.type = 'adjustment'), 0),
  COALESCE(sum(e.amount) FILTER (WHERE e.type = 'cancel'), 0)
FROM ledger_entries e JOIN referrals r ON r.merchant_id = e.merchant_id AND r.id = e.reference_id
WHERE e.merchant_id = $1 AND e.reference_type = 'referral' AND r.created_at >= $2 AND r.created_at < $3`,
			s.merchant.ID, from, to).Scan(&l.credited, &l.released, &l.reversed, &l.cancelled); err != nil {
			t.Fatal(err)
		}
		return l
	}
	figures := func(r report.Range) report.Figures {
		t.Helper()
		o, err := postgres.NewOverviewReads(pool).Overview(ctx, s.merchant.ID, r, report.MetricRewardsReleased)
		if err != nil {
			t.Fatal(err)
		}
		var series int64
		for _, p := range o.Series {
			series += p.Value
		}
		if series != o.Figures.RewardsReleased {
			t.Errorf("%v: the rewards-released series sums to %d, the card says %d", r.From, series, o.Figures.RewardsReleased)
		}
		return o.Figures
	}
	check := func(name string, r report.Range, want sums) report.Figures {
		t.Helper()
		f := figures(r)
		got := sums{f.RewardsCredited, f.RewardsReleased, f.RewardsReversed, f.RewardsCancelled}
		if l := ledgerSums(r.From, r.To); got != l || got != want {
			t.Errorf("%s: overview (credited, released, reversed, cancelled) = %+v, ledger %+v, want %+v", name, got, l, want)
		}
		return f
	}

	// The last 30 days: the old sale is out. Released: "released" and
	// "cris-released", and the
	// R$ 6,00 the part-redeemed reversal could not take back.
	last30, err := report.LastDays(now, 30, zone)
	if err != nil {
		t.Fatal(err)
	}
	check("last 30 days", last30, sums{credited: 8000, released: 1000 + 1000 + 600, reversed: 1000 + 1000 + 400, cancelled: 1000 + 1000})

	// Every day of the history: the wallets agree.
	all, err := report.Days(day0.Format(time.DateOnly), now.Format(time.DateOnly), zone)
	if err != nil {
		t.Fatal(err)
	}
	f := check("whole history", all, sums{credited: 9000, released: 3600, reversed: 2400, cancelled: 2000})
	var pending, released, takenBack int64
	if err := pool.QueryRow(ctx, `SELECT COALESCE(sum(pending), 0), COALESCE(sum(available + total_redeemed), 0), COALESCE(sum(cancelled), 0)
FROM wallets WHERE merchant_id = $1`, s.merchant.ID).Scan(&pending, &released, &takenBack); err != nil {
		t.Fatal(err)
	}
	if f.PendingInWarranty != pending || f.RewardsReleased != released || f.RewardsReversed+f.RewardsCancelled != takenBack ||
		f.RewardsCredited != pending+released+takenBack {
		t.Errorf("whole history: pending %d, released %d, reversed %d + cancelled %d, credited %d; the wallets: pending %d, available+redeemed %d, cancelled %d",
			f.PendingInWarranty, f.RewardsReleased, f.RewardsReversed, f.RewardsCancelled, f.RewardsCredited, pending, released, takenBack)
	}
	if err := postgres.CheckLedger(ctx, pool); err != nil {
		t.Fatal(err)
	}
}
