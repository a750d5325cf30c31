package redemption

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/merchant"
	"github.com/convida/convida/pkg/platform"
	"github.com/convida/convida/pkg/retry"
)

// DefaultRequestTimeout bounds one request to a platform when
// Executor.RequestTimeout is zero.
const DefaultRequestTimeout = platform.DefaultTimeout

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

// withDefaults fills the zero fields of p from DefaultRetryPolicy.
func (p RetryPolicy) withDefaults() RetryPolicy {
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

// pause is how long to wait after the failed-th try: the scheduled delay
// with ±10% jitter, or the platform's Retry-After (capped at the longest
// delay) when that is longer.
func (p RetryPolicy) pause(failed int, retryAfter time.Duration) time.Duration {
	return max(retry.Jitter(p.base(failed), jitter, nil), min(retryAfter, retry.Longest(p.Delays)))
}

// Next is the pause after the failed-th failed try (1-based) of a call
// retried by p, a Retry-After of the platform considered as Execute does;
// ok is false when p allows no more tries. The coupon provisioner keeps its
// retries in PostgreSQL rather than in a sleeping goroutine, and schedules
// them with it.
func (p RetryPolicy) Next(failed int, retryAfter time.Duration) (d time.Duration, ok bool) {
	p = p.withDefaults()
	if failed >= p.Attempts {
		return 0, false
	}
	return p.pause(failed, retryAfter), true
}

// Executor carries out redemptions against the platform of the merchant's
// settings: Guru for subscription discounts, Yampi for store credit, through
// the clients of package platform. Its zero value is usable (default
// client, policy and sleep); it is safe for concurrent use and must not be
// copied after its first call.
type Executor struct {
	// HTTP sends the requests; nil means a netguard client with private
	// networks refused, never a plain one: the API URL is the merchant's
	// to choose, and must not reach the operator's network. Execute never
	// follows redirects (it answers a 3xx as a refusal), so that the
	// credentials of a merchant never travel to another host.
	HTTP *http.Client
	// Retry is the policy for transient failures; zero fields take the
	// values of DefaultRetryPolicy.
	Retry RetryPolicy
	// Sleep waits d or until ctx ends, returning ctx.Err() then; nil means a
	// real timer. Tests inject it to record the pauses without waiting.
	Sleep func(ctx context.Context, d time.Duration) error
	// RequestTimeout bounds each request (through its context); zero means
	// DefaultRequestTimeout.
	RequestTimeout time.Duration
	// CouponKey keys the codes of Yampi coupons (CouponCodeFor); production
	// derives it from SECRETS_KEY (CouponKeyInfo). Without it no store
	// credit is carried out.
	CouponKey []byte
	// Platform, when set, sends the requests instead of a client built
	// from HTTP and RequestTimeout: one shared by the roles of a process
	// lets their identical requests meet (platform.Client).
	Platform *platform.Client

	once   sync.Once
	client *platform.Client
}

// NewExecutor returns an Executor that sends its requests with client (nil
// means the guarded default, see Executor.HTTP) and retries by policy.
func NewExecutor(client *http.Client, policy RetryPolicy) *Executor {
	return &Executor{HTTP: client, Retry: policy}
}

// Execute carries out req with settings — the Guru integration for
// TypeSubscriptionDiscount, the Yampi one for TypeStoreCredit — and returns
// what the platform did. Settings come decrypted; an empty APIURL means
// the platform's public API (platform.DefaultGuruAPIURL,
// platform.DefaultYampiAPIURL).
//
// One attempt runs all the requests of the platform (Guru: read the
// subscription, then add the discount; Yampi: create the coupon, and confirm
// it on a 422). A 5xx, a 429 or a network error (including the per-request
// timeout) ends the attempt and, while the policy allows, the whole attempt
// runs again after a pause. A 3xx or any other 4xx fails at once.
//
// Repeating Execute for the same redemption is safe with Yampi: the coupon
// code derives from the redemption id, so a repeat cannot create a second
// coupon and finds the first. With Guru it is safe only if Guru honours the
// Idempotency-Key header sent on every request: a discount whose answer was
// lost may be added twice.
//
// Every error is an *apperr.Error whose message names the platform and the
// request, and carries the platform's status and at most 200 characters of
// its answer, never a credential:
//   - apperr.Unprocessable: the platform refused (3xx/4xx other than 429, or
//     an answer Execute cannot use), the API URL is refused by netguard (a
//     non-public address or plain http: netguard.ErrNotPublic's or
//     ErrNotHTTPS's words, never the address), or the settings or req lack what the
//     platform needs (user token, secret key, store alias, subscription id,
//     a valid API URL, a positive amount, a redemption id); no request is
//     sent for the latter.
//   - apperr.Unavailable: the platform failed transiently on every attempt.
//     When ctx ends first, the error is Unavailable too and also wraps
//     ctx.Err() (errors.Is(err, context.Canceled)): the outcome is unknown,
//     so the caller should leave the redemption pending rather than fail it.
func (e *Executor) Execute(ctx context.Context, settings merchant.Integration, req Request) (Result, error) {
	var (
		op  operation
		err error
	)
	switch req.Type {
	case TypeSubscriptionDiscount:
		op, err = e.newGuru(settings, req)
	case TypeStoreCredit:
		op, err = e.newYampi(settings, req)
	default:
		return Result{}, apperr.Errorf(apperr.Unprocessable, "unknown redemption type %q", clip(req.Type, 40))
	}
	if err != nil {
		return Result{}, err
	}
	return e.run(ctx, op)
}

// operation is the platform-specific part of a redemption: one attempt at
// it. A *platform.TransientError means the attempt may be repeated.
type operation interface {
	platformName() string
	attempt(ctx context.Context) (Result, error)
}

// run tries op by the retry policy.
func (e *Executor) run(ctx context.Context, op operation) (Result, error) {
	policy := e.Retry.withDefaults()
	var last *platform.TransientError
	for failed := 0; ; {
		if err := ctx.Err(); err != nil {
			return Result{}, stopped(op.platformName(), last, err)
		}
		res, err := op.attempt(ctx)
		if err == nil {
			return res, nil
		}
		if !errors.As(err, &last) {
			return Result{}, err
		}
		if err := ctx.Err(); err != nil {
			return Result{}, stopped(op.platformName(), last, err)
		}
		failed++
		if failed >= policy.Attempts {
			return Result{}, apperr.Wrap(apperr.Unavailable, last.Cause,
				fmt.Sprintf("%s (gave up after %d attempts)", last.Msg, failed))
		}
		if err := e.sleep(ctx, policy.pause(failed, last.RetryAfter)); err != nil {
			return Result{}, stopped(op.platformName(), last, err)
		}
	}
}

// stopped is the error of a run whose context ended.
func stopped(provider string, last *platform.TransientError, ctxErr error) error {
	msg := provider + ": stopped before the platform confirmed the redemption"
	if last != nil {
		msg += "; last try: " + last.Msg
	}
	return apperr.Wrap(apperr.Unavailable, ctxErr, msg)
}

func (e *Executor) sleep(ctx context.Context, d time.Duration) error {
	if e.Sleep != nil {
		return e.Sleep(ctx, d)
	}
	return retry.Sleep(ctx, d)
}

// checkRequest refuses, before any request, a redemption that settings of
// another provider, no id or no positive amount make impossible.
func checkRequest(provider string, settings merchant.Integration, req Request) error {
	switch {
	case settings.Provider != "" && settings.Provider != provider:
		return apperr.Errorf(apperr.Unprocessable, "a %s redemption needs the %s settings, got those of %q",
			req.Type, provider, clip(settings.Provider, 40))
	case req.RedemptionID == uuid.Nil:
		return apperr.Errorf(apperr.Unprocessable, "the redemption has no id")
	case req.Amount <= 0:
		return apperr.Errorf(apperr.Unprocessable, "the redemption amount must be more than zero")
	}
	return nil
}

// platforms is the client of the platforms' APIs: Platform, or one built
// from HTTP and RequestTimeout on the first call.
func (e *Executor) platforms() *platform.Client {
	e.once.Do(func() {
		e.client = e.Platform
		if e.client == nil {
			e.client = &platform.Client{HTTP: e.HTTP, Timeout: e.RequestTimeout}
		}
	})
	return e.client
}

// guruAccount and yampiAccount are settings as the platform clients take
// them; every credential of the merchant is kept out of messages.
func guruAccount(settings merchant.Integration, idempotencyKey string) platform.GuruAccount {
	return platform.GuruAccount{APIURL: settings.APIURL, UserToken: settings.UserToken, IdempotencyKey: idempotencyKey,
		Secrets: []string{settings.UserSecretKey, settings.AccountToken, settings.WebhookSecret}}
}

func yampiAccount(settings merchant.Integration, idempotencyKey string) platform.YampiAccount {
	return platform.YampiAccount{APIURL: settings.APIURL, UserToken: settings.UserToken, UserSecretKey: settings.UserSecretKey,
		StoreAlias: settings.StoreAlias, IdempotencyKey: idempotencyKey, Secrets: []string{settings.AccountToken, settings.WebhookSecret}}
}

// clip shortens s to n runes for an error message.
func clip(s string, n int) string { return platform.Clip(s, n) }
