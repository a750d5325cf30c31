package inbound

import (
	"strings"
	"time"

	"github.com/google/uuid"
)

// Delivery is the record of one inbound request, whatever its outcome: what
// the ingest edge keeps of every platform webhook it answers, so an operator
// can see what arrived and why it was answered as it was. Headers holds the
// few request headers the edge keeps for diagnosis, not all of them.
type Delivery struct {
	ID         uuid.UUID
	MerchantID uuid.UUID
	Provider   string
	DedupeKey  string
	Outcome    string // one of the Delivery… outcome constants
	HTTPStatus int
	Error      string
	Headers    map[string]string
	Body       []byte
	// BodyLength and BodySHA256 are the length and the SHA-256 of the body
	// as received. They are kept for a delivery refused before it
	// authenticated, whose record keeps at most a few KiB of its body
	// (anyone can send one: it must cost little to keep); 0 and nil for
	// the others, whose Body is what was received (up to the record's
	// limit, noted in Headers).
	BodyLength int
	BodySHA256 []byte
	ReceivedAt time.Time
	// Source is where the delivery came from: SourceWebhook ("" reads as
	// it) or SourceReconciliation, a sale a pull found that no webhook had
	// brought.
	Source string
}

// Sources of a delivery.
const (
	SourceWebhook        = "webhook"
	SourceReconciliation = "reconciliation"
)

// OrderID is the platform's order id of the delivery, read from its
// dedupe key (provider:order:kind, as complete builds it); "" for a
// delivery refused before its order was read.
func (d Delivery) OrderID() string {
	rest, ok := strings.CutPrefix(d.DedupeKey, d.Provider+":")
	if i := strings.LastIndexByte(rest, ':'); ok && i > 0 {
		return rest[:i]
	}
	return ""
}

// Outcomes of a delivery, as stored in Delivery.Outcome.
const (
	DeliveryAccepted      = "accepted"
	DeliveryDuplicate     = "duplicate"
	DeliveryIgnored       = "ignored"
	DeliveryUnattributed  = "unattributed"
	DeliveryUnauthorized  = "unauthorized"
	DeliveryUnprocessable = "unprocessable"
	DeliveryTooLarge      = "too_large"
	DeliveryUnavailable   = "unavailable"
	// DeliveryRateLimited: answered 429 because its address had spent
	// its allowance of failed authentications with the merchant.
	DeliveryRateLimited = "rate_limited"
	// DeliveryMemberErased: a sale or refund of an erased member's code,
	// answered as accepted (the platform needs nothing else) and recorded
	// so by the ledger, which attributed nothing (referral.MemberErased).
	DeliveryMemberErased = "member_erased"
)
