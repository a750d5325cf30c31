package referral

import (
	"reflect"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/apperr"
)

// warrantyEnd is when the referrals of these tests leave the warranty.
var warrantyEnd = paidAt.Add(7 * 24 * time.Hour)

// withCredit returns a referral in status with a credit of 1000 cents.
func withCredit(status string) *Referral {
	return &Referral{ID: uuid.New(), Status: status, RewardAmount: 1000, CreditTxnID: uuid.New(), WarrantyExpiresAt: warrantyEnd}
}

func TestNext(t *testing.T) {
	t.Parallel()
	after := warrantyEnd.Add(time.Hour)
	noCredit := withCredit(StatusPending)
	noCredit.CreditTxnID = uuid.Nil
	zeroReward := withCredit(StatusApproved)
	zeroReward.RewardAmount = 0
	held := withCredit(StatusPending)
	held.ReviewRequired, held.ReviewReasons = true, []string{"velocity"}
	tests := []struct {
		name      string
		referral  *Referral
		action    Action
		available int64
		now       time.Time
		want      Transition
		wantErr   apperr.Code
	}{
		// Release by the warranty.
		{"16: pending → approved by release once the warranty expired; the credit is released",
			withCredit(StatusPending), Release, 0, after, Transition{To: StatusApproved, Money: ReleaseCredit, Amount: 1000}, ""},
		{"16: release at the very end of the warranty approves",
			withCredit(StatusPending), Release, 0, warrantyEnd, Transition{To: StatusApproved, Money: ReleaseCredit, Amount: 1000}, ""},
		{"16: release before the warranty expired (as of the command's issue time) changes nothing",
			withCredit(StatusPending), Release, 0, warrantyEnd.Add(-time.Second), Transition{Note: "warranty not expired"}, ""},
		{"16: release of an approved referral changes nothing",
			withCredit(StatusApproved), Release, 1000, after, Transition{Note: "referral already approved"}, ""},
		{"16: release of a rejected referral changes nothing",
			withCredit(StatusRejected), Release, 0, after, Transition{Note: "referral already rejected"}, ""},
		{"16: release of a cancelled referral changes nothing",
			withCredit(StatusCancelled), Release, 0, after, Transition{Note: "referral already cancelled"}, ""},
		{"11: release of a referral held for review changes nothing, whatever its warranty",
			held, Release, 0, after, Transition{Note: "held for review: only approve or reject decides it"}, ""},
		{"11: approve decides a referral held for review; the credit is released",
			held, Approve, 0, paidAt, Transition{To: StatusApproved, Money: ReleaseCredit, Amount: 1000}, ""},
		{"11: reject decides a referral held for review; the credit is cancelled",
			held, Reject, 0, paidAt, Transition{To: StatusRejected, Money: CancelCredit, Amount: 1000}, ""},
		// Manual approval.
		{"16: pending → approved by manual approve, within the warranty; the credit is released",
			withCredit(StatusPending), Approve, 0, paidAt, Transition{To: StatusApproved, Money: ReleaseCredit, Amount: 1000}, ""},
		{"16: approve of an approved referral is 409 invalid_state",
			withCredit(StatusApproved), Approve, 1000, after, Transition{}, apperr.InvalidState},
		{"16: approve of a rejected referral is 409 invalid_state",
			withCredit(StatusRejected), Approve, 0, after, Transition{}, apperr.InvalidState},
		{"16: approve of a cancelled referral is 409 invalid_state",
			withCredit(StatusCancelled), Approve, 0, after, Transition{}, apperr.InvalidState},
		// Manual rejection.
		{"16: pending → rejected by reject; the credit is cancelled",
			withCredit(StatusPending), Reject, 0, paidAt, Transition{To: StatusRejected, Money: CancelCredit, Amount: 1000}, ""},
		{"16: approved → rejected while available covers the reward; the credit is reversed in full",
			withCredit(StatusApproved), Reject, 2500, after, Transition{To: StatusRejected, Money: ReverseCredit, Amount: 1000}, ""},
		{"16: approved → rejected when available equals the reward",
			withCredit(StatusApproved), Reject, 1000, after, Transition{To: StatusRejected, Money: ReverseCredit, Amount: 1000}, ""},
		{"16: approved → rejected refused (409) when available no longer covers the reward",
			withCredit(StatusApproved), Reject, 999, after, Transition{}, apperr.InvalidState},
		{"16: reject of a rejected referral is 409 invalid_state",
			withCredit(StatusRejected), Reject, 1000, after, Transition{}, apperr.InvalidState},
		{"16: reject of a cancelled referral is 409 invalid_state",
			withCredit(StatusCancelled), Reject, 1000, after, Transition{}, apperr.InvalidState},
		// Refund.
		{"16: pending → cancelled by a refund; the credit is cancelled",
			withCredit(StatusPending), Refund, 0, paidAt, Transition{To: StatusCancelled, Money: CancelCredit, Amount: 1000}, ""},
		{"16: approved → cancelled by a refund; the credit is reversed in full while available covers it",
			withCredit(StatusApproved), Refund, 1500, after, Transition{To: StatusCancelled, Money: ReverseCredit, Amount: 1000}, ""},
		{"16: approved → cancelled by a refund after a redemption: reversed up to available, the rest unrecovered_amount",
			withCredit(StatusApproved), Refund, 400, after, Transition{To: StatusCancelled, Money: ReverseCredit, Amount: 400, Unrecovered: 600}, ""},
		{"16: approved → cancelled by a refund with nothing available: all of it unrecovered_amount",
			withCredit(StatusApproved), Refund, 0, after, Transition{To: StatusCancelled, Money: ReverseCredit, Amount: 0, Unrecovered: 1000}, ""},
		{"16: a refund of a cancelled referral changes nothing",
			withCredit(StatusCancelled), Refund, 0, after, Transition{Note: "referral already cancelled"}, ""},
		{"16: a refund of a rejected referral changes nothing",
			withCredit(StatusRejected), Refund, 0, after, Transition{Note: "referral already rejected"}, ""},
		// Referrals without a credit.
		{"16: a referral without a credit transaction changes status and moves no money",
			noCredit, Approve, 0, paidAt, Transition{To: StatusApproved}, ""},
		{"16: a zero reward is reversed without money and without unrecovered_amount",
			zeroReward, Refund, 0, after, Transition{To: StatusCancelled}, ""},
		{"16: a zero reward can be rejected once approved with nothing available",
			zeroReward, Reject, 0, after, Transition{To: StatusRejected}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			before := *tt.referral
			got, err := Next(tt.referral, tt.action, Facts{Available: tt.available, Now: tt.now})
			if code := apperr.CodeOf(err); code != tt.wantErr {
				t.Fatalf("error %v, want code %q", err, tt.wantErr)
			}
			if got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
			if !reflect.DeepEqual(*tt.referral, before) {
				t.Errorf("Next modified the referral: %+v, was %+v", *tt.referral, before)
			}
		})
	}
}

// TestNextMessages pins the 409 messages: the API shows them to the caller.
func TestNextMessages(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		status    string
		action    Action
		available int64
		want      string
	}{
		{"16: approve outside pending says which state it is in", StatusCancelled, Approve, 0,
			"only a pending referral can be approved; this one is cancelled"},
		{"16: reject outside pending or approved says which state it is in", StatusRejected, Reject, 0,
			"only a pending or approved referral can be rejected; this one is rejected"},
		{"16: reject of an approved referral partly redeemed says why", StatusApproved, Reject, 10,
			"the available balance no longer covers the reward: part of it was redeemed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := Next(withCredit(tt.status), tt.action, Facts{Available: tt.available, Now: warrantyEnd})
			if got := apperr.MessageOf(err); got != tt.want {
				t.Errorf("message %q, want %q", got, tt.want)
			}
		})
	}
}
