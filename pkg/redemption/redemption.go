// Package redemption holds redemptions (decision 19) and what carries them
// out at the platforms: a Guru subscription discount or a Yampi store
// coupon, and the members' referral codes as coupons there. It decides
// what to ask for (amounts, codes, validity, retries); package platform
// makes the calls. The ledger debits the wallet and creates the redemption
// pending; the dispatcher calls the platform; the ledger then completes it
// or fails it and returns the money.
package redemption

import (
	"time"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/ids"
	"github.com/convida/convida/pkg/jsontime"
	"github.com/convida/convida/pkg/provider"
)

// Types (admin vocabulary) and the member-facing destinations they map to.
const (
	TypeSubscriptionDiscount = provider.RedeemSubscriptionDiscount
	TypeStoreCredit          = provider.RedeemStoreCredit

	DestinationBillingSubscription = "billing_subscription"
	DestinationStoreCoupon         = "store_coupon"
)

// Statuses.
const (
	StatusPending   = "pending"
	StatusCompleted = "completed"
	StatusFailed    = "failed"
)

// TypeOf maps any accepted vocabulary to the admin type: the admin types,
// the member-facing destinations, and the platform's own name of its
// redemption (provider.Descriptor.RedemptionAlias: guru_subscription,
// yampi_coupon). ok is false for anything else.
func TypeOf(s string) (typ string, ok bool) {
	switch s {
	case TypeSubscriptionDiscount, DestinationBillingSubscription:
		return TypeSubscriptionDiscount, true
	case TypeStoreCredit, DestinationStoreCoupon:
		return TypeStoreCredit, true
	}
	for _, d := range provider.With(provider.Redeem) {
		if s != "" && s == d.RedemptionAlias {
			return d.Redemption, true
		}
	}
	return "", false
}

// Destination is the member-facing name of an admin type.
func Destination(typ string) string {
	if typ == TypeSubscriptionDiscount {
		return DestinationBillingSubscription
	}
	return DestinationStoreCoupon
}

// Provider is the platform that carries out a type.
func Provider(typ string) string {
	d, _ := provider.ForRedemption(typ)
	return d.Name
}

// Redemption is a member's redemption of available balance.
type Redemption struct {
	ID             uuid.UUID
	MerchantID     uuid.UUID
	MemberID       uuid.UUID
	Amount         int64
	Type           string
	Status         string
	TransactionID  uuid.UUID // the debit ledger entry
	DebitTxnID     uuid.UUID // the member-facing debit transaction
	SubscriptionID string
	Result         Result // what the platform answered (when completed)
	FailureReason  string
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

// Result is what a platform returned for a completed redemption.
type Result struct {
	AppliedCycles int       `json:"applied_cycles,omitempty"` // guru
	CouponCode    string    `json:"coupon_code,omitempty"`    // yampi
	ExpiresAt     time.Time `json:"expires_at,omitzero"`      // yampi
}

// Metadata is the metadata object of the admin shape (spec 2.9).
type Metadata struct {
	SubscriptionID *string `json:"subscription_id"`
	CouponCode     *string `json:"coupon_code"`
	ExpiresAt      *string `json:"expires_at"`
	AppliedCycles  *int    `json:"applied_cycles,omitempty"`
	FailureReason  *string `json:"failure_reason,omitempty"`
}

// View is the administrative shape of a redemption (spec 2.9).
type View struct {
	ID            string   `json:"id"`
	MemberID      string   `json:"member_id"`
	Amount        int64    `json:"amount"`
	Type          string   `json:"type"`
	Status        string   `json:"status"`
	TransactionID string   `json:"transaction_id"`
	Metadata      Metadata `json:"metadata"`
	CreatedAt     string   `json:"created_at"`
	UpdatedAt     string   `json:"updated_at"`
}

// AdminView renders r in the administrative shape.
func (r Redemption) AdminView() View {
	md := Metadata{}
	if r.SubscriptionID != "" {
		md.SubscriptionID = &r.SubscriptionID
	}
	if r.Result.CouponCode != "" {
		md.CouponCode = &r.Result.CouponCode
	}
	md.ExpiresAt = jsontime.Ptr(r.Result.ExpiresAt)
	if r.Result.AppliedCycles > 0 {
		md.AppliedCycles = &r.Result.AppliedCycles
	}
	if r.FailureReason != "" {
		md.FailureReason = &r.FailureReason
	}
	return View{
		ID: ids.Format(ids.Redemption, r.ID), MemberID: ids.Format(ids.Member, r.MemberID), Amount: r.Amount,
		Type: r.Type, Status: r.Status, TransactionID: ids.Format(ids.Transaction, r.TransactionID), Metadata: md,
		CreatedAt: jsontime.Format(r.CreatedAt), UpdatedAt: jsontime.Format(r.UpdatedAt),
	}
}
