package reconcile

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/convida/convida/pkg/apperr"
)

// The bounds that keep one merchant's platform from holding a slot of
// the service's reconciliation for long: a platform that answers slowly,
// or whose pages never end, ends the run failed at the first bound
// reached, and a merchant cannot ask for runs back to back.

const (
	// DefaultMaxDuration bounds a run when Reconciler.MaxDuration is zero
	// (RECONCILE_MAX_DURATION).
	DefaultMaxDuration = 10 * time.Minute
	// DefaultMaxPages bounds the pages a run reads, of all its lists, when
	// Reconciler.MaxPages is zero (RECONCILE_MAX_PAGES).
	DefaultMaxPages = 2000
)

// boundError is why a run was stopped by one of its bounds; its text is
// the run's error.
type boundError struct{ msg string }

func (e *boundError) Error() string { return e.msg }

func tooLong(limit time.Duration) error {
	return &boundError{fmt.Sprintf("stopped after RECONCILE_MAX_DURATION (%s): the platform answered too slowly or its pages did not end; "+
		"the sales found before stay credited", human(limit))}
}

func tooManyPages(limit int) error {
	return &boundError{fmt.Sprintf("stopped after RECONCILE_MAX_PAGES (%d pages): the platform's pages did not end; "+
		"the sales found before stay credited", limit)}
}

// ErrStale is the cause with which the leader stops a run whose row the
// stale sweep ended (its heartbeat had stopped): its goroutine must not
// go on holding a slot.
var ErrStale = errors.New(StaleError)

// stopReason is the error recorded for a run whose pull ended with err
// under runCtx (bounded by the run's limits) and ctx (the caller's).
func stopReason(ctx, runCtx context.Context, err error) (string, bool) {
	var bound *boundError
	switch {
	case errors.As(err, &bound):
		return bound.msg, true
	case ctx.Err() != nil && errors.Is(context.Cause(ctx), ErrStale):
		return StaleError, true
	case ctx.Err() != nil:
		return "stopped before the end: the process running it shut down", true
	case runCtx.Err() != nil && errors.As(context.Cause(runCtx), &bound):
		return bound.msg, true
	case errors.Is(err, ErrNotRunning):
		return StaleError, true
	}
	return "", false
}

// CooldownError refuses a run asked for within Cooldown of the start of
// the integration's last run (RECONCILE_COOLDOWN): a merchant's requests
// cannot queue run after run ahead of the other merchants'. It comes
// wrapped in an apperr.RateLimited error.
type CooldownError struct {
	Provider string
	Cooldown time.Duration
	Wait     time.Duration // until a run may be asked for again; at least a second
}

func (e *CooldownError) Error() string {
	return fmt.Sprintf("a %s reconciliation started less than %s ago; ask again in %s", e.Provider, human(e.Cooldown), human(e.Wait))
}

// cooldown is the refusal of a run asked for at now, the last one having
// started at last.
func cooldown(provider string, limit time.Duration, last, now time.Time) error {
	wait := max(last.Add(limit).Sub(now), time.Second).Round(time.Second)
	e := &CooldownError{Provider: provider, Cooldown: limit, Wait: wait}
	return apperr.Wrap(apperr.RateLimited, e, e.Error())
}

// RetryAfter is how long the caller refused by err must wait before it
// asks again, zero when err is no cooldown.
func RetryAfter(err error) time.Duration {
	var c *CooldownError
	if errors.As(err, &c) {
		return c.Wait
	}
	return 0
}

// human writes d as the settings are written: 10m, 1h30m, 45s.
func human(d time.Duration) string {
	s := d.Round(time.Second).String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
