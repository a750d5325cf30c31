package ledger

import (
	"slices"
	"testing"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/event"
	"github.com/convida/convida/pkg/referral"
)

// TestReferralActions states what the Book records for the referral
// actions of decision 16: the outcome, its error code, the referral and
// the events (the money events themselves: TestEveryMoveHasItsEvent).
func TestReferralActions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		run        func(f *fixture) Outcome
		wantOut    string
		wantCode   apperr.Code
		wantStatus string // of order o1's referral
		wantEvent  string // the referral event the action emits, "" = none
		wantMoney  string // the wallet event emitted before it, "" = none
	}{
		{"16: release after the warranty approves and emits referral.approved",
			func(f *fixture) Outcome { f.sale("o1", 10000); return f.release("o1") },
			OutcomeApplied, "", referral.StatusApproved, event.ReferralApproved, ""},
		{"16: release issued before the warranty expired is a noop, even when applied later",
			func(f *fixture) Outcome {
				f.sale("o1", 10000)
				return f.apply(Command{Type: CmdRelease, ReferralID: f.referral("o1").ID, IssuedAt: t0})
			},
			OutcomeNoop, "", referral.StatusPending, "", ""},
		{"16: manual approve keeps its notes and emits referral.approved",
			func(f *fixture) Outcome { f.sale("o1", 10000); return f.approve("o1") },
			OutcomeApplied, "", referral.StatusApproved, event.ReferralApproved, ""},
		{"16: approve of an approved referral is recorded 409 invalid_state",
			func(f *fixture) Outcome { f.sale("o1", 10000); f.approve("o1"); return f.approve("o1") },
			OutcomeRejected, apperr.InvalidState, referral.StatusApproved, "", ""},
		{"16: reject of a pending referral records its reason and emits referral.rejected",
			func(f *fixture) Outcome { f.sale("o1", 10000); return f.reject("o1") },
			OutcomeApplied, "", referral.StatusRejected, event.ReferralRejected, event.WalletDebited},
		{"16: approved → rejected is recorded 409 invalid_state when available no longer covers the reward",
			func(f *fixture) Outcome { f.sale("o1", 10000); f.release("o1"); f.redeem(1); return f.reject("o1") },
			OutcomeRejected, apperr.InvalidState, referral.StatusApproved, "", ""},
		{"16: reject of a cancelled referral is recorded 409 invalid_state",
			func(f *fixture) Outcome { f.sale("o1", 10000); f.refund("o1"); return f.reject("o1") },
			OutcomeRejected, apperr.InvalidState, referral.StatusCancelled, "", ""},
		{"16: a refund cancels the referral and emits referral.cancelled",
			func(f *fixture) Outcome { f.sale("o1", 10000); return f.refund("o1") },
			OutcomeApplied, "", referral.StatusCancelled, event.ReferralCancelled, event.WalletDebited},
		{"16: a second refund of the order is a noop",
			func(f *fixture) Outcome { f.sale("o1", 10000); f.refund("o1"); return f.refund("o1") },
			OutcomeNoop, "", referral.StatusCancelled, "", ""},
		{"16: a refund before its sale is applied and records the referral cancelled, without event",
			func(f *fixture) Outcome { return f.refund("o1") },
			OutcomeApplied, "", referral.StatusCancelled, "", ""},
		{"16: an action on an unknown referral is not_found",
			func(f *fixture) Outcome {
				f.sale("o1", 10000)
				return f.apply(Command{Type: CmdApprove, ReferralID: uuid.New()})
			},
			OutcomeRejected, apperr.NotFound, referral.StatusPending, "", ""},
		{"16: an action on another member's referral is not_found",
			func(f *fixture) Outcome {
				f.sale("o1", 10000)
				f.referral("o1").MemberID = uuid.New()
				return f.reject("o1")
			},
			OutcomeRejected, apperr.NotFound, referral.StatusPending, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			out := tt.run(f)
			if out.Status != tt.wantOut || out.ErrorCode != string(tt.wantCode) {
				t.Errorf("outcome %s %q (%s), want %s %q", out.Status, out.ErrorCode, out.Reason, tt.wantOut, tt.wantCode)
			}
			if r := f.referral("o1"); r.Status != tt.wantStatus {
				t.Errorf("referral %s, want %s", r.Status, tt.wantStatus)
			}
			var got []string
			for _, e := range f.events {
				got = append(got, e.Type)
			}
			var want []string
			for _, e := range []string{tt.wantMoney, tt.wantEvent} {
				if e != "" {
					want = append(want, e)
				}
			}
			if !slices.Equal(got, want) {
				t.Errorf("events %v, want %q", got, want)
			}
		})
	}
}

// TestRejectRecordsReasonAndNotes states what a manual rejection writes on
// the referral.
func TestRejectRecordsReasonAndNotes(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.sale("o1", 10000)
	f.apply(Command{Type: CmdReject, ReferralID: f.referral("o1").ID, Reason: "test_order", Notes: "internal buyer"})
	r := f.referral("o1")
	if r.RejectionReason != "test_order" || r.Notes != "internal buyer" {
		t.Errorf("reason %q notes %q, want test_order and internal buyer", r.RejectionReason, r.Notes)
	}
	e := f.b.Entries[len(f.b.Entries)-1]
	if e.Type != EntryCancel || e.Amount != 1000 || e.Description != "Referral rejected (test_order) for order o1" {
		t.Errorf("entry %s %d %q, want cancel 1000 with the reason", e.Type, e.Amount, e.Description)
	}
}
