package postgres

import (
	"context"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/convida/convida/pkg/webhook"
)

const attemptColumns = `merchant_id, id, webhook_id, event_id, event_type, status, attempt, response_status,
  response_body, error, duration_ms, next_retry_at, created_at`

func scanAttempt(row pgx.Row) (webhook.Attempt, error) {
	var a webhook.Attempt
	var status *int32
	var next *time.Time
	err := row.Scan(&a.MerchantID, &a.ID, &a.WebhookID, &a.EventID, &a.EventType, &a.Status, &a.Attempt, &status,
		&a.ResponseBody, &a.Error, &a.DurationMS, &next, &a.CreatedAt)
	if status != nil {
		a.ResponseStatus = int(*status)
	}
	if next != nil {
		a.NextRetryAt = *next
	}
	return a, err
}

// storableText makes a receiver's answer storable as PostgreSQL text, which
// refuses NUL and invalid UTF-8: a hostile or broken receiver must not be
// able to make the log write (and with it the whole batch) fail.
func storableText(s string) string {
	return strings.ToValidUTF8(strings.ReplaceAll(s, "\x00", ""), "\uFFFD")
}

// queueAttempts queues one INSERT of every attempt whose Status is set. A
// zero ID is filled in (in attempts), a zero CreatedAt becomes now().
// Attempts of an endpoint deleted meanwhile are skipped rather than failing
// the statement (their log would be deleted with the endpoint anyway), and
// an ID already stored is skipped, so a repeated write is harmless.
func queueAttempts(b *pgx.Batch, attempts []webhook.Attempt) {
	n := 0
	for i := range attempts {
		if attempts[i].Status != "" {
			n++
		}
	}
	if n == 0 {
		return
	}
	merchants, ids, webhooks, events := make([]uuid.UUID, 0, n), make([]uuid.UUID, 0, n), make([]uuid.UUID, 0, n), make([]uuid.UUID, 0, n)
	types, statuses, bodies, errs := make([]string, 0, n), make([]string, 0, n), make([]string, 0, n), make([]string, 0, n)
	numbers := make([]int32, 0, n)
	codes := make([]*int32, 0, n)
	durations := make([]int64, 0, n)
	nexts, created := make([]*time.Time, 0, n), make([]*time.Time, 0, n)
	for i := range attempts {
		a := &attempts[i]
		if a.Status == "" {
			continue
		}
		if a.ID == uuid.Nil {
			a.ID = uuid.New()
		}
		merchants, ids, webhooks, events = append(merchants, a.MerchantID), append(ids, a.ID), append(webhooks, a.WebhookID), append(events, a.EventID)
		types, statuses = append(types, a.EventType), append(statuses, a.Status)
		bodies, errs = append(bodies, storableText(a.ResponseBody)), append(errs, storableText(a.Error))
		numbers, durations = append(numbers, int32(a.Attempt)), append(durations, a.DurationMS)
		codes = append(codes, nonZero(int32(a.ResponseStatus)))
		nexts, created = append(nexts, timePtr(a.NextRetryAt)), append(created, timePtr(a.CreatedAt))
	}
	b.Queue(`INSERT INTO webhook_attempts (merchant_id, id, webhook_id, event_id, event_type, status, attempt,
  response_status, response_body, error, duration_ms, next_retry_at, created_at)
SELECT u.merchant_id, u.id, u.webhook_id, u.event_id, u.event_type, u.status, u.attempt, u.response_status,
  u.response_body, u.error, u.duration_ms, u.next_retry_at, COALESCE(u.created_at, now())
FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::uuid[], $5::text[], $6::text[], $7::int[], $8::int[],
  $9::text[], $10::text[], $11::bigint[], $12::timestamptz[], $13::timestamptz[])
  AS u(merchant_id, id, webhook_id, event_id, event_type, status, attempt, response_status, response_body, error,
    duration_ms, next_retry_at, created_at)
WHERE EXISTS (SELECT 1 FROM webhook_endpoints e WHERE e.merchant_id = u.merchant_id AND e.id = u.webhook_id)
ON CONFLICT (merchant_id, id) DO NOTHING`,
		merchants, ids, webhooks, events, types, statuses, numbers, codes, bodies, errs, durations, nexts, created)
}

