package ledger

import (
	"fmt"
	"slices"
	"testing"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/event"
	"github.com/convida/convida/pkg/ids"
)

// moneyEvent is what a merchant mirroring a wallet reads of an event:
// its type, the amount, what it belongs to and the balance after it.
type moneyEvent struct {
	typ       string
	txnType   string // wallet.*: the ledger entry's type
	amount    int64
	reference string // ref_… or red_…
	pending   int64  // balance_after
	available int64
}

func (e moneyEvent) String() string {
	return fmt.Sprintf("%s %s %d %s → %d/%d", e.typ, e.txnType, e.amount, e.reference, e.pending, e.available)
}

// moneyEvents returns the money events among events (wallet.* and
// referral.approved), as a receiver would read them.
func moneyEvents(events []Event) []moneyEvent {
	var out []moneyEvent
	for _, e := range events {
		switch d := e.Data.(type) {
		case WalletEventData:
			out = append(out, moneyEvent{typ: e.Type, txnType: d.Transaction.Type, amount: d.Transaction.Amount,
				reference: d.Transaction.ReferenceID, pending: d.Wallet.Pending, available: d.Wallet.Available})
		case ReferralApprovedData:
			out = append(out, moneyEvent{typ: e.Type, amount: d.RewardAmount, reference: d.ID,
				pending: d.BalanceAfter.Pending, available: d.BalanceAfter.Available})
		}
	}
	return out
}

// mirror applies a money event to a balance as docs/webhooks.md tells a
// receiver to, from the amount alone: a credit's credit and a pending
// credit's cancel move pending, every other entry moves available, and a
// release moves reward_amount from pending to available.
func mirror(pending, available int64, e moneyEvent) (int64, int64) {
	sign := int64(1)
	if e.typ == event.WalletDebited {
		sign = -1
	}
	switch {
	case e.typ == event.ReferralApproved:
		return pending - e.amount, available + e.amount
	case e.txnType == EntryCredit, e.txnType == EntryCancel && e.typ == event.WalletDebited:
		return pending + sign*e.amount, available
	}
	return pending, available + sign*e.amount
}

// TestEveryMoveHasItsEvent states the money event of each movement of the
// wallet (issue 10): money in is wallet.credited, money out (from pending
// or available) is wallet.debited, a release is referral.approved; each
// with its amount, its referral or redemption and the balance after it.
func TestEveryMoveHasItsEvent(t *testing.T) {
	t.Parallel()
	ref := func(f *fixture) string { return ids.Format(ids.Referral, f.referral("o1").ID) }
	tests := []struct {
		name string
		// run applies the history; the events of its last command are
		// checked. It returns the reference the events must carry.
		run  func(f *fixture) string
		want []moneyEvent // reference filled in from run
	}{
		{"a credited sale: wallet.credited into pending",
			func(f *fixture) string { f.sale("o1", 10000); return ref(f) },
			[]moneyEvent{{typ: event.WalletCredited, txnType: EntryCredit, amount: 1000, pending: 1000}}},
		{"a release after the warranty: referral.approved, pending → available",
			func(f *fixture) string { f.sale("o1", 10000); f.release("o1"); return ref(f) },
			[]moneyEvent{{typ: event.ReferralApproved, amount: 1000, available: 1000}}},
		{"a manual approval: referral.approved, pending → available",
			func(f *fixture) string { f.sale("o1", 10000); f.sale("o2", 20000); f.approve("o1"); return ref(f) },
			[]moneyEvent{{typ: event.ReferralApproved, amount: 1000, pending: 2000, available: 1000}}},
		{"a refund while pending: wallet.debited out of pending",
			func(f *fixture) string { f.sale("o1", 10000); f.refund("o1"); return ref(f) },
			[]moneyEvent{{typ: event.WalletDebited, txnType: EntryCancel, amount: 1000}}},
		{"a reject while pending: wallet.debited out of pending",
			func(f *fixture) string { f.sale("o1", 10000); f.reject("o1"); return ref(f) },
			[]moneyEvent{{typ: event.WalletDebited, txnType: EntryCancel, amount: 1000}}},
		{"a refund after approval: wallet.debited out of available",
			func(f *fixture) string { f.sale("o1", 10000); f.release("o1"); f.refund("o1"); return ref(f) },
			[]moneyEvent{{typ: event.WalletDebited, txnType: EntryAdjustment, amount: 1000}}},
		{"a refund after approval and a partial redemption: wallet.debited of what is recovered",
			func(f *fixture) string {
				f.sale("o1", 10000)
				f.release("o1")
				f.redeem(600)
				f.refund("o1")
				return ref(f)
			},
			[]moneyEvent{{typ: event.WalletDebited, txnType: EntryAdjustment, amount: 400}}},
		{"a refund after all was redeemed: nothing recovered, no money event",
			func(f *fixture) string {
				f.sale("o1", 10000)
				f.release("o1")
				f.redeem(0)
				f.refund("o1")
				return ref(f)
			},
			nil},
		{"a reject after approval: wallet.debited out of available",
			func(f *fixture) string { f.sale("o1", 10000); f.approve("o1"); f.reject("o1"); return ref(f) },
			[]moneyEvent{{typ: event.WalletDebited, txnType: EntryAdjustment, amount: 1000}}},
		{"a redemption: wallet.debited out of available",
			func(f *fixture) string {
				f.sale("o1", 10000)
				f.release("o1")
				_, id := f.redeem(600)
				return ids.Format(ids.Redemption, id)
			},
			[]moneyEvent{{typ: event.WalletDebited, txnType: EntryDebit, amount: 600, available: 400}}},
		{"a failed redemption: wallet.credited, the money back in available",
			func(f *fixture) string {
				f.sale("o1", 10000)
				f.release("o1")
				_, id := f.redeem(600)
				f.redemptionResult(id, false)
				return ids.Format(ids.Redemption, id)
			},
			[]moneyEvent{{typ: event.WalletCredited, txnType: EntryCancel, amount: 600, available: 1000}}},
		{"a completed redemption moves nothing: no money event",
			func(f *fixture) string {
				f.sale("o1", 10000)
				f.release("o1")
				_, id := f.redeem(600)
				f.redemptionResult(id, true)
				return ids.Format(ids.Redemption, id)
			},
			nil},
		{"a zero reward: referral.approved moving nothing",
			func(f *fixture) string { f.sale("o1", 5); f.approve("o1"); return ref(f) },
			[]moneyEvent{{typ: event.ReferralApproved}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			reference := tt.run(f)
			want := slices.Clone(tt.want)
			for i := range want {
				want[i].reference = reference
			}
			if got := moneyEvents(f.events); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("money events\n got %v\nwant %v", got, want)
			}
		})
	}
}

