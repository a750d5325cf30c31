package redemption

import (
	"time"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/retry"
)

// Request is one redemption to carry out.
type Request struct {
	RedemptionID   uuid.UUID // required: the idempotency key and the seed of the Yampi coupon code
	Type           string    // TypeSubscriptionDiscount or TypeStoreCredit
	Amount         int64     // cents, more than zero
	SubscriptionID string    // guru: required for TypeSubscriptionDiscount
	MemberEmail    string    // optional, written in the Yampi coupon's description
	Now            time.Time // the start of the coupon's validity; zero means time.Now()
}

// RetryPolicy says how often and how patiently Execute retries a platform
// that failed transiently: a 5xx, a 429 or a network error.
type RetryPolicy struct {
	// Attempts is the most tries in total, the first included; zero or less
	// means 5.
	Attempts int
	// Delays[i] is the pause after the (i+1)-th failed try; the last delay
	// repeats when there are more retries than delays, and an empty list
	// means the default schedule. Each pause is jittered by ±10%, and a
	// Retry-After of the platform lengthens it up to the longest delay.
	Delays []time.Duration
}

// DefaultRetryPolicy is 5 attempts spread over about two minutes (pauses of
// 5 s, 15 s, 30 s and 70 s), the schedule of the redemption dispatcher.
func DefaultRetryPolicy() RetryPolicy {
	return RetryPolicy{
		Attempts: 5,
		Delays:   []time.Duration{5 * time.Second, 15 * time.Second, 30 * time.Second, 70 * time.Second},
	}
}

// WithDefaults fills the zero fields of p from DefaultRetryPolicy.
func (p RetryPolicy) WithDefaults() RetryPolicy {
	d := DefaultRetryPolicy()
	if p.Attempts <= 0 {
		p.Attempts = d.Attempts
	}
	if len(p.Delays) == 0 {
		p.Delays = d.Delays
	}
	return p
}

// jitter is the spread of a pause, ±10 %.
const jitter = 0.10

// base is the pause, before jitter, after the failed-th try (1-based): the
// last delay repeats past the end of the list.
func (p RetryPolicy) base(failed int) time.Duration {
	d, _ := retry.Step(p.Delays, min(failed, len(p.Delays)))
	return max(d, 0)
}

// Pause is how long to wait after the failed-th try: the scheduled delay
// with ±10% jitter, or the platform's Retry-After (capped at the longest
// delay) when that is longer.
func (p RetryPolicy) Pause(failed int, retryAfter time.Duration) time.Duration {
	return max(retry.Jitter(p.base(failed), jitter, nil), min(retryAfter, retry.Longest(p.Delays)))
}

// Next is the pause after the failed-th failed try (1-based) of a call
// retried by p, a Retry-After of the platform considered as Execute does;
// ok is false when p allows no more tries (platform.Executor). The coupon provisioner keeps its
// retries in PostgreSQL rather than in a sleeping goroutine, and schedules
// them with it.
func (p RetryPolicy) Next(failed int, retryAfter time.Duration) (d time.Duration, ok bool) {
	p = p.WithDefaults()
	if failed >= p.Attempts {
		return 0, false
	}
	return p.Pause(failed, retryAfter), true
}
