package redemption

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/merchant"
	"github.com/convida/convida/pkg/netguard"
	"github.com/convida/convida/pkg/retry"
)

// DefaultRequestTimeout bounds one request to a platform when
// Executor.RequestTimeout is zero.
const DefaultRequestTimeout = 10 * time.Second

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
// settings: Guru for subscription discounts, Yampi for store credit. Its
// zero value is usable (default client, policy and sleep); it holds no state
// between calls and is safe for concurrent use.
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
}

// NewExecutor returns an Executor that sends its requests with client (nil
// means the guarded default, see Executor.HTTP) and retries by policy.
func NewExecutor(client *http.Client, policy RetryPolicy) *Executor {
	return &Executor{HTTP: client, Retry: policy}
}

// Execute carries out req with settings — the Guru integration for
// TypeSubscriptionDiscount, the Yampi one for TypeStoreCredit — and returns
// what the platform did. Settings come decrypted; an empty APIURL means
// merchant.DefaultAPIURL of the provider.
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
// it. A *transientError means the attempt may be repeated.
type operation interface {
	platformName() string
	attempt(ctx context.Context) (Result, error)
}

// run tries op by the retry policy.
func (e *Executor) run(ctx context.Context, op operation) (Result, error) {
	policy := e.Retry.withDefaults()
	var last *transientError
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
			return Result{}, apperr.Wrap(apperr.Unavailable, last.cause,
				fmt.Sprintf("%s (gave up after %d attempts)", last.msg, failed))
		}
		if err := e.sleep(ctx, policy.pause(failed, last.retryAfter)); err != nil {
			return Result{}, stopped(op.platformName(), last, err)
		}
	}
}

// stopped is the error of a run whose context ended.
func stopped(platform string, last *transientError, ctxErr error) error {
	msg := platform + ": stopped before the platform confirmed the redemption"
	if last != nil {
		msg += "; last try: " + last.msg
	}
	return apperr.Wrap(apperr.Unavailable, ctxErr, msg)
}

func (e *Executor) sleep(ctx context.Context, d time.Duration) error {
	if e.Sleep != nil {
		return e.Sleep(ctx, d)
	}
	return retry.Sleep(ctx, d)
}

// newPlatform checks the API URL of settings and returns the request
// helper of provider.
func (e *Executor) newPlatform(provider string, settings merchant.Integration, req Request) (*platform, error) {
	if settings.Provider != "" && settings.Provider != provider {
		return nil, apperr.Errorf(apperr.Unprocessable, "a %s redemption needs the %s settings, got those of %q",
			req.Type, provider, clip(settings.Provider, 40))
	}
	if req.RedemptionID == uuid.Nil {
		return nil, apperr.Errorf(apperr.Unprocessable, "the redemption has no id")
	}
	if req.Amount <= 0 {
		return nil, apperr.Errorf(apperr.Unprocessable, "the redemption amount must be more than zero")
	}
	p, err := e.platformOf(provider, settings)
	if err != nil {
		return nil, err
	}
	p.header.Set("Idempotency-Key", req.RedemptionID.String())
	return p, nil
}

// platformOf checks the API URL of settings and returns the request helper
// of provider, with no credentials set yet: each operation sets the
// headers its platform reads.
func (e *Executor) platformOf(provider string, settings merchant.Integration) (*platform, error) {
	raw := settings.APIURL
	if strings.TrimSpace(raw) == "" {
		raw = merchant.DefaultAPIURL(provider)
	}
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return nil, apperr.Errorf(apperr.Unprocessable, "the %s api url is not an http(s) URL without query", provider)
	}
	c := *guardedClient()
	if e.HTTP != nil {
		c = *e.HTTP
	}
	client := &c
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	timeout := e.RequestTimeout
	if timeout <= 0 {
		timeout = DefaultRequestTimeout
	}
	p := &platform{
		name:    provider,
		base:    strings.TrimRight(u.String(), "/"),
		header:  http.Header{},
		client:  client,
		timeout: timeout,
	}
	p.header.Set("Accept", "application/json")
	for _, s := range []string{settings.UserToken, settings.UserSecretKey, settings.AccountToken, settings.WebhookSecret} {
		if len(s) >= 4 {
			p.secrets = append(p.secrets, s)
		}
	}
	return p, nil
}

// guardedClient is the client of an Executor without one: public https
// addresses only. It is shared, so that its connections are reused.
var guardedClient = sync.OnceValue(func() *http.Client { return netguard.NewClient(netguard.Config{}, 0) })

// clip shortens s to n runes for an error message.
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
