// Package redisx is the Redis adapter: the ingest dedupe fast path, and
// (with the full API) idempotency records, rate limits and the channel on
// which the ledger announces command outcomes. Redis holds only what can be
// rebuilt; every caller has a database fallback.
package redisx

import (
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"
)

// Dedupe remembers keys for a while (ingest.Dedupe).
type Dedupe struct{ rdb redis.UniversalClient }

// NewDedupe returns a Dedupe on rdb.
func NewDedupe(rdb redis.UniversalClient) *Dedupe { return &Dedupe{rdb: rdb} }

// Seen reports whether key was remembered.
func (d *Dedupe) Seen(ctx context.Context, key string) (bool, error) {
	err := d.rdb.Get(ctx, key).Err()
	if errors.Is(err, redis.Nil) {
		return false, nil
	}
	return err == nil, err
}

// Remember stores key for ttl.
func (d *Dedupe) Remember(ctx context.Context, key string, ttl time.Duration) error {
	return d.rdb.Set(ctx, key, 1, ttl).Err()
}
