package postgres

import (
	"context"
	"sync"

	"github.com/jackc/pgx/v5/pgxpool"
)

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
