package kafkabus

import (
	"context"
	"math/rand/v2"
	"time"
)

// backoff is a capped exponential backoff with "equal jitter": the n-th wait
// lies in [d/2, d) where d = min(max, base·2ⁿ), so retries of many partitions
// spread out without ever collapsing to zero.
type backoff struct {
	base, max time.Duration
	attempt   int
}

func (b *backoff) next() time.Duration {
	d := b.base << min(b.attempt, 30)
	if d <= 0 || d > b.max {
		d = b.max
	}
	b.attempt++
	half := d / 2
	return half + rand.N(d-half) // d ≥ 1, so d-half ≥ 1
}

func (b *backoff) reset() { b.attempt = 0 }

// sleep waits for d or until ctx ends, reporting whether the full wait passed.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
