package redisx_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"github.com/convida/convida/pkg/redisx"
	"github.com/convida/convida/pkg/testenv"
)

func TestLimiterBurstThenRefuses(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	l := redisx.NewLimiter(testenv.MustRedis(t), nil)
	key := "test:" + uuid.NewString()

	for i, wantRemaining := range []int{2, 1, 0} {
		remaining, retryAfter, resetAfter, err := l.Allow(ctx, key, 1, 3)
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		if retryAfter != 0 {
			t.Fatalf("request %d: retryAfter = %v, want 0 (allowed)", i, retryAfter)
		}
		if remaining != wantRemaining {
			t.Errorf("request %d: remaining = %d, want %d", i, remaining, wantRemaining)
		}
		if resetAfter <= 0 || resetAfter > 3*time.Second {
			t.Errorf("request %d: resetAfter = %v, want (0, 3s]", i, resetAfter)
		}
	}
	remaining, retryAfter, _, err := l.Allow(ctx, key, 1, 3)
	if err != nil {
		t.Fatal(err)
	}
	if retryAfter <= 0 || retryAfter > time.Second {
		t.Errorf("refused: retryAfter = %v, want (0, 1s]", retryAfter)
	}
	if remaining != 0 {
		t.Errorf("refused: remaining = %d, want 0", remaining)
	}

	// Another key has its own allowance.
	if _, retryAfter, _, err := l.Allow(ctx, key+":other", 1, 3); err != nil || retryAfter != 0 {
		t.Errorf("other key: retryAfter %v, err %v; want allowed", retryAfter, err)
	}
}

func TestLimiterRefills(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	l := redisx.NewLimiter(testenv.MustRedis(t), nil)
	key := "test:" + uuid.NewString()
	if _, retryAfter, _, err := l.Allow(ctx, key, 20, 1); err != nil || retryAfter != 0 {
		t.Fatalf("first: retryAfter %v, err %v; want allowed", retryAfter, err)
	}
	_, retryAfter, _, err := l.Allow(ctx, key, 20, 1)
	if err != nil || retryAfter <= 0 {
		t.Fatalf("second: retryAfter %v, err %v; want refused", retryAfter, err)
	}
	time.Sleep(retryAfter + 10*time.Millisecond)
	if _, retryAfter, _, err := l.Allow(ctx, key, 20, 1); err != nil || retryAfter != 0 {
		t.Fatalf("after waiting: retryAfter %v, err %v; want allowed", retryAfter, err)
	}
}

func TestLimiterErrors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	l := redisx.NewLimiter(testenv.MustRedis(t), nil)
	for _, tc := range []struct{ perSecond, burst int }{{0, 1}, {1, 0}, {-1, 5}} {
		if _, _, _, err := l.Allow(ctx, "test:"+uuid.NewString(), tc.perSecond, tc.burst); err == nil {
			t.Errorf("Allow(%d/s, burst %d): no error, want one", tc.perSecond, tc.burst)
		}
	}
	down := redisx.NewLimiter(deadRedis(t), nil)
	if _, _, _, err := down.Allow(ctx, "test:"+uuid.NewString(), 1, 1); err == nil {
		t.Error("Allow with Redis down: no error, want one")
	}
}

// deadRedis returns a client of a Redis that does not answer.
func deadRedis(tb testing.TB) *redis.Client {
	tb.Helper()
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialTimeout: time.Second})
	tb.Cleanup(func() { _ = c.Close() })
	return c
}
