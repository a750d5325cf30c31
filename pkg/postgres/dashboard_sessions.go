package postgres

import (
	"context"
	"time"

	"github.com/alexedwards/scs/pgxstore"
	"github.com/alexedwards/scs/v2"
	"github.com/jackc/pgx/v5/pgxpool"
)

// NewSessionStore returns the dashboard's session store: scs's pgx store on
// the sessions table of migration 00009. Its own cleanup goroutine is off
// (it would outlive every router a test builds, and run on every replica);
// the scheduler's leader purges expired sessions instead (PurgeExpired).
func NewSessionStore(pool *pgxpool.Pool) scs.Store {
	return pgxstore.NewWithCleanupInterval(pool, 0)
}

// signInAttemptsKept is how long sign-in attempts are kept: longer than
// any throttle window.
const signInAttemptsKept = 24 * time.Hour

// PurgeExpired deletes the sessions expired at now and the sign-in
// attempts older than a day. It is a scheduler task (program.NewScheduler):
// the dashboard itself never waits for it.
func (s *DashboardUserStore) PurgeExpired(ctx context.Context, now time.Time) error {
	if _, err := s.pool.Exec(ctx, `DELETE FROM sessions WHERE expiry < $1`, now); err != nil {
		return err
	}
	_, err := s.pool.Exec(ctx, `DELETE FROM dashboard_sign_in_attempts WHERE at < $1`, now.Add(-signInAttemptsKept))
	return err
}
