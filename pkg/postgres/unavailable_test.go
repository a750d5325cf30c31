package postgres_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/postgres"
	"github.com/convida/convida/pkg/testenv"
)

// TestClassifyOutages gets the errors a store sees while its database goes
// away — refused connections, connections broken under a statement, a
// backend terminated as a shutdown does (57P01), a closed pool — from a
// real server behind a proxy the test cuts, and wants each classified as
// apperr.ServiceUnavailable; the errors of a statement the server refused
// keep their own meaning.
func TestClassifyOutages(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url, proxy := testenv.MustPostgresProxy(t)
	pool, err := postgres.Open(ctx, url, 4)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	admin := testenv.MustPool(t) // another database of the same server, not through the proxy

	errs := map[string]error{}
	_, errs["syntax error"] = pool.Exec(ctx, `SELEKT 1`)
	_, errs["division by zero"] = pool.Exec(ctx, `SELECT 1 / 0`)
	_, errs["invalid input"] = pool.Exec(ctx, `SELECT 1 FROM (VALUES (1)) v(x) WHERE x = $1`, "not a number")

	// A backend terminated: FATAL 57P01, as at a server's shutdown.
	conn, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var pid int32
	if err := conn.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&pid); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Exec(ctx, `SELECT pg_terminate_backend($1)`, pid); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	_, errs["backend terminated"] = conn.Exec(ctx, `SELECT 1`)
	conn.Release()

	// Connections broken under a statement, then refused.
	held, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	broken := make(chan error, 1)
	go func() {
		_, err := held.Exec(ctx, `SELECT pg_sleep(5)`)
		broken <- err
	}()
	time.Sleep(200 * time.Millisecond)
	proxy.Cut()
	errs["connection broken"] = <-broken
	held.Release()
	_, errs["connection refused"] = pool.Exec(ctx, `SELECT 1`)
	errs["begin refused"] = postgres.InTx(ctx, pool, func(tx pgx.Tx) error { return nil })
	timeout, cancel := context.WithTimeout(ctx, time.Millisecond)
	defer cancel()
	time.Sleep(2 * time.Millisecond)
	_, errs["deadline while acquiring"] = pool.Exec(timeout, `SELECT 1`)
	proxy.Restore()
	pool.Close()
	_, errs["closed pool"] = pool.Exec(ctx, `SELECT 1`)

	for name, want := range map[string]apperr.Code{
		"syntax error": apperr.Internal, "division by zero": apperr.Internal, "invalid input": apperr.Internal,
		"backend terminated": apperr.ServiceUnavailable, "connection broken": apperr.ServiceUnavailable,
		"connection refused": apperr.ServiceUnavailable, "begin refused": apperr.ServiceUnavailable,
		"deadline while acquiring": apperr.ServiceUnavailable, "closed pool": apperr.ServiceUnavailable,
	} {
		err := errs[name]
		if err == nil {
			t.Errorf("%s: no error", name)
			continue
		}
		got := postgres.Classify(err)
		if code := apperr.CodeOf(got); code != want {
			t.Errorf("%s: Classify(%v) has code %s, want %s", name, err, code, want)
		}
		if !errors.Is(got, err) {
			t.Errorf("%s: Classify lost the cause %v", name, err)
		}
	}
	// An error that already has a code keeps it.
	notFound := apperr.Errorf(apperr.NotFound, "member not found")
	if got := postgres.Classify(notFound); got != notFound {
		t.Errorf("Classify(not found) = %v, want it unchanged", got)
	}
	if postgres.Classify(nil) != nil {
		t.Error("Classify(nil) != nil")
	}
}
