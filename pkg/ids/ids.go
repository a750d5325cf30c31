// Package ids renders and parses the prefixed ids of the admin API
// (decision 5): the prefix followed by the UUID's 32 lowercase hex digits.
package ids

import (
	"encoding/hex"
	"strings"

	"github.com/google/uuid"
)

// The prefixes of the admin shapes.
const (
	Member      = "mem_"
	Campaign    = "camp_"
	Referral    = "ref_"
	Transaction = "txn_"
	Redemption  = "red_"
	Webhook     = "wh_"
	Event       = "evt_"
	DeliveryLog = "whl_"
	AuditEvent  = "aud_"
	// InboundDelivery is a platform's webhook as received (GET
	// /integrations/{provider}/deliveries).
	InboundDelivery = "dlv_"
	// Reconciliation is a run of a platform's pull (GET
	// /integrations/{provider}/reconciliations).
	Reconciliation = "rec_"
)

// Format returns prefix + the 32 hex digits of id.
func Format(prefix string, id uuid.UUID) string {
	var buf [32]byte
	hex.Encode(buf[:], id[:])
	return prefix + string(buf[:])
}

// Parse reads an id written as prefix + 32 hex digits. It also accepts the
// bare UUID in its canonical form, so a member's UUID from the member-facing
// API works on admin paths. ok is false for anything else.
func Parse(prefix, s string) (id uuid.UUID, ok bool) {
	if rest, found := strings.CutPrefix(s, prefix); found && len(rest) == 32 {
		if _, err := hex.Decode(id[:], []byte(strings.ToLower(rest))); err == nil {
			return id, true
		}
		return uuid.UUID{}, false
	}
	if len(s) == 36 {
		if u, err := uuid.Parse(s); err == nil {
			return u, true
		}
	}
	return uuid.UUID{}, false
}

// New returns a new id for a row the pipeline writes at volume (a
// delivery, a referral, a transaction, a ledger entry, an event): a UUID
// of version 7, whose leading bits are its time, so that the rows of a
// burst land on the same few pages of their primary keys' indexes
// instead of one random page each. It is not a secret: API keys and
// tokens are made elsewhere, of random bytes only.
func New() uuid.UUID {
	return uuid.Must(uuid.NewV7())
}
