// Package referral holds referrals and their rules as pure functions:
// attribution of a sale (decision 14, Attribute and AttributeRefund, with
// the reward of decision 15) and the referral state machine (decision 16,
// Next). They decide; ledger.Book carries out their decisions as money
// moves, events and recorded outcomes.
package referral

import (
	"time"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/ids"
	"github.com/convida/convida/pkg/jsontime"
)

// Statuses of a referral.
const (
	StatusPending   = "pending"
	StatusApproved  = "approved"
	StatusRejected  = "rejected"
	StatusCancelled = "cancelled"
)

// Rejection reasons accepted by reject, plus self_referral set by attribution.
var RejectionReasons = []string{"fraud", ReasonSelfReferral, "policy_violation", "duplicate", "test_order", "other"}

// ValidReason reports whether r is a rejection reason.
func ValidReason(r string) bool {
	for _, v := range RejectionReasons {
		if v == r {
			return true
		}
	}
	return false
}

// ValidStatus reports whether s is a referral status.
func ValidStatus(s string) bool {
	switch s {
	case StatusPending, StatusApproved, StatusRejected, StatusCancelled:
		return true
	}
	return false
}

// Referral records a referred customer's order attributed to a member.
type Referral struct {
	ID                uuid.UUID
	MerchantID        uuid.UUID
	MemberID          uuid.UUID
	Source            string // the platform's name (pkg/provider)
	OrderID           string
	RefereeEmail      string
	RefereeName       string
	RefereeExternalID string
	CouponUsed        string
	OrderValue        int64
	RewardAmount      int64
	Status            string
	RejectionReason   string
	Notes             string
	UnrecoveredAmount int64 // part of a reversed reward already redeemed
	// ReviewRequired holds a pending referral for a manual decision: the
	// warranty sweep does not release it; approve or reject clears it.
	// ReviewReasons (fraud.Reason*) say why, and stay after the decision.
	ReviewRequired    bool
	ReviewReasons     []string
	CreditTxnID       uuid.UUID // the member's credit transaction; Nil when none
	WarrantyExpiresAt time.Time
	CreatedAt         time.Time
	UpdatedAt         time.Time
}

// MemberRef is the referrer as embedded in the admin shape.
type MemberRef struct {
	ID    string `json:"id"`
	Name  string `json:"name"`
	Email string `json:"email"`
}

// View is the administrative shape of a referral (spec 2.7).
type View struct {
	ID                string    `json:"id"`
	MemberID          string    `json:"member_id"`
	Member            MemberRef `json:"member"`
	RefereeEmail      string    `json:"referee_email"`
	RefereeName       string    `json:"referee_name"`
	RefereeExternalID string    `json:"referee_external_id"`
	OrderID           string    `json:"order_id"`
	OrderValue        int64     `json:"order_value"`
	RewardAmount      int64     `json:"reward_amount"`
	Status            string    `json:"status"`
	RejectionReason   *string   `json:"rejection_reason"`
	UnrecoveredAmount int64     `json:"unrecovered_amount"`
	ReviewRequired    bool      `json:"review_required"`
	ReviewReasons     []string  `json:"review_reasons"`
	CouponUsed        string    `json:"coupon_used"`
	Notes             string    `json:"notes"`
	WarrantyExpiresAt string    `json:"warranty_expires_at"`
	Source            string    `json:"source"`
	CreatedAt         string    `json:"created_at"`
	UpdatedAt         string    `json:"updated_at"`
}

// AdminView renders r in the administrative shape with its referrer.
func (r Referral) AdminView(memberName, memberEmail string) View {
	memberID := ids.Format(ids.Member, r.MemberID)
	var reason *string
	if r.RejectionReason != "" {
		reason = &r.RejectionReason
	}
	reasons := r.ReviewReasons
	if reasons == nil {
		reasons = []string{}
	}
	return View{
		ID:                ids.Format(ids.Referral, r.ID),
		MemberID:          memberID,
		Member:            MemberRef{ID: memberID, Name: memberName, Email: memberEmail},
		RefereeEmail:      r.RefereeEmail,
		RefereeName:       r.RefereeName,
		RefereeExternalID: r.RefereeExternalID,
		OrderID:           r.OrderID,
		OrderValue:        r.OrderValue,
		RewardAmount:      r.RewardAmount,
		Status:            r.Status,
		RejectionReason:   reason,
		UnrecoveredAmount: r.UnrecoveredAmount,
		ReviewRequired:    r.ReviewRequired,
		ReviewReasons:     reasons,
		CouponUsed:        r.CouponUsed,
		Notes:             r.Notes,
		WarrantyExpiresAt: jsontime.Format(r.WarrantyExpiresAt),
		Source:            r.Source,
		CreatedAt:         jsontime.Format(r.CreatedAt),
		UpdatedAt:         jsontime.Format(r.UpdatedAt),
	}
}
