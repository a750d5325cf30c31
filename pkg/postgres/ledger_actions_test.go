package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/campaign"
	"github.com/convida/convida/pkg/ledger"
	"github.com/convida/convida/pkg/postgres"
	"github.com/convida/convida/pkg/redemption"
	"github.com/convida/convida/pkg/testenv"
)

// actionsFixture is a member with one pending referral of reward 1000.
type actionsFixture struct {
	s        seeded
	store    *postgres.LedgerStore
	reads    *postgres.WalletReads
	referral uuid.UUID
	n        int
}

func newActionsFixture(t *testing.T, minRedemption int64) *actionsFixture {
	pool := testenv.MustPool(t)
	now := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	f := &actionsFixture{
		s: mustSeed(t, pool, campaign.Campaign{Name: "Fixo", RewardType: campaign.RewardFixed, RewardValue: 1000,
			WarrantyDays: 7, MinRedemption: minRedemption, IsActive: true}, 1),
		store: postgres.NewLedgerStore(pool, func() time.Time { return now }),
		reads: postgres.NewWalletReads(pool),
	}
	f.sale(t, "o1")
	refs, _ := f.reads.ListMemberReferrals(context.Background(), f.s.merchant.ID, f.s.members[0].ID)
	f.referral = refs[0].ID
	return f
}

func (f *actionsFixture) sale(t *testing.T, order string) {
	t.Helper()
	m := f.s.members[0]
	f.apply(t, ledger.Command{ID: "sale:" + order, Type: ledger.CmdCreditSale, Sale: sale(order, 9790, "b@example.com", time.Now())}, m.ID)
}

// apply applies cmd for the member and returns its outcome.
func (f *actionsFixture) apply(t *testing.T, cmd ledger.Command, memberID uuid.UUID) ledger.Outcome {
	t.Helper()
	f.n++
	if cmd.ID == "" {
		cmd.ID = "cmd-" + uuid.NewString()
	}
	cmd.MerchantID, cmd.MemberID, cmd.IssuedAt = f.s.merchant.ID, memberID, time.Now()
	book := mustApply(t, f.store, cmd)
	if len(book.Outcomes) != 1 {
		t.Fatalf("outcomes = %+v", book.Outcomes)
	}
	return book.Outcomes[0]
}

func (f *actionsFixture) do(t *testing.T, typ string, edit func(*ledger.Command)) ledger.Outcome {
	t.Helper()
	cmd := ledger.Command{Type: typ, ReferralID: f.referral}
	if edit != nil {
		edit(&cmd)
	}
	return f.apply(t, cmd, f.s.members[0].ID)
}

func wantOutcome(t *testing.T, o ledger.Outcome, status string, code apperr.Code) {
	t.Helper()
	if o.Status != status || o.ErrorCode != string(code) {
		t.Fatalf("outcome = %s/%s (%s), want %s/%s", o.Status, o.ErrorCode, o.Reason, status, code)
	}
}

func TestApproveAndRejectTransitions(t *testing.T) {
	t.Parallel()
	reject := func(c *ledger.Command) { c.Reason = "fraud"; c.Notes = "checked" }
	t.Run("pending→approved, then approve again is invalid_state, then reject reverses", func(t *testing.T) {
		t.Parallel()
		f := newActionsFixture(t, 0)
		wantOutcome(t, f.do(t, ledger.CmdApprove, func(c *ledger.Command) { c.Notes = "ok" }), ledger.OutcomeApplied, "")
		wantWallet(t, f.reads, f.s, f.s.members[0].ID, ledger.Wallet{Available: 1000, TotalEarned: 1000})
		wantOutcome(t, f.do(t, ledger.CmdApprove, nil), ledger.OutcomeRejected, apperr.InvalidState)
		wantOutcome(t, f.do(t, ledger.CmdReject, reject), ledger.OutcomeApplied, "")
		wantWallet(t, f.reads, f.s, f.s.members[0].ID, ledger.Wallet{Cancelled: 1000})
		wantOutcome(t, f.do(t, ledger.CmdReject, reject), ledger.OutcomeRejected, apperr.InvalidState)
		wantOutcome(t, f.do(t, ledger.CmdApprove, nil), ledger.OutcomeRejected, apperr.InvalidState)
	})
	t.Run("pending→rejected cancels the credit", func(t *testing.T) {
		t.Parallel()
		f := newActionsFixture(t, 0)
		wantOutcome(t, f.do(t, ledger.CmdReject, reject), ledger.OutcomeApplied, "")
		wantWallet(t, f.reads, f.s, f.s.members[0].ID, ledger.Wallet{Cancelled: 1000})
		txns, _ := f.reads.ListTransactions(context.Background(), f.s.merchant.ID, f.s.members[0].ID)
		if txns[0].Status != ledger.TxnCancelled {
			t.Errorf("credit status = %s, want cancelled", txns[0].Status)
		}
	})
	t.Run("approved→rejected refused once part was redeemed", func(t *testing.T) {
		t.Parallel()
		f := newActionsFixture(t, 0)
		f.do(t, ledger.CmdApprove, nil)
		wantOutcome(t, f.do(t, ledger.CmdRedeem, func(c *ledger.Command) {
			c.Redeem = &ledger.Redeem{RedemptionID: uuid.New(), Amount: 300, Type: redemption.TypeStoreCredit}
		}), ledger.OutcomeApplied, "")
		wantOutcome(t, f.do(t, ledger.CmdReject, reject), ledger.OutcomeRejected, apperr.InvalidState)
		wantWallet(t, f.reads, f.s, f.s.members[0].ID, ledger.Wallet{Available: 700, TotalEarned: 1000, TotalRedeemed: 300})
	})
	t.Run("another member's referral is not found", func(t *testing.T) {
		t.Parallel()
		f := newActionsFixture(t, 0)
		wantOutcome(t, f.do(t, ledger.CmdApprove, func(c *ledger.Command) { c.ReferralID = uuid.New() }), ledger.OutcomeRejected, apperr.NotFound)
	})
}

