package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/convida/convida/pkg/batch"
	"github.com/convida/convida/pkg/inbound"
)

// DeliveryStore keeps inbound delivery records and the durable dedupe of
// order events (it implements ingest.Deliveries). Its writes are
// group-committed (batcher): a sale burst costs a few transactions per
// millisecond rather than two per delivery.
type DeliveryStore struct {
	pool    *pgxpool.Pool
	claims  *batch.Group[claim, bool]
	records *batch.Group[record, struct{}]
}

type claim struct {
	merchantID           uuid.UUID
	dedupeKey, commandID string
}

type record struct {
	d             inbound.Delivery
	markPublished bool
}

// NewDeliveryStore returns a DeliveryStore.
func NewDeliveryStore(pool *pgxpool.Pool) *DeliveryStore {
	s := &DeliveryStore{pool: pool}
	s.claims = batch.New(4, 500, s.flushClaims)
	s.records = batch.New(4, 500, s.flushRecords)
	return s
}

// Claim records that the event with dedupeKey is being published as
// commandID, and reports whether an earlier delivery already had it
// published.
func (s *DeliveryStore) Claim(ctx context.Context, merchantID uuid.UUID, dedupeKey, commandID string) (bool, error) {
	return s.claims.Do(ctx, claim{merchantID, dedupeKey, commandID})
}

// Record stores the delivery and, when markPublished, marks its event
// published.
func (s *DeliveryStore) Record(ctx context.Context, d inbound.Delivery, markPublished bool) error {
	_, err := s.records.Do(ctx, record{d, markPublished})
	return err
}

type eventKey struct {
	merchantID uuid.UUID
	dedupeKey  string
}

// flushClaims inserts the batch's claims in one statement. ON CONFLICT DO
// UPDATE (a no-op write) waits for a concurrent claim and returns its row;
// it may not touch a row twice, so duplicates in the batch share one row.
func (s *DeliveryStore) flushClaims(ctx context.Context, items []claim) ([]bool, error) {
	index := map[eventKey]int{}
	var merchants []uuid.UUID
	var keys, cmds []string
	for _, c := range items {
		k := eventKey{c.merchantID, c.dedupeKey}
		if _, dup := index[k]; dup {
			continue
		}
		index[k] = len(keys)
		merchants, keys, cmds = append(merchants, c.merchantID), append(keys, c.dedupeKey), append(cmds, c.commandID)
	}
	rows, err := s.pool.Query(ctx, `INSERT INTO inbound_events (merchant_id, dedupe_key, command_id)
SELECT * FROM unnest($1::uuid[], $2::text[], $3::text[]) ORDER BY 1, 2
ON CONFLICT (merchant_id, dedupe_key) DO UPDATE SET command_id = inbound_events.command_id
RETURNING merchant_id, dedupe_key, published_at IS NOT NULL`, merchants, keys, cmds)
	if err != nil {
		return nil, fmt.Errorf("claim inbound events: %w", err)
	}
	defer rows.Close()
	published := make(map[eventKey]bool, len(keys))
	for rows.Next() {
		var k eventKey
		var p bool
		if err := rows.Scan(&k.merchantID, &k.dedupeKey, &p); err != nil {
			return nil, err
		}
		published[k] = p
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	out := make([]bool, len(items))
	for i, c := range items {
		out[i] = published[eventKey{c.merchantID, c.dedupeKey}]
	}
	return out, nil
}

// flushRecords stores the batch's delivery records and marks the published
// events, in one statement.
func (s *DeliveryStore) flushRecords(ctx context.Context, items []record) ([]struct{}, error) {
	n := len(items)
	merchants, ids := make([]uuid.UUID, n), make([]uuid.UUID, n)
	providers, keys, outcomes, errs := make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	statuses := make([]int32, n)
	headers := make([]string, n)
	bodies := make([][]byte, n)
	received := make([]time.Time, n)
	var markMerchants []uuid.UUID
	var markKeys []string
	for i, it := range items {
		d := it.d
		h, _ := json.Marshal(d.Headers)
		merchants[i], ids[i], providers[i], keys[i] = d.MerchantID, d.ID, d.Provider, d.DedupeKey
		outcomes[i], statuses[i], errs[i], headers[i], bodies[i], received[i] = d.Outcome, int32(d.HTTPStatus), d.Error, string(h), d.Body, d.ReceivedAt
		if it.markPublished {
			markMerchants, markKeys = append(markMerchants, d.MerchantID), append(markKeys, d.DedupeKey)
		}
	}
	_, err := s.pool.Exec(ctx, `WITH mark AS (
  UPDATE inbound_events e SET published_at = COALESCE(e.published_at, now())
  FROM (SELECT DISTINCT * FROM unnest($11::uuid[], $12::text[]) ORDER BY 1, 2) AS k(merchant_id, dedupe_key)
  WHERE e.merchant_id = k.merchant_id AND e.dedupe_key = k.dedupe_key
)
INSERT INTO inbound_deliveries (merchant_id, id, provider, dedupe_key, outcome, http_status, error, headers, body, received_at)
SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::text[], $5::text[], $6::int[], $7::text[], $8::jsonb[], $9::bytea[], $10::timestamptz[])`,
		merchants, ids, providers, keys, outcomes, statuses, errs, headers, bodies, received, markMerchants, markKeys)
	if err != nil {
		return nil, fmt.Errorf("record deliveries: %w", err)
	}
	return make([]struct{}, n), nil
}
