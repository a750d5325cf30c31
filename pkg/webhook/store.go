package webhook

import (
	"context"
	"time"

	"github.com/google/uuid"
)

// The contracts of webhooks' storage (postgres.WebhookStore) that the API
// and the dashboard share. An absent endpoint or record, another
// merchant's included, is apperr.NotFound.

// Store keeps the merchant's endpoints and their secrets.
type Store interface {
	CreateWebhook(ctx context.Context, e *Endpoint) error
	ListWebhooks(ctx context.Context, merchantID uuid.UUID) ([]Endpoint, error)
	FindWebhook(ctx context.Context, merchantID, id uuid.UUID) (*Endpoint, error)
	UpdateWebhook(ctx context.Context, merchantID, id uuid.UUID, patch Patch) (*Endpoint, error)
	DeleteWebhook(ctx context.Context, merchantID, id uuid.UUID) error
	// RotateWebhookSecret makes newSecret the endpoint's secret; the old
	// one keeps signing beside it for overlap after now.
	RotateWebhookSecret(ctx context.Context, merchantID, id uuid.UUID, newSecret string, overlap time.Duration, now time.Time) (*Endpoint, error)
	// DisableWebhook deactivates the endpoint for reason (DisabledGone…).
	DisableWebhook(ctx context.Context, merchantID, id uuid.UUID, reason string) error
}

// AttemptLog is the endpoints' delivery log: one record per attempt.
type AttemptLog interface {
	RecordAttempts(ctx context.Context, attempts []Attempt) error
	// ListAttempts returns a page of the endpoint's records selected by
	// f, newest first, and how many f selects.
	ListAttempts(ctx context.Context, merchantID, webhookID uuid.UUID, f AttemptFilter) ([]Attempt, int, error)
	FindAttempt(ctx context.Context, merchantID, webhookID, id uuid.UUID) (*Attempt, error)
	// LastAttemptNumber is the highest attempt number of the event at
	// the endpoint (0 when none).
	LastAttemptNumber(ctx context.Context, merchantID, webhookID, eventID uuid.UUID) (int, error)
}

// EventPayloads returns a stored event byte for byte, for a retry to send
// it again; an event no longer kept is apperr.NotFound.
type EventPayloads interface {
	EventPayload(ctx context.Context, merchantID, eventID uuid.UUID) (typ string, payload []byte, err error)
}
