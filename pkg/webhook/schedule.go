package webhook

import (
	"time"

	"github.com/convida/convida/pkg/retry"
)

// DefaultSchedule is the wait before each retry, counted from the failed
// attempt before it: 8 attempts over about 27.5 h (webhooks.md).
var DefaultSchedule = []time.Duration{
	5 * time.Second,
	5 * time.Minute,
	30 * time.Minute,
	2 * time.Hour,
	5 * time.Hour,
	10 * time.Hour,
	10 * time.Hour,
}

// Jitter is the spread of a scheduled wait, ±10 %, so that the retries of
// an outage's many failures do not all land on the receiver at once.
const Jitter = 0.10

// FailingDisableAfter is how long an endpoint may fail every attempt before
// the dispatcher disables it.
const FailingDisableAfter = 5 * 24 * time.Hour

// ParseSchedule reads WEBHOOK_RETRY_SCHEDULE: comma-separated Go durations
// ("5s,1m,1h"), each positive, at least one (retry.ParseSchedule). Spaces
// around items are ignored. The error names the offending item.
func ParseSchedule(s string) ([]time.Duration, error) { return retry.ParseSchedule(s) }

// MaxAttempts is the number of attempts a schedule allows: the first one
// plus one per step.
func MaxAttempts(schedule []time.Duration) int { return len(schedule) + 1 }

// NextAttemptAt returns when the next attempt is due after attemptsMade
// attempts have failed, the last one at now; ok is false when the schedule
// is exhausted and the job stops. The wait is schedule[attemptsMade-1]
// scaled by a factor in [0.9, 1.1) drawn from rnd (a [0, 1) source; nil
// means math/rand/v2). A receiver's retryAfter > 0 is honoured as is but
// never beyond that step, so that a Retry-After cannot stall a job longer
// than the schedule would. attemptsMade ≤ 0 means nothing was tried yet: the
// first attempt is due now.
func NextAttemptAt(schedule []time.Duration, attemptsMade int, now time.Time, retryAfter time.Duration, rnd func() float64) (time.Time, bool) {
	if attemptsMade <= 0 {
		return now, true
	}
	step, ok := retry.Step(schedule, attemptsMade)
	if !ok {
		return time.Time{}, false
	}
	if retryAfter > 0 {
		return now.Add(min(retryAfter, step)), true
	}
	return now.Add(retry.Jitter(step, Jitter, rnd)), true
}

// FailingTooLong reports whether an endpoint whose unbroken run of failures
// began at failingSince must be disabled at now: it has failed for at least
// FailingDisableAfter (docs/webhooks.md, "Delivery and retries"). A zero
// failingSince, after a success, never is.
func FailingTooLong(failingSince, now time.Time) bool {
	return !failingSince.IsZero() && now.Sub(failingSince) >= FailingDisableAfter
}
