// Package ledger applies wallet commands: it is the only writer of wallet
// tables. Commands arrive on the ledger.commands topic keyed by member id;
// each is applied exactly once, in a Postgres transaction that also records
// its id and appends its outbox events (see docs/architecture.md).
//
// The application logic is pure: a Book holds the rows a batch of commands
// touches, Apply mutates it in memory and records the changes, and the
// store (pkg/postgres) loads the Book and writes the changes.
package ledger

import (
	"encoding/json"
	"time"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/inbound"
	"github.com/convida/convida/pkg/redemption"
)

// Command types.
const (
	// CmdCreditSale attributes a paid sale to the member and credits the
	// reward as pending (decision 14).
	CmdCreditSale = "credit_sale"
	// CmdRefund cancels or reverses the referral of a refunded order
	// (decision 16), and records a refund that arrives before its sale.
	CmdRefund = "refund"
	// CmdRelease releases a pending reward whose warranty has expired.
	CmdRelease = "release"
	// CmdApprove approves a pending referral by hand: its credit is released.
	CmdApprove = "approve"
	// CmdReject rejects a pending referral (its credit is cancelled) or an
	// approved one while the available balance still covers the reward
	// (its credit is reversed).
	CmdReject = "reject"
	// CmdRedeem debits available balance and creates a pending redemption,
	// which the dispatcher carries out on the platform.
	CmdRedeem = "redeem"
	// CmdRedemptionResult completes a pending redemption, or fails it and
	// returns the money.
	CmdRedemptionResult = "redemption_result"
)

// Command is one message on ledger.commands.
type Command struct {
	// ID makes the command idempotent: a second command with the same id
	// (per merchant) is a no-op.
	ID         string              `json:"id"`
	Type       string              `json:"type"`
	MerchantID uuid.UUID           `json:"merchant_id"`
	MemberID   uuid.UUID           `json:"member_id"`
	IssuedAt   time.Time           `json:"issued_at"`
	Sale       *Sale               `json:"sale,omitempty"`
	ReferralID uuid.UUID           `json:"referral_id,omitzero"`
	Notes      string              `json:"notes,omitempty"`  // approve, reject
	Reason     string              `json:"reason,omitempty"` // reject
	Redeem     *Redeem             `json:"redeem,omitempty"`
	Result     *redemption.Outcome `json:"result,omitempty"`
	// Delivery is the record of the delivery that brought a sale or a
	// refund (a webhook's, or a reconciliation's), written in the
	// command's transaction whatever its outcome, so an accepted delivery
	// costs one message and one transaction. Its wire form is topic's.
	Delivery *inbound.Delivery `json:"-"`
}

// Redeem is the request of a redemption.
type Redeem struct {
	RedemptionID   uuid.UUID `json:"redemption_id"`
	Amount         int64     `json:"amount"` // cents; 0 = all available
	Type           string    `json:"type"`   // redemption.TypeSubscriptionDiscount or TypeStoreCredit
	SubscriptionID string    `json:"subscription_id,omitempty"`
}

// ResultCommandID is the id of the result command of a redemption: the
// dispatcher uses it, and the API waits for it.
func ResultCommandID(redemptionID uuid.UUID) string {
	return "redemption-result:" + redemptionID.String()
}

// Sale is an order reported by a provider, attributed to the member.
type Sale struct {
	Source         string    `json:"source"`
	OrderID        string    `json:"order_id"`
	Amount         int64     `json:"amount"`
	Currency       string    `json:"currency"`
	CouponCode     string    `json:"coupon_code"`
	BuyerName      string    `json:"buyer_name"`
	BuyerEmail     string    `json:"buyer_email"`
	BuyerDocument  string    `json:"buyer_document"`
	SubscriptionID string    `json:"subscription_id,omitempty"`
	PaidAt         time.Time `json:"paid_at"`
}

// Outcomes of a command, as recorded in processed_commands.
const (
	OutcomeApplied  = "applied"  // the command changed something
	OutcomeNoop     = "noop"     // valid, but nothing to do (already done, not due…)
	OutcomeRejected = "rejected" // refused; ErrorCode says why
)

// Outcome is the recorded result of one command.
type Outcome struct {
	MerchantID uuid.UUID
	CommandID  string
	MemberID   uuid.UUID
	Kind       string
	Status     string // OutcomeApplied, OutcomeNoop, OutcomeRejected
	ErrorCode  string // apperr code when rejected
	Reason     string // human-readable note
	Result     json.RawMessage
}
