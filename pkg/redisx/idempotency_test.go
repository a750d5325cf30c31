package redisx_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/redisx"
	"github.com/convida/convida/pkg/testenv"
)

func TestIdempotencyLifecycle(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := redisx.NewIdempotency(testenv.MustRedis(t), nil)
	scope, key := uuid.NewString(), "key:with:colons"

	claim, answer, err := s.Begin(ctx, scope, key, "fp1", time.Minute)
	if err != nil || claim == "" || answer != nil {
		t.Fatalf("first Begin = %q, %q, %v; want a claim", claim, answer, err)
	}
	if _, _, err := s.Begin(ctx, scope, key, "fp1", time.Minute); !apperr.Is(err, apperr.IdempotencyInUse) {
		t.Errorf("Begin while in flight: err %v, want %s", err, apperr.IdempotencyInUse)
	}
	if _, _, err := s.Begin(ctx, scope, key, "fp2", time.Minute); !apperr.Is(err, apperr.IdempotencyReused) {
		t.Errorf("Begin with another fingerprint in flight: err %v, want %s", err, apperr.IdempotencyReused)
	}
	// The same key in another scope is another record.
	if other, _, err := s.Begin(ctx, uuid.NewString(), key, "fp2", time.Minute); err != nil || other == "" {
		t.Errorf("Begin in another scope = %q, %v; want a claim", other, err)
	}

	if err := s.Complete(ctx, claim, []byte("stored answer"), time.Minute); err != nil {
		t.Fatalf("Complete: %v", err)
	}
	again, answer, err := s.Begin(ctx, scope, key, "fp1", time.Minute)
	if err != nil || again != "" || string(answer) != "stored answer" {
		t.Errorf("Begin after Complete = %q, %q, %v; want the stored answer", again, answer, err)
	}
	if _, _, err := s.Begin(ctx, scope, key, "fp2", time.Minute); !apperr.Is(err, apperr.IdempotencyReused) {
		t.Errorf("Begin with another fingerprint after Complete: err %v, want %s", err, apperr.IdempotencyReused)
	}
	// A completed record is no longer a claim: releasing it does nothing.
	if err := s.Release(ctx, claim); err != nil {
		t.Fatalf("Release of a completed claim: %v", err)
	}
	if _, answer, err := s.Begin(ctx, scope, key, "fp1", time.Minute); err != nil || string(answer) != "stored answer" {
		t.Errorf("Begin after a late Release = %q, %v; want the stored answer", answer, err)
	}
}

func TestIdempotencyRelease(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := redisx.NewIdempotency(testenv.MustRedis(t), nil)
	scope := uuid.NewString()
	claim, _, err := s.Begin(ctx, scope, "k", "fp", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Release(ctx, claim); err != nil {
		t.Fatalf("Release: %v", err)
	}
	if claim2, _, err := s.Begin(ctx, scope, "k", "fp2", time.Minute); err != nil || claim2 == "" {
		t.Errorf("Begin after Release = %q, %v; want a new claim (even with another fingerprint)", claim2, err)
	}
}

// TestIdempotencyExpiredClaim: a request that outlives its lock loses the
// claim; its late Complete and Release leave the next claimant alone.
func TestIdempotencyExpiredClaim(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := redisx.NewIdempotency(testenv.MustRedis(t), nil)
	scope := uuid.NewString()
	stale, _, err := s.Begin(ctx, scope, "k", "fp", 50*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	fresh, _, err := s.Begin(ctx, scope, "k", "fp", time.Minute)
	if err != nil || fresh == "" {
		t.Fatalf("Begin after the lock expired = %q, %v; want a claim", fresh, err)
	}
	if err := s.Complete(ctx, stale, []byte("stale"), time.Minute); err != nil {
		t.Fatalf("stale Complete: %v", err)
	}
	if err := s.Release(ctx, stale); err != nil {
		t.Fatalf("stale Release: %v", err)
	}
	if _, _, err := s.Begin(ctx, scope, "k", "fp", time.Minute); !apperr.Is(err, apperr.IdempotencyInUse) {
		t.Errorf("Begin after stale Complete/Release: err %v, want %s (the fresh claim holds)", err, apperr.IdempotencyInUse)
	}
	if err := s.Complete(ctx, fresh, []byte("fresh"), time.Minute); err != nil {
		t.Fatal(err)
	}
	if _, answer, err := s.Begin(ctx, scope, "k", "fp", time.Minute); err != nil || string(answer) != "fresh" {
		t.Errorf("Begin = %q, %v; want the fresh answer", answer, err)
	}
}

func TestIdempotencyErrors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	down := redisx.NewIdempotency(deadRedis(t), nil)
	_, _, err := down.Begin(ctx, uuid.NewString(), "k", "fp", time.Minute)
	if err == nil || apperr.Is(err, apperr.IdempotencyInUse) || apperr.Is(err, apperr.IdempotencyReused) {
		t.Errorf("Begin with Redis down: err %v, want a plain error", err)
	}
	s := redisx.NewIdempotency(testenv.MustRedis(t), nil)
	for _, claim := range []string{"", "nonsense", "0123456789abcdef0123456789abcdef:other:key"} {
		if err := s.Complete(ctx, claim, []byte("x"), time.Minute); err == nil {
			t.Errorf("Complete(%q): no error, want one", claim)
		}
		if err := s.Release(ctx, claim); err == nil {
			t.Errorf("Release(%q): no error, want one", claim)
		}
	}
}
