package postgres

import (
	"github.com/alexedwards/scs/pgxstore"
	"github.com/alexedwards/scs/v2"
	"github.com/jackc/pgx/v5/pgxpool"
)

// NewSessionStore returns the dashboard's session store: scs's pgx store on
// the sessions table of migration 00009. Its own cleanup goroutine is off
// (it would outlive every router a test builds, and run on every replica);
// the scheduler's retention sweep deletes expired sessions instead, and the
// sign-in attempts older than a day (RetentionStore).
func NewSessionStore(pool *pgxpool.Pool) scs.Store {
	return pgxstore.NewWithCleanupInterval(pool, 0)
}
