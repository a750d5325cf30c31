package postgres_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/convida/convida/pkg/postgres"
	"github.com/convida/convida/pkg/secretbox"
	"github.com/convida/convida/pkg/testenv"
)

// TestSecretsKeyCheck follows a database's key through its life: the
// first start stores the check value; the same key opens it and another
// does not (the error names SECRETS_KEY and how to rotate); during a
// rotation the new key with the old one as SECRETS_KEY_PREVIOUS opens it;
// the rotation re-seals it, after which the new key alone opens it and the
// old one no longer does.
func TestSecretsKeyCheck(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := testenv.MustPool(t)
	keyA, keyB := secretbox.NewKey(), secretbox.NewKey()
	check := func(box *secretbox.Box) error { return postgres.CheckSecretsKey(ctx, pool, box) }

	if has, err := postgres.HasSecretsCheck(ctx, pool); err != nil || has {
		t.Fatalf("a new database has a check value: %v, %v", has, err)
	}
	if err := check(mustKeys(t, keyA)); err != nil {
		t.Fatalf("first start: %v", err)
	}
	if has, err := postgres.HasSecretsCheck(ctx, pool); err != nil || !has {
		t.Fatalf("the first start stored no check value: %v, %v", has, err)
	}
	if err := check(mustKeys(t, keyA)); err != nil {
		t.Fatalf("the same key again: %v", err)
	}
	err := check(mustKeys(t, keyB))
	if !errors.Is(err, postgres.ErrWrongSecretsKey) {
		t.Fatalf("another key: %v, want ErrWrongSecretsKey", err)
	}
	for _, want := range []string{"SECRETS_KEY cannot open", "SECRETS_KEY_PREVIOUS=<old key>", `"api secrets rotate"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error %q does not say %q", err, want)
		}
	}
	if strings.Contains(err.Error(), keyA) || strings.Contains(err.Error(), keyB) {
		t.Error("the error shows a key")
	}

	rotating := mustKeys(t, keyB, keyA)
	if err := check(rotating); err != nil {
		t.Fatalf("SECRETS_KEY=B, SECRETS_KEY_PREVIOUS=A: %v", err)
	}
	rot, err := postgres.NewSecretsRotation(pool, rotating).Rotate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := rot.Tables["secrets_check"]; got != (postgres.Resealed{Resealed: 1}) {
		t.Errorf("the rotation re-sealed the check value: %+v, want 1 resealed", got)
	}
	if err := check(mustKeys(t, keyB)); err != nil {
		t.Errorf("B alone after the rotation: %v", err)
	}
	if err := check(mustKeys(t, keyA)); !errors.Is(err, postgres.ErrWrongSecretsKey) {
		t.Errorf("A alone after the rotation: %v, want ErrWrongSecretsKey", err)
	}
	again, err := postgres.NewSecretsRotation(pool, mustKeys(t, keyB)).Rotate(ctx)
	if err != nil || again.Tables["secrets_check"] != (postgres.Resealed{AlreadyCurrent: 1}) {
		t.Errorf("second rotation: %+v, %v; want the check value already current", again.Tables["secrets_check"], err)
	}
}

// TestSecretsKeyCheckFirstStartRace: programs starting together on a new
// database store one check value; with two different keys, exactly one of
// them starts.
func TestSecretsKeyCheckFirstStartRace(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, sameKey := range []bool{true, false} {
		pool := testenv.MustPool(t)
		keys := make([]string, 8)
		for i := range keys {
			keys[i] = secretbox.NewKey()
			if sameKey && i > 0 {
				keys[i] = keys[0]
			}
		}
		errs := make([]error, len(keys))
		var wg sync.WaitGroup
		for i, k := range keys {
			wg.Go(func() { errs[i] = postgres.CheckSecretsKey(ctx, pool, mustKeys(t, k)) })
		}
		wg.Wait()
		ok := 0
		for _, err := range errs {
			switch {
			case err == nil:
				ok++
			case !errors.Is(err, postgres.ErrWrongSecretsKey):
				t.Errorf("same key %v: %v", sameKey, err)
			}
		}
		if want := map[bool]int{true: len(keys), false: 1}[sameKey]; ok != want {
			t.Errorf("same key %v: %d programs started, want %d", sameKey, ok, want)
		}
		var rows int
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM secrets_check`).Scan(&rows); err != nil || rows != 1 {
			t.Errorf("same key %v: %d check values (%v), want 1", sameKey, rows, err)
		}
	}
}
