// Package retry holds the mechanics every retrying caller shares: a
// schedule of waits and its parsing, ±jitter, the Retry-After header, capped
// exponential backoff with equal jitter, and a sleep that ends with its
// context. It decides nothing: each caller composes its own policy from
// these pieces — the webhook dispatcher (webhook.NextAttemptAt), the
// redemption executor (redemption.RetryPolicy) and the Kafka partition
// runner (kafkabus) — so that the three policies differ only in their
// settings.
package retry

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// ParseSchedule reads a schedule: comma-separated Go durations
// ("5s,1m,1h"), at least one, each more than zero. Spaces around items are
// ignored. The error names the offending item.
func ParseSchedule(s string) ([]time.Duration, error) { return parse(s, false) }

// ParseDelays is ParseSchedule that also accepts zero items: a zero delay
// retries at once.
func ParseDelays(s string) ([]time.Duration, error) { return parse(s, true) }

func parse(s string, zeroOK bool) ([]time.Duration, error) {
	if strings.TrimSpace(s) == "" {
		return nil, errors.New("retry schedule is empty")
	}
	items := strings.Split(s, ",")
	schedule := make([]time.Duration, 0, len(items))
	for i, item := range items {
		item = strings.TrimSpace(item)
		d, err := time.ParseDuration(item)
		if err != nil {
			return nil, fmt.Errorf("retry schedule item %d %q is not a Go duration (like 5s, 30m, 2h)", i+1, item)
		}
		if d < 0 || (d == 0 && !zeroOK) {
			return nil, fmt.Errorf("retry schedule item %d %q is not positive", i+1, item)
		}
		schedule = append(schedule, d)
	}
	return schedule, nil
}

// Step returns the wait after the failed-th failed try (1-based),
// schedule[failed-1]; ok is false when failed is outside the schedule.
func Step(schedule []time.Duration, failed int) (d time.Duration, ok bool) {
	if failed < 1 || failed > len(schedule) {
		return 0, false
	}
	return schedule[failed-1], true
}

// Longest returns the longest wait of schedule, 0 for an empty one.
func Longest(schedule []time.Duration) time.Duration {
	var m time.Duration
	for _, d := range schedule {
		m = max(m, d)
	}
	return m
}

// Jitter returns d scaled by a factor in [1-spread, 1+spread) drawn from
// rnd, a source of [0, 1) (nil means math/rand/v2's Float64), so that the
// retries of many failures at once do not all land together.
func Jitter(d time.Duration, spread float64, rnd func() float64) time.Duration {
	if rnd == nil {
		rnd = rand.Float64
	}
	return time.Duration(float64(d) * (1 - spread + 2*spread*rnd()))
}

// MaxRetryAfter bounds what ParseRetryAfter returns, so that a huge value
// cannot overflow a Duration. Every caller caps a Retry-After much lower,
// at a step of its own schedule.
const MaxRetryAfter = 7 * 24 * time.Hour

// ParseRetryAfter reads a Retry-After value as delay-seconds or an HTTP
// date (RFC 9110 10.2.3) relative to now: 0 when empty, unparsable or not
// in the future, at most MaxRetryAfter.
func ParseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	var d time.Duration
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		d = time.Duration(min(secs, int64(MaxRetryAfter/time.Second))) * time.Second
	} else if t, err := http.ParseTime(v); err == nil {
		d = t.Sub(now)
	}
	return max(0, min(d, MaxRetryAfter))
}

// Backoff is capped exponential backoff with "equal jitter": the n-th wait
// since the last Reset (n from 0) lies in [d/2, d) where d = min(Max,
// Base·2ⁿ), so the retries of many callers spread out without any wait
// collapsing to zero. Max must be positive. A Backoff is not safe for
// concurrent use; each retrying loop holds its own.
type Backoff struct {
	Base, Max time.Duration
	attempt   int
}

// Next returns the next wait and counts it.
func (b *Backoff) Next() time.Duration {
	d := b.Base << min(b.attempt, 30)
	if d <= 0 || d > b.Max {
		d = b.Max
	}
	b.attempt++
	half := d / 2
	return half + rand.N(d-half) // d ≥ 1, so d-half ≥ 1
}

// Reset starts the backoff over from Base, as after a success.
func (b *Backoff) Reset() { b.attempt = 0 }

// Sleep waits d or until ctx ends, returning ctx.Err() then and nil after
// the full wait.
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
