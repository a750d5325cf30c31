package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/convida/convida/pkg/inbound"
)

// DeliveryStore writes inbound delivery records (it implements
// ingest.RecordStore). The ingest never calls it: records reach it through
// the broker and the recorder, a batch at a time.
type DeliveryStore struct{ pool *pgxpool.Pool }

// NewDeliveryStore returns a DeliveryStore.
func NewDeliveryStore(pool *pgxpool.Pool) *DeliveryStore { return &DeliveryStore{pool: pool} }

// RecordDeliveries stores ds in one statement. It is idempotent by delivery
// id: a record already stored (a batch redelivered after a crash) is left
// as it is.
func (s *DeliveryStore) RecordDeliveries(ctx context.Context, ds []inbound.Delivery) error {
	n := len(ds)
	if n == 0 {
		return nil
	}
	merchants, ids := make([]uuid.UUID, n), make([]uuid.UUID, n)
	providers, keys, outcomes, errs := make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	statuses := make([]int32, n)
	headers := make([]string, n)
	bodies := make([][]byte, n)
	received := make([]time.Time, n)
	for i, d := range ds {
		h, err := json.Marshal(d.Headers)
		if err != nil || d.Headers == nil {
			h = []byte("{}")
		}
		body := d.Body
		if body == nil {
			body = []byte{}
		}
		merchants[i], ids[i], providers[i], keys[i] = d.MerchantID, d.ID, d.Provider, d.DedupeKey
		outcomes[i], statuses[i], errs[i], headers[i], bodies[i], received[i] = d.Outcome, int32(d.HTTPStatus), d.Error, string(h), body, d.ReceivedAt
	}
	_, err := s.pool.Exec(ctx, `INSERT INTO inbound_deliveries (merchant_id, id, provider, dedupe_key, outcome, http_status, error, headers, body, received_at)
SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::text[], $5::text[], $6::int[], $7::text[], $8::jsonb[], $9::bytea[], $10::timestamptz[])
ON CONFLICT (merchant_id, id) DO NOTHING`,
		merchants, ids, providers, keys, outcomes, statuses, errs, headers, bodies, received)
	if err != nil {
		return fmt.Errorf("record deliveries: %w", err)
	}
	return nil
}