func TestRedeemAndResult(t *testing.T) {
	t.Parallel()
	f := newActionsFixture(t, 200)
	f.do(t, ledger.CmdApprove, nil)
	redeem := func(amount int64) (uuid.UUID, ledger.Outcome) {
		id := uuid.New()
		return id, f.do(t, ledger.CmdRedeem, func(c *ledger.Command) {
			c.Redeem = &ledger.Redeem{RedemptionID: id, Amount: amount, Type: redemption.TypeSubscriptionDiscount, SubscriptionID: "sub_1"}
		})
	}
	result := func(id uuid.UUID, ok bool, suffix string) ledger.Outcome {
		return f.do(t, ledger.CmdRedemptionResult, func(c *ledger.Command) {
			c.ID = ledger.ResultCommandID(id) + suffix
			c.Result = &redemption.Outcome{RedemptionID: id, Success: ok, FailureReason: "refused",
				Result: redemption.Result{AppliedCycles: 1}}
		})
	}
	m := f.s.members[0].ID
	_, o := redeem(1001)
	wantOutcome(t, o, ledger.OutcomeRejected, apperr.InsufficientBalance)
	_, o = redeem(199)
	wantOutcome(t, o, ledger.OutcomeRejected, apperr.BelowMinRedemption)

	ok, o := redeem(400)
	wantOutcome(t, o, ledger.OutcomeApplied, "")
	wantWallet(t, f.reads, f.s, m, ledger.Wallet{Available: 600, TotalEarned: 1000, TotalRedeemed: 400})
	wantOutcome(t, result(ok, true, ""), ledger.OutcomeApplied, "")
	if book := mustApply(t, f.store, ledger.Command{ID: ledger.ResultCommandID(ok), Type: ledger.CmdRedemptionResult,
		MerchantID: f.s.merchant.ID, MemberID: m, Result: &redemption.Outcome{RedemptionID: ok}}); len(book.Outcomes) != 0 {
		t.Errorf("redelivered result: outcomes %+v, want none", book.Outcomes)
	}
	wantOutcome(t, result(ok, false, ":late"), ledger.OutcomeNoop, "") // a late failure changes nothing

	failed, _ := redeem(0) // everything available: 600
	wantWallet(t, f.reads, f.s, m, ledger.Wallet{TotalEarned: 1000, TotalRedeemed: 1000})
	wantOutcome(t, result(failed, false, ""), ledger.OutcomeApplied, "")
	wantWallet(t, f.reads, f.s, m, ledger.Wallet{Available: 600, TotalEarned: 1000, TotalRedeemed: 400})

	txns, _ := f.reads.ListTransactions(context.Background(), f.s.merchant.ID, m)
	got := map[int64]string{}
	for _, tx := range txns {
		if tx.Type == ledger.TxnDebit {
			got[tx.Amount] = tx.Status
		}
	}
	if got[400] != ledger.TxnUsed || got[600] != ledger.TxnCancelled {
		t.Errorf("debits = %v, want 400 used and 600 cancelled", got)
	}
	if err := postgres.CheckLedger(context.Background(), f.s.pool); err != nil {
		t.Error(err)
	}
}
