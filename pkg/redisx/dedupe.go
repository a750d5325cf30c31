// Package redisx is the Redis adapter: the ingest dedupe fast path,
// idempotency records, rate limits and the channel on which the ledger
// announces command outcomes. Redis holds only what can be rebuilt; every
// caller has a fallback. Every type here calls Redis through the process's
// one Breaker, so that a Redis that is down is skipped at once by all of
// them (breaker.go).
package redisx

import (
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/convida/convida/pkg/batch"
)

// Dedupe remembers keys for a while (intake.Dedupe). Concurrent calls share
// one pipelined round trip: under a burst of webhooks each request's GET
// and SET cost a write and a read system call apiece, which on loopback was
// a tenth of the ingest's CPU.
type Dedupe struct {
	rdb   redis.UniversalClient
	brk   *Breaker
	group *batch.Group[dedupeOp, bool]
}

// dedupeOp is a GET (ttl 0) or a SET with a ttl.
type dedupeOp struct {
	key string
	ttl time.Duration
}

// NewDedupe returns a Dedupe on rdb that skips Redis while brk is open.
// One flusher writes the queued operations in the order they were queued
// (a pipeline runs in order too), so a Seen queued after a Remember finds
// its key: Remember need not wait for Redis (it measured no slower than
// two flushers).
func NewDedupe(rdb redis.UniversalClient, brk *Breaker) *Dedupe {
	d := &Dedupe{rdb: rdb, brk: brk}
	d.group = batch.New(1, 256, d.flush)
	return d
}

// Seen reports whether key was remembered. While the Breaker is open it
// returns ErrUnavailable at once.
func (d *Dedupe) Seen(ctx context.Context, key string) (bool, error) {
	if err := d.brk.Check(); err != nil {
		return false, err
	}
	return d.group.Do(ctx, dedupeOp{key: key})
}

// Remember queues the storing of key for ttl (which must be positive) and
// returns without waiting for Redis: every later Seen of this Dedupe is
// queued behind it, and the caller's answer is not held by the write. A
// write that fails is not reported (the Breaker counts it); a repeat that
// slips through reaches the ledger, which applies a command id once. While
// the Breaker is open it returns ErrUnavailable at once.
func (d *Dedupe) Remember(ctx context.Context, key string, ttl time.Duration) error {
	if ttl <= 0 {
		return errors.New("dedupe: ttl must be positive")
	}
	if err := d.brk.Check(); err != nil {
		return err
	}
	return d.group.Submit(context.WithoutCancel(ctx), dedupeOp{key: key, ttl: ttl})
}

// flush goes through the Breaker too: the operations queued behind a
// flush that found Redis down fail at once.
func (d *Dedupe) flush(ctx context.Context, ops []dedupeOp) ([]bool, error) {
	cmds := make([]redis.Cmder, len(ops))
	err := d.brk.Do(ctx, func(ctx context.Context) error {
		_, err := d.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for i, op := range ops {
				if op.ttl > 0 {
					cmds[i] = p.Set(ctx, op.key, 1, op.ttl)
				} else {
					cmds[i] = p.Exists(ctx, op.key)
				}
			}
			return nil
		})
		return err
	})
	if err != nil {
		return nil, err
	}
	seen := make([]bool, len(ops))
	for i, c := range cmds {
		if e, ok := c.(*redis.IntCmd); ok {
			seen[i] = e.Val() > 0
		}
	}
	return seen, nil
}
