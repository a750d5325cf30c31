package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/convida/convida/pkg/postgres"
	"github.com/convida/convida/pkg/testenv"
)

func TestAdvisoryLeaderIsExclusive(t *testing.T) {
	t.Parallel()
	pool := testenv.MustPool(t)
	ctx := context.Background()
	key := time.Now().UnixNano() // unique per run: advisory locks are server-wide
	a, b := postgres.NewAdvisoryLeader(pool, key), postgres.NewAdvisoryLeader(pool, key)
	if lead, err := a.TryLead(ctx); err != nil || !lead {
		t.Fatalf("a.TryLead = %v, %v; want true", lead, err)
	}
	if lead, err := b.TryLead(ctx); err != nil || lead {
		t.Fatalf("b.TryLead while a leads = %v, %v; want false", lead, err)
	}
	if lead, _ := a.TryLead(ctx); !lead {
		t.Fatal("a lost its leadership")
	}
	a.Release(ctx)
	if lead, err := b.TryLead(ctx); err != nil || !lead {
		t.Fatalf("b.TryLead after release = %v, %v; want true", lead, err)
	}
	b.Release(ctx)
}
