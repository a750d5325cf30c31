package ledger

import (
	"testing"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/member"
	"github.com/convida/convida/pkg/redemption"
)

func TestRedeemAmount(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name                 string
		requested, available int64
		minRedemption        int64
		want                 int64
		wantErr              apperr.Code
	}{
		{"19: an amount within available is debited as asked", 500, 1000, 0, 500, ""},
		{"19: one cent is the smallest redemption", 1, 1000, 0, 1, ""},
		{"19: the whole available balance can be redeemed", 1000, 1000, 0, 1000, ""},
		{"19: 0 (admin amount null) redeems all that is available", 0, 1000, 0, 1000, ""},
		{"19: more than available is insufficient_balance", 1001, 1000, 0, 0, apperr.InsufficientBalance},
		{"19: a negative amount is insufficient_balance", -5, 1000, 0, 0, apperr.InsufficientBalance},
		{"19: with no balance, all-available redeems nothing: insufficient_balance", 0, 0, 0, 0, apperr.InsufficientBalance},
		{"19: with no balance, any amount is insufficient_balance", 100, 0, 0, 0, apperr.InsufficientBalance},
		{"19: below the campaign's min_redemption is refused", 500, 1000, 600, 0, apperr.BelowMinRedemption},
		{"19: exactly the campaign's min_redemption is allowed", 600, 1000, 600, 600, ""},
		{"19: all available below min_redemption is refused", 0, 500, 600, 0, apperr.BelowMinRedemption},
		{"19: the balance is checked before the minimum", 2000, 1000, 5000, 0, apperr.InsufficientBalance},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := RedeemAmount(tt.requested, tt.available, tt.minRedemption)
			if got != tt.want || apperr.CodeOf(err) != tt.wantErr {
				t.Errorf("RedeemAmount(%d, %d, %d) = %d, %v; want %d, %q",
					tt.requested, tt.available, tt.minRedemption, got, err, tt.want, tt.wantErr)
			}
		})
	}
}

// TestRedeem states what a redeem command records in the Book.
func TestRedeem(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name          string
		memberStatus  string
		minRedemption int64
		amount        int64
		wantStatus    string
		wantCode      apperr.Code
		wantAvailable int64
	}{
		{"19: a redeem debits at once and creates the redemption pending", member.StatusActive, 0, 300, OutcomeApplied, "", 700},
		{"19: the campaign's min_redemption applies to the command", member.StatusActive, 500, 300, OutcomeRejected, apperr.BelowMinRedemption, 1000},
		{"19: a redeem beyond available is refused and debits nothing", member.StatusActive, 0, 1300, OutcomeRejected, apperr.InsufficientBalance, 1000},
		{"19: a blocked member cannot redeem (409 invalid_state)", member.StatusBlocked, 0, 300, OutcomeRejected, apperr.InvalidState, 1000},
		{"19: an inactive member cannot redeem (409 invalid_state)", member.StatusInactive, 0, 300, OutcomeRejected, apperr.InvalidState, 1000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			f.sale("o1", 10000)
			f.release("o1")
			f.m.Status, f.c.MinRedemption = tt.memberStatus, tt.minRedemption
			out, id := f.redeem(tt.amount)
			if out.Status != tt.wantStatus || out.ErrorCode != string(tt.wantCode) {
				t.Errorf("outcome %s %q (%s), want %s %q", out.Status, out.ErrorCode, out.Reason, tt.wantStatus, tt.wantCode)
			}
			if got := f.wallet().Available; got != tt.wantAvailable {
				t.Errorf("available %d, want %d", got, tt.wantAvailable)
			}
			red := f.b.Redemptions[ScopedID{f.m.MerchantID, id}]
			if (red != nil) != (tt.wantStatus == OutcomeApplied) {
				t.Fatalf("redemption %+v, want one only when applied", red)
			}
			if red != nil && (red.Status != redemption.StatusPending || red.Amount != tt.amount) {
				t.Errorf("redemption %s of %d, want pending of %d", red.Status, red.Amount, tt.amount)
			}
		})
	}
}

// TestRedemptionResult states how the platform's answer ends a redemption.
func TestRedemptionResult(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		success    bool
		twice      bool
		wantStatus string
		wantOut    string
	}{
		{"19: success completes the redemption", true, false, redemption.StatusCompleted, OutcomeApplied},
		{"19: failure after retries fails the redemption", false, false, redemption.StatusFailed, OutcomeApplied},
		{"19: a second result for a finished redemption changes nothing", false, true, redemption.StatusCompleted, OutcomeNoop},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			f.sale("o1", 10000)
			f.release("o1")
			_, id := f.redeem(400)
			out := f.redemptionResult(id, tt.success || tt.twice)
			if tt.twice {
				out = f.redemptionResult(id, tt.success)
			}
			red := f.b.Redemptions[ScopedID{f.m.MerchantID, id}]
			if out.Status != tt.wantOut || red.Status != tt.wantStatus {
				t.Errorf("outcome %s, redemption %s; want %s, %s", out.Status, red.Status, tt.wantOut, tt.wantStatus)
			}
		})
	}
}
