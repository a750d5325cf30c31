package httpapi_test

import (
	"context"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/gorilla/mux"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"
	"go.uber.org/zap/zaptest/observer"

	"github.com/convida/convida/pkg/httpapi"
	"github.com/convida/convida/pkg/merchant"
	"github.com/convida/convida/pkg/redisx"
	"github.com/convida/convida/pkg/secretbox"
	"github.com/convida/convida/pkg/testenv"
)

var (
	_ httpapi.Limiter     = (*redisx.Limiter)(nil)
	_ httpapi.Idempotency = (*redisx.Idempotency)(nil)
)

// protectedOpts adjusts mustProtectedEnv.
type protectedOpts struct {
	rdb    *redis.Client   // nil: the shared test Redis
	brk    *redisx.Breaker // nil: none
	log    *zap.Logger     // ProtectionConfig.Log; nil: the test's logger
	routes func(s *httpapi.Server, r *mux.Router)
}

// mustProtectedEnv is mustEnv with the rate limiter and idempotency records
// of pkg/redisx wired in, as program.APIRouter wires them, and the test's
// own routes (behind the same middleware through Server.Protected).
func mustProtectedEnv(tb testing.TB, o protectedOpts) *apiEnv {
	tb.Helper()
	if o.rdb == nil {
		o.rdb = testenv.MustRedis(tb)
	}
	if o.log == nil {
		o.log = zaptest.NewLogger(tb)
	}
	return mustEnvWith(tb, envOptions{
		wire: func(*pgxpool.Pool, *secretbox.Box) httpapi.Config {
			return httpapi.Config{Protection: httpapi.ProtectionConfig{
				Limiter:     redisx.NewLimiter(o.rdb, o.brk),
				Idempotency: redisx.NewIdempotency(o.rdb, o.brk),
				Log:         o.log,
			}}
		},
		routes: o.routes,
	})
}

// rateLimited is a merchant's own rate limit of perSecond, with a burst.
func rateLimited(perSecond, burst int) merchant.Merchant {
	return merchant.Merchant{RateLimitPerSecond: perSecond, RateLimitBurst: burst}
}

// send is do with an Idempotency-Key (none when idemKey is "-").
func (tn *tenant) send(tb testing.TB, method, path, idemKey string, body any) reply {
	tb.Helper()
	h := map[string]string{"X-API-Key": tn.key}
	if idemKey != "-" {
		h["Idempotency-Key"] = idemKey
	}
	return tn.env.call(tb, request{method: method, path: path, header: h, body: body})
}

// count returns the number of rows of table of the tenant's merchant.
func (tn *tenant) count(tb testing.TB, table string) int {
	tb.Helper()
	var n int
	if err := tn.env.pool.QueryRow(context.Background(),
		`SELECT count(*) FROM `+table+` WHERE merchant_id = $1`, tn.merchant.ID).Scan(&n); err != nil {
		tb.Fatalf("count %s: %v", table, err)
	}
	return n
}

// headerInt returns the integer value of a header, failing when it is not
// one.
func headerInt(tb testing.TB, r reply, name string) int {
	tb.Helper()
	v := r.header.Get(name)
	n, err := strconv.Atoi(v)
	if err != nil {
		tb.Fatalf("%s = %q, want an integer; reply %s", name, v, r)
	}
	return n
}

// wantRateHeaders checks the RateLimit-* headers of an answer under a
// limit of burst.
func wantRateHeaders(tb testing.TB, r reply, burst int) {
	tb.Helper()
	if got := headerInt(tb, r, "RateLimit-Limit"); got != burst {
		tb.Errorf("RateLimit-Limit = %d, want %d", got, burst)
	}
	if got := headerInt(tb, r, "RateLimit-Remaining"); got < 0 || got > burst {
		tb.Errorf("RateLimit-Remaining = %d, want 0…%d", got, burst)
	}
	if got := headerInt(tb, r, "RateLimit-Reset"); got < 0 || got > 3600 {
		tb.Errorf("RateLimit-Reset = %d, want seconds", got)
	}
	if r.status == http.StatusTooManyRequests {
		if got := headerInt(tb, r, "Retry-After"); got < 1 {
			tb.Errorf("Retry-After = %d, want ≥ 1", got)
		}
		if got := headerInt(tb, r, "RateLimit-Remaining"); got != 0 {
			tb.Errorf("429 with RateLimit-Remaining = %d, want 0", got)
		}
	} else if v := r.header.Get("Retry-After"); v != "" {
		tb.Errorf("%d with Retry-After %q, want none", r.status, v)
	}
}

