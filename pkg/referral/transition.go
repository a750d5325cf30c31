package referral

import (
	"time"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/apperr"
)

// Action is something that happens to an existing referral (decision 16).
type Action uint8

// Actions on a referral.
const (
	// Release: the warranty has passed (issued by the scheduler).
	Release Action = iota + 1
	// Approve: a manual approval.
	Approve
	// Reject: a manual rejection.
	Reject
	// Refund: the order was refunded.
	Refund
)

// Facts are what a transition reads beyond the referral itself.
type Facts struct {
	// Available is the member's available balance in cents: an approved
	// credit can be taken back only from it.
	Available int64
	// Now is when the action was issued: Release needs the warranty to
	// have expired by then, so a late delivery decides as it would have
	// on time.
	Now time.Time
}

// Money is what a transition does with the referral's credit.
type Money uint8

// Money moves.
const (
	// NoMoney: the referral has no credit (none, or a zero reward), or the
	// action changes nothing.
	NoMoney Money = iota
	// ReleaseCredit: the pending credit becomes available.
	ReleaseCredit
	// CancelCredit: the pending credit is cancelled.
	CancelCredit
	// ReverseCredit: the approved credit is taken back from available,
	// Amount of it; the Unrecovered rest was already redeemed.
	ReverseCredit
)

// Transition is the decision of Next.
type Transition struct {
	// To is the referral's new status; "" when the action changes nothing.
	To          string
	Money       Money
	Amount      int64 // cents the move carries
	Unrecovered int64 // ReverseCredit: the part of the reward not recovered
	// Note says why nothing changes when To is "".
	Note string
}

// Next decides action a on r (decision 16) and does not modify r:
//
//   - pending → approved by Release once the warranty expired as of f.Now
//     (before that, or while the referral is held for review, nothing
//     changes), or by Approve; the credit is released;
//   - pending → rejected by Reject; the credit is cancelled;
//   - approved → rejected by Reject only while f.Available covers the
//     reward; the credit is reversed in full;
//   - pending → cancelled by Refund, the credit cancelled; approved →
//     cancelled by Refund, the credit reversed up to f.Available and the
//     rest Unrecovered: never a negative balance.
//
// Approve or Reject from any other state is an *apperr.Error with code
// apperr.InvalidState (409). Release or Refund of a referral already past
// them changes nothing: they are repeated or late system events, not a
// caller's mistake.
func Next(r *Referral, a Action, f Facts) (Transition, error) {
	switch a {
	case Release:
		if r.Status != StatusPending {
			return Transition{Note: "referral already " + r.Status}, nil
		}
		if r.ReviewRequired {
			return Transition{Note: "held for review: only approve or reject decides it"}, nil
		}
		if r.WarrantyExpiresAt.After(f.Now) {
			return Transition{Note: "warranty not expired"}, nil
		}
		return move(r, StatusApproved, ReleaseCredit, 0), nil
	case Approve:
		if r.Status != StatusPending {
			return Transition{}, apperr.Errorf(apperr.InvalidState, "only a pending referral can be approved; this one is %s", r.Status)
		}
		return move(r, StatusApproved, ReleaseCredit, 0), nil
	case Reject:
		switch r.Status {
		case StatusPending:
			return move(r, StatusRejected, CancelCredit, 0), nil
		case StatusApproved:
			if f.Available < r.RewardAmount {
				return Transition{}, apperr.Errorf(apperr.InvalidState, "the available balance no longer covers the reward: part of it was redeemed")
			}
			return move(r, StatusRejected, ReverseCredit, f.Available), nil
		}
		return Transition{}, apperr.Errorf(apperr.InvalidState, "only a pending or approved referral can be rejected; this one is %s", r.Status)
	case Refund:
		switch r.Status {
		case StatusPending:
			return move(r, StatusCancelled, CancelCredit, 0), nil
		case StatusApproved:
			return move(r, StatusCancelled, ReverseCredit, f.Available), nil
		}
		return Transition{Note: "referral already " + r.Status}, nil
	}
	return Transition{}, apperr.Errorf(apperr.Invalid, "unknown referral action %d", a)
}

// move is the transition of r to status with money applied to its credit,
// if it has one; a reversal recovers at most available.
func move(r *Referral, status string, money Money, available int64) Transition {
	if r.RewardAmount <= 0 || r.CreditTxnID == uuid.Nil {
		return Transition{To: status}
	}
	t := Transition{To: status, Money: money, Amount: r.RewardAmount}
	if money == ReverseCredit {
		t.Amount = min(r.RewardAmount, max(available, 0))
		t.Unrecovered = r.RewardAmount - t.Amount
	}
	return t
}
