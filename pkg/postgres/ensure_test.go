package postgres_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/convida/convida/pkg/postgres"
	"github.com/convida/convida/pkg/testenv"
)

// TestEnsureDatabaseWithPoolSettings: a DATABASE_URL that sizes the pool
// creates its database and opens a pool of that size (pool_* settings are
// the pool's, not the server's).
func TestEnsureDatabaseWithPoolSettings(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	name := "convida_ensure_" + strings.ReplaceAll(uuid.NewString(), "-", "")
	url := testenv.DatabaseURL(name) + "&pool_max_conns=7"
	t.Cleanup(func() {
		if admin, err := pgx.Connect(ctx, testenv.ServerURL()); err == nil {
			_, _ = admin.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
			admin.Close(ctx)
		}
	})
	if err := postgres.EnsureDatabase(ctx, url); err != nil {
		t.Fatalf("EnsureDatabase: %v", err)
	}
	if err := postgres.EnsureDatabase(ctx, url); err != nil {
		t.Fatalf("EnsureDatabase again: %v", err)
	}
	pool, err := postgres.Open(ctx, url, 0)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer pool.Close()
	if got := pool.Config().MaxConns; got != 7 {
		t.Errorf("MaxConns = %d, want 7 from pool_max_conns", got)
	}
}