var campaignBody = map[string]any{"name": "Padrão", "reward_type": "fixed", "reward_value": 1000}

// TestRateLimit: a burst over a merchant's limit of 5/s (burst 5) is
// refused with 429 and Retry-After, every answer carries the RateLimit-*
// headers, and the limit is per key.
func TestRateLimit(t *testing.T) {
	t.Parallel()
	env := mustProtectedEnv(t, protectedOpts{})
	limited := env.mustTenantWith(t, rateLimited(5, 5))
	sibling := limited.anotherKey(t)
	other := env.mustTenant(t)

	start := time.Now()
	r := limited.do(t, http.MethodPost, "/api/v1/campaigns", campaignBody)
	wantStatus(t, r, http.StatusCreated)
	wantRateHeaders(t, r, 5)
	if got := headerInt(t, r, "RateLimit-Remaining"); got != 4 {
		t.Errorf("first answer: RateLimit-Remaining = %d, want 4", got)
	}
	m := limited.mustMember(t, "ana@example.com", "Ana")
	served, refused := 2, 0
	var last429 reply
	for range 15 {
		r := limited.get(t, "/api/v1/members/"+m.prefID)
		wantRateHeaders(t, r, 5)
		switch r.status {
		case http.StatusOK:
			served++
		case http.StatusTooManyRequests:
			refused++
			wantError(t, r, http.StatusTooManyRequests, "rate_limited", "rate limit")
			last429 = r
		default:
			t.Fatalf("got %s, want 200 or 429", r)
		}
	}
	// 5 at once, then one every 200 ms.
	if most := 5 + int(time.Since(start)/(200*time.Millisecond)) + 1; served < 5 || served > most || refused == 0 {
		t.Fatalf("served %d and refused %d of 17 in %v; want 5…%d served and some refused",
			served, refused, time.Since(start), most)
	}

	// The member-facing interface answers the same limit in its style.
	for i := 0; ; i++ {
		r := limited.get(t, "/api/v1/wallet/balance?email=ana@example.com")
		wantRateHeaders(t, r, 5)
		if r.status == http.StatusTooManyRequests {
			wantError(t, r, http.StatusTooManyRequests, "RATE_LIMITED", "")
			break
		}
		if i == 20 {
			t.Fatalf("member-facing: no 429 in 20 requests at 5/s; last %s", r)
		}
	}

	// Another key of the same merchant, and another merchant's key (with
	// the default 100/s, burst 200) are not limited by the first key.
	r = sibling.get(t, "/api/v1/members/"+m.prefID)
	wantStatus(t, r, http.StatusOK)
	wantRateHeaders(t, r, 5)
	if got := headerInt(t, r, "RateLimit-Remaining"); got != 4 {
		t.Errorf("sibling key: RateLimit-Remaining = %d, want 4", got)
	}
	r = other.do(t, http.MethodPost, "/api/v1/campaigns", campaignBody)
	wantStatus(t, r, http.StatusCreated)
	wantRateHeaders(t, r, httpapi.DefaultBurst)

	// Retry-After is honest: waiting that long is enough.
	time.Sleep(time.Duration(headerInt(t, last429, "Retry-After")) * time.Second)
	r = limited.get(t, "/api/v1/members/"+m.prefID)
	wantStatus(t, r, http.StatusOK)
	wantRateHeaders(t, r, 5)

	// A refused request does not reach the handler: no 429 created anything.
	if n := limited.count(t, "members"); n != 1 {
		t.Errorf("members = %d, want 1", n)
	}
}

// TestRateLimitRefusesUnauthenticatedFirst: a bad key is 401 before any
// limit is counted, so guessing keys cannot exhaust a merchant's limit.
func TestRateLimitRefusesUnauthenticatedFirst(t *testing.T) {
	t.Parallel()
	env := mustProtectedEnv(t, protectedOpts{})
	tn := env.mustTenantWith(t, rateLimited(1, 1))
	for range 3 {
		r := env.call(t, request{method: http.MethodGet, path: "/api/v1/campaigns/camp_00000000000000000000000000000000",
			header: map[string]string{"X-API-Key": "not-a-key"}})
		wantError(t, r, http.StatusUnauthorized, "unauthorized", "")
	}
	r := tn.get(t, "/api/v1/campaigns/camp_00000000000000000000000000000000")
	wantError(t, r, http.StatusNotFound, "not_found", "")
	wantRateHeaders(t, r, 1)
}

