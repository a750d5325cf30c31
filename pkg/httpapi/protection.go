package httpapi

import (
	"context"
	"encoding/hex"
	"math"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/clientip"
)

// Limiter counts requests against a rate limit (decision 13). Allow counts
// one request of key against perSecond requests per second with a burst of
// burst. retryAfter is positive exactly when the request is refused (how
// long until one would be allowed); remaining is how many more would be
// allowed now; resetAfter is how long until the allowance is full again. An
// error means the limiter's store did not answer. redisx.Limiter implements
// it.
type Limiter interface {
	Allow(ctx context.Context, key string, perSecond, burst int) (remaining int, retryAfter, resetAfter time.Duration, err error)
}

// Idempotency keeps the first answer to a request carrying an
// Idempotency-Key (decision 12). redisx.Idempotency implements it.
//
// Begin looks up key within scope for a request whose digest is
// fingerprint. When the key is new it claims it for lock and returns a
// non-empty claim: the caller runs the request, then calls Complete or
// Release with the claim. When the key completed with the same fingerprint
// it returns the stored answer. It returns an error coded
// apperr.IdempotencyInUse when the key is claimed by a request with the same
// fingerprint still running, apperr.IdempotencyReused when the key was used
// with another fingerprint, and any other error when its store did not
// answer.
//
// Complete stores answer for ttl and ends the claim; Release ends the claim
// without storing anything, so that a retry runs anew. Both do nothing to a
// claim that is no longer held.
type Idempotency interface {
	Begin(ctx context.Context, scope, key, fingerprint string, lock time.Duration) (claim string, answer []byte, err error)
	Complete(ctx context.Context, claim string, answer []byte, ttl time.Duration) error
	Release(ctx context.Context, claim string) error
}

// ProtectionConfig wires rate limits and idempotency records. A nil Limiter
// or Idempotency turns that feature off; zero durations and limits take the
// defaults below. New keeps its own copy, in which the middleware keeps its
// state (outage reports); the caller's value is never changed. The stores
// are expected to answer at once while they are down (redisx.Breaker):
// the middleware calls them on every request.
type ProtectionConfig struct {
	Limiter     Limiter
	Idempotency Idempotency
	// AuthFailures limits the failed authentications of a client address
	// (Config.TrustedProxies tells it): a missing, unknown or revoked API
	// key, a creator token that finds no creator. Nil: no limit.
	AuthFailures clientip.FailureLimit
	// Log receives the (throttled) reports of an unavailable store;
	// Config.Log when nil.
	Log *zap.Logger

	// PerSecond and Burst are the rate limit of a key whose merchant has
	// no override (default 100 requests per second, burst 200). A merchant
	// overriding only the rate gets a burst in the same proportion.
	PerSecond int
	Burst     int
	// Lock bounds how long a claimed idempotency key stays in flight if its
	// request never completes (default 60 s, beyond the server's write
	// timeout and the 10 s a redemption may wait).
	Lock time.Duration
	// Retention is how long an answer is replayed (default 24 h).
	Retention time.Duration
	// Timeout bounds each call to the stores (default 250 ms, a thousand
	// times what a healthy Redis takes); past it the request is served
	// unprotected.
	Timeout time.Duration

	state protectionState
}

// The defaults of ProtectionConfig.
const (
	DefaultPerSecond = 100
	DefaultBurst     = 200
	defaultLock      = 60 * time.Second
	defaultRetention = 24 * time.Hour
	defaultTimeout   = 250 * time.Millisecond
	// reportEvery throttles the log of an unavailable store: an outage
	// would otherwise log once per request.
	reportEvery = 10 * time.Second
	// maxStoredAnswer bounds what is kept per key; a larger answer is
	// served but not kept (it never happens with the API's answers).
	maxStoredAnswer = 1 << 20
	// maxIdempotencyKey is the longest Idempotency-Key, in characters.
	maxIdempotencyKey = 255
)

func orDefault[T int | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// limitOf returns the rate limit of a merchant's keys: its override, else
// the configured default.
func (p *ProtectionConfig) limitOf(r *http.Request) (perSecond, burst int) {
	defRate, defBurst := orDefault(p.PerSecond, DefaultPerSecond), orDefault(p.Burst, DefaultBurst)
	perSecond, burst = defRate, defBurst
	if m := merchantOf(r); m != nil {
		if m.RateLimitPerSecond > 0 {
			perSecond = m.RateLimitPerSecond
			burst = max(1, int(int64(defBurst)*int64(perSecond)/int64(defRate)))
		}
		if m.RateLimitBurst > 0 {
			burst = m.RateLimitBurst
		}
	}
	return perSecond, burst
}

// protectionState is what the middleware remembers between requests. It
// lives in the Server's copy of the config and is used through sync/atomic
// functions (atomic.Int64 would make copying a Config a vet error).
type protectionState struct {
	limiter, idempotency outage
	lastReport           int64 // unix nanoseconds of the last outage report
	unreported           int64 // failures since
}

// outage remembers that a store failed, so that its return is logged once.
// Skipping a store that is down is the stores' business: redisx's one
// Breaker per process answers every call at once while Redis is down, and
// probes it in the background (go-redis would otherwise dial a refused
// connection for every request).
type outage struct{ failing int32 }

// callStore calls a store within Timeout and beyond the client's hanging
// up (so that a completed request's answer is still stored). It returns
// false when the store failed: the caller then serves the request without
// the feature. Failures are logged at most once per reportEvery, however
// many requests fail, and the first success after a failure of feature's
// store once.
func (s *Server) callStore(r *http.Request, o *outage, feature string, call func(context.Context) error) bool {
	p := &s.cfg.Protection
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), orDefault(p.Timeout, defaultTimeout))
	err := call(ctx)
	cancel()
	if err == nil {
		if atomic.LoadInt32(&o.failing) == 1 && atomic.CompareAndSwapInt32(&o.failing, 1, 0) {
			s.protectionLog().Info("redis available again: " + feature + " resumed")
		}
		return true
	}
	atomic.StoreInt32(&o.failing, 1)
	now := time.Now().UnixNano()
	last := atomic.LoadInt64(&p.state.lastReport)
	if now-last < int64(reportEvery) || !atomic.CompareAndSwapInt64(&p.state.lastReport, last, now) {
		atomic.AddInt64(&p.state.unreported, 1)
		return false
	}
	s.protectionLog().Warn("redis unavailable: serving requests without "+feature+" (reported at most every 10 s)",
		zap.Error(err), zap.Int64("unreported_failures", atomic.SwapInt64(&p.state.unreported, 0)))
	return false
}

