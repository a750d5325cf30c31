package dashboard

import (
	"context"
	"net/http"
	"time"

	"go.uber.org/zap"

	"github.com/convida/convida/pkg/apperr"
)

// The password throttle: at most maxFailures password checks that failed,
// or are still running, per e-mail and per client address (clientip.Key:
// an IPv4 address, an IPv6 /64) within failureWindow. Past it, sign-in
// (and the current-password check of a password change) answers 429,
// even with the right password, until the window has passed. The count
// is in PostgreSQL, shared by every API replica, and each attempt is
// recorded under a lock before its password is compared
// (postgres.DashboardUserStore.ClaimSignInAttempt), so however many
// attempts arrive at once, at most maxFailures are compared.
const (
	maxFailures   = 10
	failureWindow = 15 * time.Minute
)

// passwordCheck is the outcome of a password checked through the throttle.
type passwordCheck int

const (
	passwordRight passwordCheck = iota
	passwordWrong
	passwordThrottled
)

// throttled runs check, which compares a password of email, as one
// attempt of email from r's client: passwordThrottled without running it
// when the throttle's limit is reached, or, answered from memory, when the
// client is blocked by the API's failed-authentication limit. A wrong password (or an error)
// stays counted as a failure; a right one is forgotten.
func (d *Dashboard) throttled(r *http.Request, email string, check func() (bool, error)) (passwordCheck, error) {
	ctx := r.Context()
	client := d.cfg.TrustedProxies.Key(r)
	if d.cfg.AuthFailures.Blocked(client) > 0 {
		d.cfg.AuthFailures.Refused()
		return passwordThrottled, nil
	}
	now := d.now()
	id, err := d.cfg.Users.ClaimSignInAttempt(ctx, email, client, now, now.Add(-failureWindow), maxFailures)
	if apperr.Is(err, apperr.RateLimited) {
		d.cfg.AuthFailures.Failed(ctx, client)
		d.log.Warn("dashboard password check throttled", zap.String("client_ip", d.cfg.TrustedProxies.String(r)), zap.String("path", r.URL.Path))
		return passwordThrottled, nil
	}
	if err != nil {
		return 0, err
	}
	right, err := check()
	if err != nil || !right {
		d.cfg.AuthFailures.Failed(ctx, client)
		return passwordWrong, err
	}
	// Forgotten even when the client has gone: a success must not count.
	if err := d.cfg.Users.ForgetSignInAttempt(context.WithoutCancel(ctx), id); err != nil {
		d.log.Warn("dashboard: forgetting a right sign-in attempt", zap.Error(err))
	}
	return passwordRight, nil
}
