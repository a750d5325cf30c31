package ledger

import (
	"slices"
	"testing"

	"github.com/convida/convida/pkg/referral"
)

// TestWalletFigures runs sequences of commands through the Book and states
// the wallet figures (decision 18) and the public transaction statuses
// (decision 17) they end with. The fixture checks available + pending =
// totalEarned − totalRedeemed after every command.
func TestWalletFigures(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		run      func(f *fixture)
		want     figures
		wantTxns []string
	}{
		{"18: a credited sale is pending and earned; its credit is pending",
			func(f *fixture) { f.sale("o1", 10000) },
			figures{pending: 1000, earned: 1000}, []string{"credit:pending"}},
		{"17: a released credit becomes available",
			func(f *fixture) { f.sale("o1", 10000); f.release("o1") },
			figures{available: 1000, earned: 1000}, []string{"credit:available"}},
		{"17: a manually approved credit becomes available",
			func(f *fixture) { f.sale("o1", 10000); f.approve("o1") },
			figures{available: 1000, earned: 1000}, []string{"credit:available"}},
		{"17: a refund of a pending credit cancels it; it leaves earned for cancelled",
			func(f *fixture) { f.sale("o1", 10000); f.refund("o1") },
			figures{cancelled: 1000}, []string{"credit:cancelled"}},
		{"17: a rejected pending credit is cancelled",
			func(f *fixture) { f.sale("o1", 10000); f.reject("o1") },
			figures{cancelled: 1000}, []string{"credit:cancelled"}},
		{"17: a rejected approved credit is reversed",
			func(f *fixture) { f.sale("o1", 10000); f.release("o1"); f.reject("o1") },
			figures{cancelled: 1000}, []string{"credit:reversed"}},
		{"17: a refunded approved credit is reversed",
			func(f *fixture) { f.sale("o1", 10000); f.release("o1"); f.refund("o1") },
			figures{cancelled: 1000}, []string{"credit:reversed"}},
		{"17: a debit is processing until the platform answers; available drops at once",
			func(f *fixture) { f.sale("o1", 10000); f.release("o1"); f.redeem(600) },
			figures{available: 400, earned: 1000, redeemed: 600}, []string{"credit:available", "debit:processing"}},
		{"17: a completed redemption leaves its debit used",
			func(f *fixture) {
				f.sale("o1", 10000)
				f.release("o1")
				_, id := f.redeem(600)
				f.redemptionResult(id, true)
			},
			figures{available: 400, earned: 1000, redeemed: 600}, []string{"credit:available", "debit:used"}},
		{"17: a failed redemption cancels its debit and returns the money",
			func(f *fixture) {
				f.sale("o1", 10000)
				f.release("o1")
				_, id := f.redeem(600)
				f.redemptionResult(id, false)
			},
			figures{available: 1000, earned: 1000}, []string{"credit:available", "debit:cancelled"}},
		{"18: a refund after a partial redemption reverses only what is available",
			func(f *fixture) {
				f.sale("o1", 10000)
				f.release("o1")
				_, id := f.redeem(600)
				f.redemptionResult(id, true)
				f.refund("o1")
			},
			figures{earned: 600, redeemed: 600, cancelled: 400}, []string{"credit:reversed", "debit:used"}},
		{"18: pending and available add up across sales; redeeming all takes only the available",
			func(f *fixture) {
				f.sale("o1", 10000)
				f.sale("o2", 5000)
				f.release("o1")
				f.redeem(0)
			},
			figures{pending: 500, earned: 1500, redeemed: 1000}, []string{"credit:available", "credit:pending", "debit:processing"}},
		{"18: a self-referral and a sale on an inactive campaign move no figure",
			func(f *fixture) {
				f.apply(Command{Type: CmdCreditSale, Sale: &Sale{Source: "guru", OrderID: "self", Amount: 10000,
					BuyerEmail: f.m.Email, PaidAt: t0}})
				f.c.IsActive = false
				f.sale("o2", 10000)
			},
			figures{}, nil},
		{"18: a refund before its sale, then the sale: no figure moves",
			func(f *fixture) { f.refund("o1"); f.sale("o1", 10000) },
			figures{}, nil},
		{"18: a zero reward creates no transaction and moves no figure",
			func(f *fixture) { f.sale("o1", 5); f.release("o1"); f.refund("o1") },
			figures{}, nil},
		{"18: a repeated command moves the money once",
			func(f *fixture) {
				sale := Command{ID: "same", Type: CmdCreditSale, Sale: &Sale{Source: "guru", OrderID: "o1", Amount: 10000, PaidAt: t0}}
				f.apply(sale)
				f.apply(sale)
			},
			figures{pending: 1000, earned: 1000}, []string{"credit:pending"}},
		{"18: refused commands move no figure",
			func(f *fixture) {
				f.sale("o1", 10000)
				f.release("o1")
				f.approve("o1")  // 409
				f.redeem(5000)   // insufficient balance
				f.release("o1")  // already approved
				f.refund("none") // refund before sale: recorded, no money
			},
			figures{available: 1000, earned: 1000}, []string{"credit:available"}},
		{"18: a long history keeps every figure",
			func(f *fixture) {
				f.sale("o1", 10000) // +1000 pending
				f.sale("o2", 20000) // +2000 pending
				f.sale("o3", 30000) // +3000 pending
				f.release("o1")     // 1000 available
				f.approve("o2")     // 3000 available
				_, a := f.redeem(2500)
				f.redemptionResult(a, true) // 500 available, 2500 redeemed
				_, b := f.redeem(500)
				f.redemptionResult(b, false) // returned
				f.reject("o3")               // pending 3000 cancelled
				f.refund("o2")               // 500 of 2000 recovered
			},
			figures{earned: 2500, redeemed: 2500, cancelled: 3500},
			[]string{"credit:available", "credit:reversed", "credit:cancelled", "debit:used", "debit:cancelled"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			tt.run(f)
			if got := f.figures(); got != tt.want {
				t.Errorf("figures %+v, want %+v", got, tt.want)
			}
			if got := f.txns(); !slices.Equal(got, tt.wantTxns) {
				t.Errorf("transactions %v, want %v", got, tt.wantTxns)
			}
		})
	}
}

// TestUnrecoveredAmount states where the part of a reversed reward that
// was already redeemed goes: onto the referral, never below zero.
func TestUnrecoveredAmount(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		redeemed int64
		want     int64
	}{
		{"16: a refund with the reward still available leaves no unrecovered_amount", 0, 0},
		{"16: a refund after part of the reward was redeemed records the rest as unrecovered_amount", 600, 600},
		{"16: a refund after all of the reward was redeemed records it all as unrecovered_amount", 1000, 1000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			f.sale("o1", 10000)
			f.release("o1")
			if tt.redeemed > 0 {
				f.redeem(tt.redeemed)
			}
			f.refund("o1")
			r := f.referral("o1")
			if r.Status != referral.StatusCancelled || r.UnrecoveredAmount != tt.want {
				t.Errorf("referral %s unrecovered %d, want cancelled %d", r.Status, r.UnrecoveredAmount, tt.want)
			}
			if w := f.wallet(); w.Available != 0 || w.Cancelled != 1000-tt.want {
				t.Errorf("available %d cancelled %d, want 0 %d", w.Available, w.Cancelled, 1000-tt.want)
			}
		})
	}
}
