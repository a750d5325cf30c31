package referral

import (
	"strings"
	"time"

	"github.com/convida/convida/pkg/campaign"
	"github.com/convida/convida/pkg/member"
)

// ReasonSelfReferral is the rejection reason attribution gives a sale whose
// buyer is the referrer.
const ReasonSelfReferral = "self_referral"

// CouponKey returns the form in which a sale's coupon matches a member's
// referral code (decision 14: case-insensitive, surrounding spaces ignored):
// trimmed and upper-cased. "" means the sale has no coupon and is
// unattributed.
func CouponKey(code string) string {
	return strings.ToUpper(strings.TrimSpace(code))
}

// Order is what attribution reads of a sale whose coupon resolved to a
// member.
type Order struct {
	Amount     int64 // cents
	BuyerEmail string
	PaidAt     time.Time
}

// Verdict names the rule that decided an attribution.
type Verdict uint8

// Verdicts of Attribute and AttributeRefund.
const (
	// Credited: a pending referral with a pending credit of the reward
	// (no credit when the reward is zero).
	Credited Verdict = iota + 1
	// SelfReferred: the buyer is the referrer; the referral is created
	// rejected with ReasonSelfReferral and credits nothing.
	SelfReferred
	// AlreadyAttributed: the order has a referral (one per merchant and
	// order, whatever its status); nothing changes.
	AlreadyAttributed
	// CampaignInactive: the member's campaign is inactive (or gone);
	// nothing is attributed.
	CampaignInactive
	// MemberNotActive: the member is inactive or blocked; nothing is
	// attributed.
	MemberNotActive
	// RefundedFirst: a refund arrived before its sale; the referral is
	// recorded cancelled, so the sale arriving later is AlreadyAttributed.
	RefundedFirst
)

// Attribution is the decision for one sale. It creates a referral when
// Status() is not "".
type Attribution struct {
	Verdict Verdict
	// Reward and WarrantyExpiresAt are those of the referral created.
	Reward            int64 // cents (decision 15)
	WarrantyExpiresAt time.Time
	// Note says what happened, for the command's recorded outcome.
	Note string
}

// Status returns the status of the referral the attribution creates, ""
// when it creates none.
func (a Attribution) Status() string {
	switch a.Verdict {
	case Credited:
		return StatusPending
	case SelfReferred:
		return StatusRejected
	case RefundedFirst:
		return StatusCancelled
	}
	return ""
}

// RejectionReason returns the rejection reason of the referral created.
func (a Attribution) RejectionReason() string {
	if a.Verdict == SelfReferred {
		return ReasonSelfReferral
	}
	return ""
}

// Attribute decides what a paid sale of m's coupon does (decision 14).
// existing is the order's referral, nil when it has none; c is m's
// campaign, nil when it no longer exists. The rules apply in this order:
// an order already attributed, an inactive campaign and a member not active
// change nothing; a buyer whose e-mail equals the member's (case and
// surrounding spaces ignored) makes the referral rejected; anything else is
// credited with c's reward (decision 15) and a warranty of c's days from
// the payment.
func Attribute(o Order, existing *Referral, m *member.Member, c *campaign.Campaign) Attribution {
	switch {
	case existing != nil:
		return Attribution{Verdict: AlreadyAttributed, Note: "order already attributed (" + existing.Status + ")"}
	case c == nil || !c.IsActive:
		return Attribution{Verdict: CampaignInactive, Note: "campaign inactive: nothing attributed"}
	case m.Status != member.StatusActive:
		return Attribution{Verdict: MemberNotActive, Note: "member " + m.Status + ": nothing attributed"}
	}
	a := Attribution{Verdict: Credited, Reward: c.Reward(o.Amount), WarrantyExpiresAt: c.WarrantyEnd(o.PaidAt), Note: "credited"}
	if o.BuyerEmail != "" && strings.EqualFold(strings.TrimSpace(o.BuyerEmail), strings.TrimSpace(m.Email)) {
		a.Verdict, a.Note = SelfReferred, "self-referral: created rejected"
	}
	return a
}

// AttributeRefund decides the referral of a refund whose order has none
// yet (decision 16: a refund that arrives before its sale still ends
// cancelled). It is recorded cancelled with the reward and warranty the
// sale would have had under c (zero and the payment time when c is nil),
// whatever the campaign's or the member's status, and moves no money.
func AttributeRefund(o Order, c *campaign.Campaign) Attribution {
	a := Attribution{Verdict: RefundedFirst, WarrantyExpiresAt: o.PaidAt,
		Note: "refund before sale: referral recorded cancelled"}
	if c != nil {
		a.Reward, a.WarrantyExpiresAt = c.Reward(o.Amount), c.WarrantyEnd(o.PaidAt)
	}
	return a
}
