package postgres

import (
	"context"
	"encoding/json"

	"github.com/convida/convida/pkg/ingest"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
)

// DeliveryStore implements ingest.Deliveries.
type DeliveryStore struct{ pool *pgxpool.Pool }

var _ ingest.Deliveries = (*DeliveryStore)(nil)

// NewDeliveryStore returns a DeliveryStore.
func NewDeliveryStore(pool *pgxpool.Pool) *DeliveryStore { return &DeliveryStore{pool: pool} }

// Claim inserts the dedupe row for the event unless it exists, and reports
// whether an earlier delivery already had it published.
func (s *DeliveryStore) Claim(ctx context.Context, merchantID uuid.UUID, dedupeKey, commandID string) (bool, error) {
	var published bool
	// DO UPDATE (a no-op write) rather than DO NOTHING: it waits for a
	// concurrent claim and returns that row, where a separate SELECT in
	// the same statement could not see it.
	err := s.pool.QueryRow(ctx, `INSERT INTO inbound_events (merchant_id, dedupe_key, command_id) VALUES ($1, $2, $3)
ON CONFLICT (merchant_id, dedupe_key) DO UPDATE SET command_id = inbound_events.command_id
RETURNING published_at IS NOT NULL`, merchantID, dedupeKey, commandID).Scan(&published)
	return published, err
}

// Record stores the delivery and, when markPublished, marks its event
// published, in one statement.
func (s *DeliveryStore) Record(ctx context.Context, d ingest.Delivery, markPublished bool) error {
	headers, _ := json.Marshal(d.Headers)
	_, err := s.pool.Exec(ctx, `WITH mark AS (
  UPDATE inbound_events SET published_at = COALESCE(published_at, now())
  WHERE $10 AND merchant_id = $1 AND dedupe_key = $4
)
INSERT INTO inbound_deliveries (merchant_id, id, provider, dedupe_key, outcome, http_status, error, headers, body, received_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $11)`,
		d.MerchantID, d.ID, d.Provider, d.DedupeKey, d.Outcome, d.HTTPStatus, d.Error, headers, d.Body,
		markPublished, d.ReceivedAt)
	return err
}
