package postgres

import (
	"context"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/convida/convida/pkg/scheduler"
)

// SchedulerStore implements scheduler.Store.
type SchedulerStore struct{ pool *pgxpool.Pool }

var _ scheduler.Store = (*SchedulerStore)(nil)

// NewSchedulerStore returns a SchedulerStore.
func NewSchedulerStore(pool *pgxpool.Pool) *SchedulerStore { return &SchedulerStore{pool: pool} }

// DueReferrals returns pending referrals whose warranty expired by now.
func (s *SchedulerStore) DueReferrals(ctx context.Context, now time.Time, limit int, skip []uuid.UUID) ([]scheduler.DueReferral, error) {
	if skip == nil {
		skip = []uuid.UUID{}
	}
	rows, err := s.pool.Query(ctx, `SELECT merchant_id, member_id, id FROM referrals
WHERE status = 'pending' AND warranty_expires_at <= $1 AND NOT (id = ANY($3::uuid[]))
ORDER BY warranty_expires_at LIMIT $2`, now, limit, skip)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (scheduler.DueReferral, error) {
		var d scheduler.DueReferral
		err := row.Scan(&d.MerchantID, &d.MemberID, &d.ReferralID)
		return d, err
	})
}

// AdvisoryLeader is a scheduler.Leader on a Postgres session advisory lock
// held by one dedicated connection: the lock ends with the connection, so
// a dead leader's lock is freed by the server.
type AdvisoryLeader struct {
	pool *pgxpool.Pool
	key  int64

	mu   sync.Mutex
	conn *pgxpool.Conn
}

// NewAdvisoryLeader returns a leader lock on key.
func NewAdvisoryLeader(pool *pgxpool.Pool, key int64) *AdvisoryLeader {
	return &AdvisoryLeader{pool: pool, key: key}
}

// TryLead reports whether this process holds the lock, taking it if free.
func (l *AdvisoryLeader) TryLead(ctx context.Context) (bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.conn != nil {
		if err := l.conn.Ping(ctx); err == nil {
			return true, nil
		}
		l.conn.Release()
		l.conn = nil
	}
	conn, err := l.pool.Acquire(ctx)
	if err != nil {
		return false, err
	}
	var got bool
	if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1)`, l.key).Scan(&got); err != nil || !got {
		conn.Release()
		return false, err
	}
	l.conn = conn
	return true, nil
}

// Release gives up leadership.
func (l *AdvisoryLeader) Release(ctx context.Context) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.conn != nil {
		_, _ = l.conn.Exec(ctx, `SELECT pg_advisory_unlock($1)`, l.key)
		l.conn.Release()
		l.conn = nil
	}
}