func nonZero(v int32) *int32 {
	if v == 0 {
		return nil
	}
	return &v
}

func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

// RecordAttempts writes attempts to the delivery log in one statement,
// filling in zero IDs (in attempts). Attempts of an endpoint that no longer
// exists are dropped; an ID already stored is skipped, so repeating the
// call is safe.
func (s *WebhookStore) RecordAttempts(ctx context.Context, attempts []webhook.Attempt) error {
	b := &pgx.Batch{}
	queueAttempts(b, attempts)
	if b.Len() == 0 {
		return nil
	}
	return s.pool.SendBatch(ctx, b).Close()
}

// ListAttempts returns a page of the endpoint's delivery log, newest first
// with ties broken by id, and the number of records matching f.Status.
func (s *WebhookStore) ListAttempts(ctx context.Context, merchantID, webhookID uuid.UUID, f webhook.AttemptFilter) ([]webhook.Attempt, int, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+attemptColumns+`, count(*) OVER ()
FROM webhook_attempts WHERE merchant_id = $1 AND webhook_id = $2 AND ($3 = '' OR status = $3)
ORDER BY created_at DESC, id DESC OFFSET $4 LIMIT $5`, merchantID, webhookID, f.Status, f.Offset, f.Limit)
	if err != nil {
		return nil, 0, err
	}
	total := 0
	list, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (webhook.Attempt, error) {
		var a webhook.Attempt
		var status *int32
		var next *time.Time
		err := row.Scan(&a.MerchantID, &a.ID, &a.WebhookID, &a.EventID, &a.EventType, &a.Status, &a.Attempt, &status,
			&a.ResponseBody, &a.Error, &a.DurationMS, &next, &a.CreatedAt, &total)
		if status != nil {
			a.ResponseStatus = int(*status)
		}
		if next != nil {
			a.NextRetryAt = *next
		}
		return a, err
	})
	if err != nil {
		return nil, 0, err
	}
	if len(list) == 0 && f.Offset > 0 {
		// A page past the end has no row to carry the count.
		err = s.pool.QueryRow(ctx, `SELECT count(*) FROM webhook_attempts
WHERE merchant_id = $1 AND webhook_id = $2 AND ($3 = '' OR status = $3)`, merchantID, webhookID, f.Status).Scan(&total)
	}
	if list == nil {
		list = []webhook.Attempt{}
	}
	return list, total, err
}

// FindAttempt returns one record of the endpoint's delivery log, or
// apperr.NotFound.
func (s *WebhookStore) FindAttempt(ctx context.Context, merchantID, webhookID, id uuid.UUID) (*webhook.Attempt, error) {
	a, err := scanAttempt(s.pool.QueryRow(ctx, `SELECT `+attemptColumns+` FROM webhook_attempts
WHERE merchant_id = $1 AND webhook_id = $2 AND id = $3`, merchantID, webhookID, id))
	if err != nil {
		return nil, notFound(err, "delivery log record not found")
	}
	return &a, nil
}

// LastAttemptNumber returns the highest attempt number logged for the
// event at the endpoint, 0 when none.
func (s *WebhookStore) LastAttemptNumber(ctx context.Context, merchantID, webhookID, eventID uuid.UUID) (int, error) {
	var n int
	err := s.pool.QueryRow(ctx, `SELECT COALESCE(max(attempt), 0) FROM webhook_attempts
WHERE merchant_id = $1 AND webhook_id = $2 AND event_id = $3`, merchantID, webhookID, eventID).Scan(&n)
	return n, err
}
