package redisx_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/redisx"
	"github.com/convida/convida/pkg/testenv"
)

// TestDedupeConcurrent runs many callers at once, so their GETs and SETs
// share pipelines, and checks each one still gets its own answer.
func TestDedupeConcurrent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rdb := testenv.MustRedis(t)
	d := redisx.NewDedupe(rdb, nil)
	prefix := "test:dedupe:" + uuid.NewString() + ":"

	var wg sync.WaitGroup
	for i := range 200 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			key := prefix + uuid.NewString()
			if seen, err := d.Seen(ctx, key); err != nil || seen {
				t.Errorf("caller %d: Seen before Remember = %v, %v; want false, nil", i, seen, err)
				return
			}
			if err := d.Remember(ctx, key, time.Minute); err != nil {
				t.Errorf("caller %d: Remember: %v", i, err)
				return
			}
			if seen, err := d.Seen(ctx, key); err != nil || !seen {
				t.Errorf("caller %d: Seen after Remember = %v, %v; want true, nil", i, seen, err)
			}
			if ttl := rdb.TTL(ctx, key).Val(); ttl <= 0 || ttl > time.Minute {
				t.Errorf("caller %d: ttl %v, want (0, 1m]", i, ttl)
			}
			rdb.Del(ctx, key)
		}()
	}
	wg.Wait()
}

func TestDedupeRedisDown(t *testing.T) {
	t.Parallel()
	rdb := testenv.MustRedis(t)
	d := redisx.NewDedupe(rdb, nil)
	_ = rdb.Close()
	if _, err := d.Seen(context.Background(), "x"); err == nil {
		t.Fatal("Seen on a closed client: want an error (the ingest then skips the fast path)")
	}
}
