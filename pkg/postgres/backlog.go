package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// BacklogStore reads the figures of the operator's alerts across every
// merchant (scheduler.Gauges): the outbox events waiting for their relay
// and the webhook endpoints failing or switched off.
type BacklogStore struct{ pool *pgxpool.Pool }

// NewBacklogStore returns a BacklogStore.
func NewBacklogStore(pool *pgxpool.Pool) *BacklogStore { return &BacklogStore{pool: pool} }

// OutboxBacklog counts, up to limit, the waiting events written before
// olderThan, and returns when the oldest waiting event was written (zero
// when none). Both read the outbox_pending_created index; the count stops
// at limit so that a stalled relay's backlog costs a bounded scan.
func (s *BacklogStore) OutboxBacklog(ctx context.Context, olderThan time.Time, limit int) (int, time.Time, error) {
	var n int
	var oldest *time.Time
	err := s.pool.QueryRow(ctx, `SELECT
  (SELECT count(*) FROM (SELECT 1 FROM outbox_pending WHERE created_at < $1 LIMIT $2) p),
  (SELECT min(created_at) FROM outbox_pending)`, olderThan, limit).Scan(&n, &oldest)
	if err != nil || oldest == nil {
		return n, time.Time{}, err
	}
	return n, *oldest, nil
}

// EndpointHealth counts the active endpoints failing (failing_since set)
// and those the dispatcher switched off (disabled_reason set: a merchant
// who switches an endpoint off clears it), as the dashboard's overview
// counts one merchant's, and returns the earliest failing_since of an
// active endpoint (zero when none fails).
func (s *BacklogStore) EndpointHealth(ctx context.Context) (int, int, time.Time, error) {
	var failing, disabled int
	var since *time.Time
	err := s.pool.QueryRow(ctx, `SELECT
  count(*) FILTER (WHERE is_active AND failing_since IS NOT NULL),
  count(*) FILTER (WHERE NOT is_active AND disabled_reason <> ''),
  min(failing_since) FILTER (WHERE is_active)
FROM webhook_endpoints`).Scan(&failing, &disabled, &since)
	if err != nil || since == nil {
		return failing, disabled, time.Time{}, err
	}
	return failing, disabled, *since, nil
}
