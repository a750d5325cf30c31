// Package testenv gives tests the real parts: a PostgreSQL database cloned
// from a migrated template, a Redis client, and an embedded Kafka broker
// over TCP. Nothing here is a fake. It also holds what every package's
// tests start from, so no package keeps its own copy: a merchant row with
// its settings (seed.go), a tenant with an API key, a campaign, and
// Eventually for conditions reached asynchronously.
package testenv

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/convida/convida/migrations"
	"github.com/convida/convida/pkg/postgres"
)

// ServerURL is the PostgreSQL server the tests use (TEST_DATABASE_URL
// overrides it); the database part is replaced per test.
func ServerURL() string {
	if u := os.Getenv("TEST_DATABASE_URL"); u != "" {
		return u
	}
	return "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"
}

// DatabaseURL returns ServerURL with the database name replaced.
func DatabaseURL(name string) string {
	cfg, err := pgx.ParseConfig(ServerURL())
	if err != nil {
		panic(err)
	}
	host := cfg.Host
	return fmt.Sprintf("postgres://%s@%s:%d/%s?sslmode=disable", cfg.User, host, cfg.Port, name)
}

// templateName is derived from the migrations' content, so a schema change
// gets a new template and no stale one is reused.
func templateName() string {
	h := sha256.New()
	_ = fs.WalkDir(migrations.FS, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, _ := migrations.FS.ReadFile(path)
		h.Write([]byte(path))
		h.Write(b)
		return nil
	})
	return "convida_tpl_" + hex.EncodeToString(h.Sum(nil))[:12]
}

// MustDatabase creates a fresh database for the test from the migrated
// template and drops it at cleanup. It returns the database URL.
func MustDatabase(tb testing.TB) string {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	admin, err := pgx.Connect(ctx, ServerURL())
	if err != nil {
		tb.Fatalf("testenv: connect to postgres: %v", err)
	}
	defer admin.Close(ctx)
	tpl := templateName()
	if err := ensureTemplate(ctx, admin, tpl); err != nil {
		tb.Fatalf("testenv: template: %v", err)
	}
	name := "convida_t_" + strings.ReplaceAll(uuid.NewString(), "-", "")[:16]
	// CREATE DATABASE … TEMPLATE fails while another session is connected
	// to the template; retry briefly.
	for attempt := 0; ; attempt++ {
		_, err = admin.Exec(ctx, fmt.Sprintf("CREATE DATABASE %s TEMPLATE %s", name, tpl))
		if err == nil || attempt > 50 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		tb.Fatalf("testenv: create database: %v", err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		c, err := pgx.Connect(ctx, ServerURL())
		if err != nil {
			return
		}
		defer c.Close(ctx)
		_, _ = c.Exec(ctx, fmt.Sprintf("DROP DATABASE IF EXISTS %s WITH (FORCE)", name))
	})
	return DatabaseURL(name)
}

// MustPool returns a pool on a fresh database, closed at cleanup.
func MustPool(tb testing.TB) *pgxpool.Pool {
	tb.Helper()
	pool, err := postgres.Open(context.Background(), MustDatabase(tb), 20)
	if err != nil {
		tb.Fatalf("testenv: %v", err)
	}
	tb.Cleanup(pool.Close)
	return pool
}

// ensureTemplate creates and migrates the template once, under an advisory
// lock because test binaries of several packages run at the same time.
func ensureTemplate(ctx context.Context, admin *pgx.Conn, tpl string) error {
	if _, err := admin.Exec(ctx, "SELECT pg_advisory_lock(424242)"); err != nil {
		return err
	}
	defer admin.Exec(context.Background(), "SELECT pg_advisory_unlock(424242)") //nolint:errcheck
	var exists bool
	if err := admin.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1 AND datistemplate)", tpl).Scan(&exists); err != nil {
		return err
	}
	if exists {
		return nil
	}
	if _, err := admin.Exec(ctx, fmt.Sprintf("DROP DATABASE IF EXISTS %s WITH (FORCE)", tpl)); err != nil {
		return err
	}
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+tpl); err != nil {
		return err
	}
	pool, err := postgres.Open(ctx, DatabaseURL(tpl), 2)
	if err != nil {
		return err
	}
	err = postgres.Migrate(ctx, pool)
	pool.Close()
	if err != nil {
		return err
	}
	_, err = admin.Exec(ctx, fmt.Sprintf("ALTER DATABASE %s WITH is_template true", tpl))
	return err
}
