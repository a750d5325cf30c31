package retry

import (
	"sync"
	"time"
)

// Every says, at most once per Interval, that it is time to speak again:
// the warning of a caller that keeps trying while a dependency is away
// (one line per interval, not one per try or per request). It is safe for
// concurrent use; the zero Every is ready, and the first Due is true.
type Every struct {
	Interval time.Duration // 0: OutageWarnEvery

	mu   sync.Mutex
	last time.Time
}

// Due reports whether Interval has passed since it last reported true,
// and if so starts a new interval.
func (e *Every) Due() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	interval := e.Interval
	if interval <= 0 {
		interval = OutageWarnEvery
	}
	now := time.Now()
	if !e.last.IsZero() && now.Sub(e.last) < interval {
		return false
	}
	e.last = now
	return true
}

// OutageWarnEvery spaces the warnings about a dependency that does not
// answer (PostgreSQL, the brokers): an outage of hours is a few lines an
// hour in every program, however many tries and requests it fails.
const OutageWarnEvery = 30 * time.Second
