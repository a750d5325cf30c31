package postgres_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"testing"
	"time"

	"github.com/convida/convida/pkg/postgres"
	"github.com/convida/convida/pkg/testenv"
)

// TestSessionStoreKeepsHashesOnItsClock: a committed session is found by
// its token, kept as the token's SHA-256 (no row holds the token), valid
// for the lifetime scs asked for counted on the store's clock, gone once
// that clock passes it or the session is deleted.
func TestSessionStoreKeepsHashesOnItsClock(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := testenv.MustPool(t)
	clock := testenv.NewClock(t)
	store := postgres.NewSessionStore(pool, clock.Now)
	const token = "session-token-of-ana"
	if err := store.CommitCtx(ctx, token, []byte("data"), time.Now().Add(2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	b, found, err := store.FindCtx(ctx, token)
	if err != nil || !found || string(b) != "data" {
		t.Fatalf("Find after Commit = %q, %v, %v; want the data", b, found, err)
	}
	if _, found, _ := store.FindCtx(ctx, token+"x"); found {
		t.Error("another token finds the session")
	}
	var stored string
	var expiry time.Time
	if err := pool.QueryRow(ctx, `SELECT token_hash, expiry FROM sessions`).Scan(&stored, &expiry); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(token))
	if stored != hex.EncodeToString(sum[:]) {
		t.Errorf("the row keeps %q, want the token's SHA-256", stored)
	}
	if want := clock.Now().Add(2 * time.Hour); expiry.Sub(want).Abs() > time.Minute {
		t.Errorf("expiry %v, want two hours from the store's clock (%v)", expiry, want)
	}
	clock.Advance(2*time.Hour + time.Second)
	if _, found, err := store.FindCtx(ctx, token); found || err != nil {
		t.Errorf("Find past the expiry on the store's clock = %v, %v; want not found", found, err)
	}
	clock.Advance(-time.Hour)
	if err := store.DeleteCtx(ctx, token); err != nil {
		t.Fatal(err)
	}
	if _, found, _ := store.FindCtx(ctx, token); found {
		t.Error("a deleted session is found")
	}
}