// TestMirrorFromMoneyEvents replays the money events of a long history, one
// command at a time, the way a merchant's receiver would: the balance
// rebuilt from the amounts alone equals the wallet after every command, and
// each event's balance_after equals the rebuilt balance at that point.
func TestMirrorFromMoneyEvents(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	var redemptions []uuid.UUID
	redeem := func(amount int64) { _, id := f.redeem(amount); redemptions = append(redemptions, id) }
	steps := []func(){
		func() { f.sale("o1", 10000) },
		func() { f.sale("o2", 20000) },
		func() { f.sale("o3", 30000) },
		func() { f.sale("o4", 40000) },
		func() { f.sale("o5", 50000) },
		func() { f.release("o1") },
		func() { f.approve("o2") },
		func() { f.approve("o5") },
		func() { redeem(2500) },
		func() { f.redemptionResult(redemptions[0], true) },
		func() { redeem(1000) },
		func() { f.redemptionResult(redemptions[1], false) },
		func() { f.refund("o3") },      // pending: cancelled
		func() { f.reject("o4") },      // pending: cancelled
		func() { f.reject("o5") },      // approved, covered: reversed
		func() { f.refund("o2") },      // approved: reversed up to available
		func() { f.refund("o9") },      // before its sale: no money
		func() { f.sale("o9", 10000) }, // after its refund: no money
		func() { f.sale("o6", 10000) },
		func() { f.approve("o6") },
		func() { redeem(0) },
		func() { f.refund("o6") }, // nothing left to recover
		func() { f.redemptionResult(redemptions[2], false) },
	}
	var pending, available int64
	for i, step := range steps {
		step()
		for _, e := range moneyEvents(f.events) {
			pending, available = mirror(pending, available, e)
			if e.pending != pending || e.available != available {
				t.Errorf("step %d: %v: balance_after %d/%d, rebuilt %d/%d", i, e, e.pending, e.available, pending, available)
			}
		}
		if w := f.wallet(); w.Pending != pending || w.Available != available {
			t.Fatalf("step %d: wallet %d/%d, rebuilt from events %d/%d", i, w.Pending, w.Available, pending, available)
		}
	}
	if w := f.wallet(); w.Available == 0 && w.Pending == 0 && w.TotalRedeemed == 0 {
		t.Errorf("the history ended with nothing to mirror: %+v", w)
	}
}