func (s *Server) protectionLog() *zap.Logger {
	switch {
	case s.cfg.Protection.Log != nil:
		return s.cfg.Protection.Log
	case s.log != nil:
		return s.log
	}
	return zap.NewNop()
}

// rateLimit applies the per-key rate limit (decision 13): GCRA with the
// merchant's rate and burst. Every answer carries RateLimit-Limit (the
// burst), RateLimit-Remaining and RateLimit-Reset (seconds until the
// allowance is full again); a refused request is 429 rate_limited with
// Retry-After (whole seconds, at least 1). When the limiter's store fails
// the request is served without limit and without these headers.
func (s *Server) rateLimit(next http.Handler) http.Handler {
	lim := s.cfg.Protection.Limiter
	if lim == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sum, ok := keyHashOf(r)
		if !ok {
			next.ServeHTTP(w, r)
			return
		}
		perSecond, burst := s.cfg.Protection.limitOf(r)
		res, ok := s.countRequest(r, "apikey:"+hex.EncodeToString(sum[:]), perSecond, burst)
		if !ok || s.answerLimit(w, r, res) {
			next.ServeHTTP(w, r)
		}
	})
}

// limitResult is the limiter's answer to one request.
type limitResult struct {
	perSecond, burst, remaining int
	retryAfter, resetAfter      time.Duration // retryAfter > 0: refused
}

// countRequest counts one request of key against perSecond and burst. ok
// is false when the limiter's store failed: the request is then served
// without limit.
func (s *Server) countRequest(r *http.Request, key string, perSecond, burst int) (res limitResult, ok bool) {
	p := &s.cfg.Protection
	res.perSecond, res.burst = perSecond, burst
	ok = s.callStore(r, &p.state.limiter, "rate limiting", func(ctx context.Context) (err error) {
		res.remaining, res.retryAfter, res.resetAfter, err = p.Limiter.Allow(ctx, key, perSecond, burst)
		return err
	})
	return res, ok
}

// tighter returns the result that leaves the fewer requests: a refusal,
// the longer wait; otherwise the smaller remaining allowance.
func tighter(a, b limitResult) limitResult {
	switch {
	case a.retryAfter > 0 || b.retryAfter > 0:
		if b.retryAfter > a.retryAfter {
			return b
		}
		return a
	case b.remaining < a.remaining:
		return b
	}
	return a
}

// answerLimit sets the RateLimit-* headers of res and, when res refuses
// the request, answers 429 with Retry-After. It returns whether the request
// may be served.
func (s *Server) answerLimit(w http.ResponseWriter, r *http.Request, res limitResult) bool {
	h := w.Header()
	h.Set("RateLimit-Limit", strconv.Itoa(res.burst))
	h.Set("RateLimit-Remaining", strconv.Itoa(max(res.remaining, 0)))
	h.Set("RateLimit-Reset", strconv.Itoa(ceilSeconds(res.resetAfter)))
	if res.retryAfter <= 0 {
		return true
	}
	wait := max(ceilSeconds(res.retryAfter), 1)
	h.Set("Retry-After", strconv.Itoa(wait))
	s.fail(w, r, apperr.Errorf(apperr.RateLimited,
		"rate limit of %d requests per second (burst %d) exceeded; retry after %d s", res.perSecond, res.burst, wait))
	return false
}

// authFailed counts a failed authentication of client. When the failure
// is beyond the client's allowance (spent at another replica, say) it
// answers 429 and returns true; otherwise the caller answers the failure
// (the client may now be blocked, from its next request on).
func (s *Server) authFailed(w http.ResponseWriter, r *http.Request, client string) bool {
	wait, over := s.cfg.Protection.AuthFailures.Failed(r.Context(), client)
	if over {
		s.refuseBlocked(w, r, wait)
	}
	return over
}

// refuseBlocked answers 429 rate_limited (RATE_LIMITED member-facing) with
// Retry-After to a client blocked for its failed authentications.
func (s *Server) refuseBlocked(w http.ResponseWriter, r *http.Request, wait time.Duration) {
	s.cfg.Protection.AuthFailures.Refused()
	secs := max(ceilSeconds(wait), 1)
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	s.fail(w, r, apperr.Errorf(apperr.RateLimited, "too many failed authentications from this address; retry after %d s", secs))
}

func ceilSeconds(d time.Duration) int {
	if d <= 0 {
		return 0
	}
	return int(math.Ceil(d.Seconds()))
}
