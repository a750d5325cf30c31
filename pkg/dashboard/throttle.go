package dashboard

import (
	"context"
	"net/http"
	"time"

	"go.uber.org/zap"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/merchant"
)

// The password throttle (merchant.SignInLimits): an address with 10
// failures (password checks that failed, or are still running) within 15
// minutes, whatever the e-mails, is refused 429 until the window has
// passed, even with the right password. An e-mail with 50 failures within
// a day, whatever the addresses, is refused only from an address that
// failed on it within the last hour: the right password from any other
// address is still checked, so nobody can lock a user out, and guessing
// from many addresses costs an address per guess an hour. The counts are
// in PostgreSQL, shared by every API replica, and each attempt is recorded
// under a lock before its password is compared
// (postgres.DashboardUserStore.ClaimSignInAttempt), so however many
// attempts arrive at once, no limit is passed.
var signInLimits = merchant.SignInLimits{
	PerAddress:    10,
	AddressWindow: 15 * time.Minute,
	PerEmail:      50,
	EmailWindow:   24 * time.Hour,
	Tainted:       time.Hour,
}

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
	client := d.cfg.Access.TrustedProxies.Key(r)
	if d.cfg.Access.AuthFailures.Blocked(client) > 0 {
		d.cfg.Access.AuthFailures.Refused()
		return passwordThrottled, nil
	}
	now := d.now()
	id, err := d.cfg.Stores.Users.ClaimSignInAttempt(ctx, email, client, now, signInLimits)
	if apperr.Is(err, apperr.RateLimited) {
		d.cfg.Access.AuthFailures.Failed(ctx, client)
		d.log.Warn("dashboard password check throttled", zap.String("client_ip", d.cfg.Access.TrustedProxies.String(r)), zap.String("path", r.URL.Path))
		return passwordThrottled, nil
	}
	if err != nil {
		return 0, err
	}
	right, err := check()
	if err != nil || !right {
		d.cfg.Access.AuthFailures.Failed(ctx, client)
		return passwordWrong, err
	}
	// Forgotten even when the client has gone: a success must not count.
	if err := d.cfg.Stores.Users.ForgetSignInAttempt(context.WithoutCancel(ctx), id); err != nil {
		d.log.Warn("dashboard: forgetting a right sign-in attempt", zap.Error(err))
	}
	return passwordRight, nil
}
