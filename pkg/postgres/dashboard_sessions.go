package postgres

import (
	"context"

	"github.com/alexedwards/scs/pgxstore"
	"github.com/alexedwards/scs/v2"
	"github.com/jackc/pgx/v5/pgxpool"
)

// NewSessionStore returns the dashboard's session store: scs's pgx store on
// the sessions table of migration 00009. Its own cleanup goroutine is off
// (it would outlive every router a test builds); the dashboard deletes
// expired sessions at each sign-in instead (DeleteExpiredSessions).
func NewSessionStore(pool *pgxpool.Pool) scs.Store {
	return pgxstore.NewWithCleanupInterval(pool, 0)
}

// DeleteExpiredSessions removes the sessions past their expiry.
func (s *DashboardUserStore) DeleteExpiredSessions(ctx context.Context) error {
	_, err := s.pool.Exec(ctx, `DELETE FROM sessions WHERE expiry < now()`)
	return err
}
