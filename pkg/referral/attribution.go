package referral

import (
	"strings"
	"time"

	"github.com/convida/convida/pkg/campaign"
	"github.com/convida/convida/pkg/creator"
	"github.com/convida/convida/pkg/fraud"
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
	Amount        int64 // cents
	BuyerEmail    string
	BuyerDocument string // CPF or CNPJ as the platform sent it
	PaidAt        time.Time
}

// History is what attribution reads of the referrer's earlier referrals
// (the fraud rules' stats and the creator's month), counted by the ledger
// before the sale.
type History struct {
	fraud.Stats
	// MonthSales is the member's non-rejected, non-cancelled referrals of
	// the current calendar month (UTC).
	MonthSales int
	// Tiers are the commission tiers of the member's campaign when the
	// member is a creator; nil otherwise (decision 21).
	Tiers creator.Tiers
	// Creator: the member has a creator profile (with or without tiers),
	// so the creator velocity limit applies (fraud.Member).
	Creator bool
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
	// MemberErased: the member's personal data was erased
	// (member.Erase); her code attributes nothing any more, whatever her
	// status. Her existing referrals still follow their sales (refunds,
	// warranty, decisions), so her wallet stays exact.
	MemberErased
)

// ErasedNote is the recorded outcome of a sale or refund-before-sale of an
// erased member's code.
const ErasedNote = "member erased: nothing attributed"

// Attribution is the decision for one sale. It creates a referral when
// Status() is not "".
type Attribution struct {
	Verdict Verdict
	// Reward and WarrantyExpiresAt are those of the referral created.
	Reward            int64 // cents (decision 15, or the creator's tier, capped)
	WarrantyExpiresAt time.Time
	// ReviewReasons are the fraud rules that hold a credited referral for
	// review (fraud.Check); none when it needs none.
	ReviewReasons []string
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
// campaign, nil when it no longer exists; h is m's referrals before it. The
// rules apply in this order: an order already attributed, an erased
// member, an inactive campaign and a member not active change nothing; a buyer who is the
// member (fraud.Check: normalized e-mail or CPF/CNPJ) makes the referral
// rejected; anything else is credited with a warranty of c's days from the
// payment and the reward of Reward, capped by the campaign's monthly cap,
// held for review with the reasons of the fraud rules it broke.
func Attribute(o Order, existing *Referral, m *member.Member, c *campaign.Campaign, h History) Attribution {
	switch {
	case existing != nil:
		return Attribution{Verdict: AlreadyAttributed, Note: "order already attributed (" + existing.Status + ")"}
	case m.IsErased():
		return Attribution{Verdict: MemberErased, Note: ErasedNote}
	case c == nil || !c.IsActive:
		return Attribution{Verdict: CampaignInactive, Note: "campaign inactive: nothing attributed"}
	case m.Status != member.StatusActive:
		return Attribution{Verdict: MemberNotActive, Note: "member " + m.Status + ": nothing attributed"}
	}
	reward := Reward(o, c, h)
	v := fraud.Check(fraud.Sale{BuyerEmail: o.BuyerEmail, BuyerDocument: o.BuyerDocument, Reward: reward},
		fraud.Member{Email: m.Email, Document: m.Document, Creator: h.Creator}, c.Rules, h.Stats)
	a := Attribution{Verdict: Credited, WarrantyExpiresAt: c.WarrantyEnd(o.PaidAt)}
	switch {
	case v.SelfReferral: // recorded with the reward it would have earned, credited nothing
		a.Verdict, a.Reward, a.Note = SelfReferred, reward, "self-referral: created rejected"
	case v.ReviewRequired():
		a.Reward, a.ReviewReasons, a.Note = v.Reward, v.Reasons, "credited, held for review: "+strings.Join(v.Reasons, ", ")
	default:
		a.Reward, a.Note = v.Reward, "credited"
	}
	return a
}

// Reward is the reward of a sale before the monthly cap: a creator's
// commission at the tier the sale reaches, counting itself (decision 21:
// with Silver at min_sales 3, the month's 3rd sale earns Silver's rate),
// or else the campaign's reward (decision 15).
func Reward(o Order, c *campaign.Campaign, h History) int64 {
	if t, ok := h.Tiers.For(h.MonthSales + 1); ok {
		return t.Commission(o.Amount)
	}
	return c.Reward(o.Amount)
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
