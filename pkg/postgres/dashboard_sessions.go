package postgres

import (
	"time"

	"github.com/alexedwards/scs/pgxstore"
	"github.com/alexedwards/scs/v2"
	"github.com/jackc/pgx/v5/pgxpool"
)

// NewSessionStore returns the dashboard's session store: scs's pgx store on
// the sessions table of migration 00009, removing expired sessions every
// cleanup (0: never, for tests).
func NewSessionStore(pool *pgxpool.Pool, cleanup time.Duration) scs.Store {
	return pgxstore.NewWithCleanupInterval(pool, cleanup)
}
