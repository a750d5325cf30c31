package postgres

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/convida/convida/pkg/outbox"
)

// OutboxStore implements outbox.Store.
type OutboxStore struct{ pool *pgxpool.Pool }

var _ outbox.Store = (*OutboxStore)(nil)

// NewOutboxStore returns an OutboxStore.
func NewOutboxStore(pool *pgxpool.Pool) *OutboxStore { return &OutboxStore{pool: pool} }

// MarkRelayed takes the records off the pending queue.
func (s *OutboxStore) MarkRelayed(ctx context.Context, recs []outbox.Record) error {
	merchants, events := make([]uuid.UUID, len(recs)), make([]uuid.UUID, len(recs))
	for i, r := range recs {
		merchants[i], events[i] = r.MerchantID, r.EventID
	}
	_, err := s.pool.Exec(ctx, `DELETE FROM outbox_pending p
USING unnest($1::uuid[], $2::uuid[]) AS k(merchant_id, event_id)
WHERE p.merchant_id = k.merchant_id AND p.event_id = k.event_id`, merchants, events)
	return err
}

// SetAside takes refused records off the pending queue and writes on each
// one's outbox row its error and the time, in one statement: the sweep
// never picks them again, and an operator finds them by set_aside_at
// (migration 00012).
func (s *OutboxStore) SetAside(ctx context.Context, refused []outbox.Refused) error {
	merchants, events, reasons := make([]uuid.UUID, len(refused)), make([]uuid.UUID, len(refused)), make([]string, len(refused))
	for i, f := range refused {
		merchants[i], events[i], reasons[i] = f.Record.MerchantID, f.Record.EventID, f.Err.Error()
	}
	_, err := s.pool.Exec(ctx, `WITH set_aside AS (
  UPDATE outbox o SET set_aside_at = now(), set_aside_error = k.reason
  FROM unnest($1::uuid[], $2::uuid[], $3::text[]) AS k(merchant_id, event_id, reason)
  WHERE o.merchant_id = k.merchant_id AND o.event_id = k.event_id
  RETURNING o.merchant_id, o.event_id)
DELETE FROM outbox_pending p USING set_aside a
WHERE p.merchant_id = a.merchant_id AND p.event_id = a.event_id`, merchants, events, reasons)
	return err
}

// ListUnrelayed returns unrelayed rows written before olderThan, oldest first.
func (s *OutboxStore) ListUnrelayed(ctx context.Context, olderThan time.Time, limit int) ([]outbox.Record, error) {
	rows, err := s.pool.Query(ctx, `SELECT o.merchant_id, o.event_id, o.member_id, o.type, o.payload::text, o.created_at
FROM outbox_pending p JOIN outbox o ON o.merchant_id = p.merchant_id AND o.event_id = p.event_id
WHERE p.created_at < $1 ORDER BY p.created_at LIMIT $2`, olderThan, limit)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (outbox.Record, error) {
		var r outbox.Record
		var payload string
		err := row.Scan(&r.MerchantID, &r.EventID, &r.MemberID, &r.Type, &payload, &r.CreatedAt)
		r.Payload = []byte(payload)
		return r, err
	})
}

func queueOutbox(b *pgx.Batch, recs []outbox.Record) {
	n := len(recs)
	if n == 0 {
		return
	}
	merchant, id, member := make([]uuid.UUID, n), make([]uuid.UUID, n), make([]uuid.UUID, n)
	typ, payload := make([]string, n), make([]string, n)
	created := make([]time.Time, n)
	for i, r := range recs {
		merchant[i], id[i], member[i], typ[i], payload[i], created[i] = r.MerchantID, r.EventID, r.MemberID, r.Type, string(r.Payload), r.CreatedAt
	}
	b.Queue(`WITH written AS (
  INSERT INTO outbox (merchant_id, event_id, member_id, type, payload, created_at)
  SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::text[], $5::json[], $6::timestamptz[])
  RETURNING merchant_id, event_id, created_at)
INSERT INTO outbox_pending (merchant_id, event_id, created_at) SELECT * FROM written`,
		merchant, id, member, typ, payload, created)
}

// insertOutbox writes records inside tx (for non-ledger writers such as
// member creation).
func insertOutbox(ctx context.Context, tx pgx.Tx, recs ...outbox.Record) error {
	b := &pgx.Batch{}
	queueOutbox(b, recs)
	return tx.SendBatch(ctx, b).Close()
}
