package audit

import (
	"context"

	"github.com/google/uuid"
)

// Trail reads the merchant's audit trail (postgres.AuditStore).
type Trail interface {
	// ListAuditEvents returns a page of the merchant's events selected by
	// f, newest first, and how many f selects in all.
	ListAuditEvents(ctx context.Context, merchantID uuid.UUID, f Filter) ([]Event, int, error)
}
