package reconcile_test

import (
	"errors"
	"testing"
	"time"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/reconcile"
)

// The cooldown's refusal, as the API and the dashboard read it.
func TestCooldownError(t *testing.T) {
	err := apperr.Wrap(apperr.RateLimited, &reconcile.CooldownError{Provider: "guru", Cooldown: 5 * time.Minute, Wait: 192 * time.Second}, "x")
	if got := reconcile.RetryAfter(err); got != 192*time.Second {
		t.Errorf("RetryAfter = %s, want 3m12s", got)
	}
	var c *reconcile.CooldownError
	if !errors.As(err, &c) || c.Error() != "a guru reconciliation started less than 5m ago; ask again in 3m12s" {
		t.Errorf("the refusal says %v", c)
	}
	if got := reconcile.RetryAfter(apperr.Errorf(apperr.Conflict, "running")); got != 0 {
		t.Errorf("RetryAfter(another error) = %s, want 0", got)
	}
	hours := &reconcile.CooldownError{Provider: "yampi", Cooldown: 2 * time.Hour, Wait: time.Hour + 30*time.Minute}
	if got := hours.Error(); got != "a yampi reconciliation started less than 2h ago; ask again in 1h30m" {
		t.Errorf("in hours: %q", got)
	}
}
