package testenv

import (
	"fmt"
	"os"
	"sync"
	"testing"
	"time"
)

// NowEnv names the setting that pins the instant the tests take as now: an
// RFC 3339 time ("2026-12-31T23:30:00-03:00"). Unset, the tests take the
// real now. `make test` runs the date-sensitive tests (those that read this
// clock, scripts/dated-tests.sh) again at each instant of the Makefile's
// PINNED_INSTANTS — a month's last and first second in São Paulo, a São
// Paulo evening that is already the next year in UTC, a leap day — so that
// none of them passes only on some days.
const NowEnv = "CONVIDA_TEST_NOW"

// Now returns the instant a test takes as now: the one NowEnv pins, or the
// real now. A test whose expectation depends on the calendar builds it from
// Now (or a Clock) and hands the same clock to the code under test; it fails
// at once on a NowEnv that is not RFC 3339.
func Now(tb testing.TB) time.Time {
	tb.Helper()
	at, err := pinned()
	if err != nil {
		tb.Fatal(err)
	}
	if at.IsZero() {
		return time.Now()
	}
	return at
}

// pinned is the instant NowEnv pins, or the zero time when it is unset.
func pinned() (time.Time, error) {
	v := os.Getenv(NowEnv)
	if v == "" {
		return time.Time{}, nil
	}
	at, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return time.Time{}, fmt.Errorf("%s=%q: want an RFC 3339 time: %w", NowEnv, v, err)
	}
	return at, nil
}

// Clock is the clock a test hands the code it runs (program.Deps.Now, a
// store's or a worker's now): it starts at Now(tb) and runs at the real
// pace, so timeouts, leases and waits behave as in production, and Advance
// moves it on (a week for a warranty, a year for retention).
type Clock struct {
	mu      sync.Mutex
	base    time.Time // the instant the clock started at, plus every Advance
	started time.Time // the real time it started, with its monotonic reading
}

// NewClock returns a Clock starting at Now(tb).
func NewClock(tb testing.TB) *Clock {
	tb.Helper()
	return &Clock{base: Now(tb), started: time.Now()}
}

// Now is the clock's time: its start, every Advance, and the real time
// elapsed since it started. Safe for concurrent use.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.base.Add(time.Since(c.started))
}

// Advance moves the clock on by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.base = c.base.Add(d)
	c.mu.Unlock()
}

// ChildEnv is what a child process a test starts (a ledger or dispatcher
// it kills) needs in its environment to share the clock: NowEnv set to
// this clock's time when the run is pinned, nothing otherwise.
func (c *Clock) ChildEnv() []string {
	if os.Getenv(NowEnv) == "" {
		return nil
	}
	return []string{NowEnv + "=" + c.Now().Format(time.RFC3339Nano)}
}

// ChildClock is the clock of a child process started with ChildEnv: from
// the instant NowEnv pins, at the real pace; the real clock when unset.
func ChildClock() (func() time.Time, error) {
	at, err := pinned()
	if err != nil || at.IsZero() {
		return time.Now, err
	}
	c := &Clock{base: at, started: time.Now()}
	return c.Now, nil
}
