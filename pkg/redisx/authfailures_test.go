package redisx_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/convida/convida/pkg/redisx"
	"github.com/convida/convida/pkg/testenv"
)

// The burst of failures is allowed, the one that spends it blocks the
// client in memory, and a second process (another replica) that finds the
// count spent is told the failure is over the allowance.
func TestAuthFailuresBlockAfterTheBurst(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rdb := testenv.MustRedis(t)
	edge := "test-" + uuid.NewString()
	reg := prometheus.NewRegistry()
	a := redisx.NewAuthFailures(rdb, nil, redisx.AuthFailuresConfig{Edge: edge, PerMinute: 20, Burst: 3, Registry: reg})
	other := redisx.NewAuthFailures(rdb, nil, redisx.AuthFailuresConfig{Edge: edge, PerMinute: 20, Burst: 3, Registry: reg})
	const client = "198.51.100.7"

	for i := 1; i <= 2; i++ {
		if wait, over := a.Failed(ctx, client); wait != 0 || over {
			t.Fatalf("failure %d of a burst of 3: (%v, %v), want (0, false)", i, wait, over)
		}
		if a.Blocked(client) != 0 {
			t.Fatalf("blocked after %d failures of a burst of 3", i)
		}
	}
	wait, over := a.Failed(ctx, client)
	if over || wait <= 0 || wait > 3*time.Second {
		t.Fatalf("the failure that spends the burst: (%v, %v), want a block of up to 3 s (20 a minute), not over", wait, over)
	}
	if got := a.Blocked(client); got <= 0 || got > wait {
		t.Errorf("Blocked = %v after a block of %v", got, wait)
	}
	if a.Blocked("198.51.100.8") != 0 {
		t.Error("another client is blocked")
	}
	// The other replica has no block in memory until its own failure
	// from the client, which Redis refuses.
	if other.Blocked(client) != 0 {
		t.Fatal("a block crossed processes without Redis")
	}
	if wait, over := other.Failed(ctx, client); !over || wait <= 0 {
		t.Errorf("the other replica's failure: (%v, %v), want over with a wait", wait, over)
	}
	if other.Blocked(client) == 0 {
		t.Error("the other replica did not block the client after Redis refused its failure")
	}
	a.Refused()
	other.Refused()
	if got := blockedTotal(t, reg, edge); got != 2 {
		t.Errorf("convida_auth_failures_blocked_total{edge=%q} = %v, want 2 (both replicas' refusals on one registry)", edge, got)
	}
}

func blockedTotal(t *testing.T, reg *prometheus.Registry, edge string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "convida_auth_failures_blocked_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "edge" && l.GetValue() == edge {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}

// Redis down: failures are not counted and nothing is blocked.
func TestAuthFailuresFailOpen(t *testing.T) {
	t.Parallel()
	rdb := redis.NewClient(redisx.FailFast(&redis.Options{Addr: "127.0.0.1:1"}))
	t.Cleanup(func() { _ = rdb.Close() })
	a := redisx.NewAuthFailures(rdb, nil, redisx.AuthFailuresConfig{Edge: "down", Burst: 1})
	for i := range 3 {
		if wait, over := a.Failed(context.Background(), "198.51.100.7"); wait != 0 || over {
			t.Fatalf("failure %d with Redis down: (%v, %v), want (0, false)", i+1, wait, over)
		}
	}
	if a.Blocked("198.51.100.7") != 0 {
		t.Error("blocked with Redis down")
	}
}

func TestNilAuthFailuresLimitsNothing(t *testing.T) {
	t.Parallel()
	var a *redisx.AuthFailures
	if wait, over := a.Failed(context.Background(), "x"); wait != 0 || over || a.Blocked("x") != 0 {
		t.Error("a nil AuthFailures limited")
	}
	a.Refused()
}