// TestProtectionSurvivesRedisOutage: with Redis killed the API serves reads
// and writes (unlimited, without RateLimit-* headers, duplicates refused by
// the database) without waiting for Redis, logs the outage once rather
// than per request, and limits again once Redis is back. The stores are
// wired as program wires them: a fail-fast client and the process's one
// redisx.Breaker.
func TestProtectionSurvivesRedisOutage(t *testing.T) {
	t.Parallel()
	rs := testenv.StartRedisServer(t)
	rdb := redis.NewClient(redisx.FailFast(&redis.Options{Addr: rs.Addr()}))
	t.Cleanup(func() { _ = rdb.Close() })
	brk := redisx.NewBreaker(redisx.BreakerConfig{Ping: func(ctx context.Context) error { return rdb.Ping(ctx).Err() },
		Log: zaptest.NewLogger(t)})
	t.Cleanup(brk.Close)
	core, logs := observer.New(zap.InfoLevel)
	env := mustProtectedEnv(t, protectedOpts{rdb: rdb, brk: brk, log: zap.New(core)})
	tn := env.mustTenantWith(t, rateLimited(5, 5))

	r := tn.send(t, http.MethodPost, "/api/v1/campaigns", "camp", campaignBody)
	wantStatus(t, r, http.StatusCreated)
	wantRateHeaders(t, r, 5)

	rs.Stop()
	start := time.Now()
	m := tn.mustMember(t, "davi@example.com", "Davi")
	for range 12 { // well past the 5/s limit
		r := tn.get(t, "/api/v1/members/"+m.prefID)
		wantStatus(t, r, http.StatusOK)
		if v := r.header.Get("RateLimit-Limit"); v != "" {
			t.Errorf("Redis down: RateLimit-Limit = %q, want none", v)
		}
	}
	body := map[string]any{"email": "eva@example.com", "name": "Eva"}
	r = tn.send(t, http.MethodPost, "/api/v1/members", "eva", body)
	wantStatus(t, r, http.StatusCreated)
	// No record to replay: the retry runs, and the database refuses it.
	r = tn.send(t, http.MethodPost, "/api/v1/members", "eva", body)
	wantError(t, r, http.StatusConflict, "email_exists", "")
	if n := tn.count(t, "members"); n != 2 {
		t.Errorf("members = %d, want 2", n)
	}
	r = tn.get(t, "/api/v1/wallet/balance?email=eva@example.com")
	wantStatus(t, r, http.StatusOK)
	// The first request finds Redis down (one refused dial, one retry) and
	// opens the breaker; the others skip Redis at once.
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("16 requests with Redis down took %v, want well under 100 ms each", took)
	} else {
		t.Logf("16 requests with Redis down took %v", took)
	}
	if !brk.Open() {
		t.Error("Redis down: the breaker is closed, want open")
	}
	if n := logs.FilterMessageSnippet("redis unavailable").Len(); n != 1 {
		t.Errorf("outage logged %d times, want once: %v", n, logs.All())
	}

	rs.Start()
	// The breaker probes Redis every 250 ms; go-redis's pool, once it gave
	// up dialing, redials within a second.
	for deadline := time.Now().Add(10 * time.Second); ; {
		r := tn.get(t, "/api/v1/members/"+m.prefID)
		if r.status == http.StatusTooManyRequests {
			wantRateHeaders(t, r, 5)
			wantError(t, r, http.StatusTooManyRequests, "rate_limited", "")
			break
		}
		wantStatus(t, r, http.StatusOK)
		if time.Now().After(deadline) {
			t.Fatalf("Redis back for 10 s: still no 429 at 5/s; last %s", r)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if n := logs.FilterMessageSnippet("redis available again").Len(); n == 0 {
		t.Errorf("the end of the outage was not logged: %v", logs.All())
	}
	time.Sleep(time.Second) // let the allowance refill
	first := tn.send(t, http.MethodPost, "/api/v1/members", "fred", map[string]any{"email": "fred@example.com", "name": "Fred"})
	wantStatus(t, first, http.StatusCreated)
	wantReplay(t, first, tn.send(t, http.MethodPost, "/api/v1/members", "fred", map[string]any{"email": "fred@example.com", "name": "Fred"}))
}
