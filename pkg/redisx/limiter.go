package redisx

import (
	"context"
	"fmt"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"
)

// Limiter is a GCRA rate limiter in Redis (go-redis/redis_rate): a key may
// make burst requests at once, and the allowance refills at perSecond. It
// implements httpapi.Limiter. Its state is one small key per limited
// identity ("rate:" + key) that expires once the allowance is full again,
// so losing Redis loses nothing that matters. While the Breaker is open
// Allow returns ErrUnavailable at once.
type Limiter struct {
	l   *redis_rate.Limiter
	brk *Breaker
}

// NewLimiter returns a Limiter on rdb that skips Redis while brk is open.
func NewLimiter(rdb redis.UniversalClient, brk *Breaker) *Limiter {
	return &Limiter{l: redis_rate.NewLimiter(rdb), brk: brk}
}

// Allow counts one request of key against a limit of perSecond requests per
// second with a burst of burst. A refused request is not counted.
//
// retryAfter is positive exactly when the request is refused: it is how long
// until one request would be allowed. remaining is how many more requests
// would be allowed right now, and resetAfter how long until the allowance
// is full (burst) again. An error means Redis did not answer; perSecond or
// burst below 1 is an error too.
func (l *Limiter) Allow(ctx context.Context, key string, perSecond, burst int) (remaining int, retryAfter, resetAfter time.Duration, err error) {
	if perSecond < 1 || burst < 1 {
		return 0, 0, 0, fmt.Errorf("redisx: rate limit %d/s burst %d: both must be at least 1", perSecond, burst)
	}
	res, err := l.allow(ctx, key, redis_rate.Limit{Rate: perSecond, Burst: burst, Period: time.Second})
	if err != nil {
		return 0, 0, 0, err
	}
	resetAfter = max(res.ResetAfter, 0)
	if res.Allowed > 0 {
		return res.Remaining, 0, resetAfter, nil
	}
	// Refused: redis_rate reports a positive RetryAfter; never let a
	// rounding to zero read as "allowed".
	return 0, max(res.RetryAfter, time.Millisecond), resetAfter, nil
}

// allow counts one request of key against limit, through the Breaker.
func (l *Limiter) allow(ctx context.Context, key string, limit redis_rate.Limit) (res *redis_rate.Result, err error) {
	err = l.brk.Do(ctx, func(ctx context.Context) (err error) {
		res, err = l.l.Allow(ctx, key, limit)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("redisx: rate limit: %w", err)
	}
	return res, nil
}
