package httpapi_test

import (
	"fmt"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/convida/convida/pkg/clientip"
	"github.com/convida/convida/pkg/httpapi"
)

// wantRate checks a JSON number by its text (0.15, not 0.15000000000000002).
func wantRate(tb testing.TB, r reply, path, want string) {
	tb.Helper()
	if got, _ := at(r.json, path); fmt.Sprint(got) != want {
		tb.Errorf("%s = %v, want %s; body %s", path, got, want, r.raw)
	}
}

// TestCreatorRateLimits: the creator operations are limited per token and
// per client address, with the headers of the API's limits, and served
// unlimited while Redis is down.
func TestCreatorRateLimits(t *testing.T) {
	t.Parallel()
	t.Run("per token", func(t *testing.T) {
		t.Parallel()
		env := mustCreatorEnv(t, creatorEnvOptions{limits: httpapi.CreatorsConfig{TokenPerSecond: 1, TokenBurst: 2}})
		tn := env.mustTenant(t)
		tn.mustCampaign(t, map[string]any{"name": "Padrão", "reward_type": "fixed", "reward_value": 1000})
		token := tn.mustCreator(t, tn.mustMember(t, "ana@example.com", "Ana"), "Ana")
		other := tn.mustCreator(t, tn.mustMember(t, "bia@example.com", "Bia"), "Bia")
		r := env.public(t, "/api/v1/creators/"+token)
		wantStatus(t, r, http.StatusOK)
		if r.header.Get("RateLimit-Limit") != "2" || r.header.Get("RateLimit-Remaining") != "1" || r.header.Get("RateLimit-Reset") == "" {
			t.Errorf("headers %v, want RateLimit-Limit 2, Remaining 1, a Reset", r.header)
		}
		wantStatus(t, env.public(t, "/api/v1/creators/"+token+"/tiers"), http.StatusOK)
		for _, suffix := range []string{"", "/tiers", "/sales"} {
			r = env.untilLimited(t, "/api/v1/creators/"+token+suffix)
			wantError(t, r, http.StatusTooManyRequests, "RATE_LIMITED", "")
			if r.header.Get("Retry-After") == "" || r.header.Get("RateLimit-Limit") != "2" {
				t.Errorf("429 headers %v, want Retry-After and RateLimit-Limit 2", r.header)
			}
		}
		wantStatus(t, env.public(t, "/api/v1/creators/"+other), http.StatusOK) // another token has its own allowance
		env.wantNoToken(t, token, other)
		env.v.WantExercised(t, ex("getPublicCreator", 429), ex("getPublicCreatorTiers", 429), ex("getPublicCreatorSales", 429))
	})
	t.Run("per address", func(t *testing.T) {
		t.Parallel()
		env := mustCreatorEnv(t, creatorEnvOptions{limits: httpapi.CreatorsConfig{IPPerSecond: 1, IPBurst: 2}})
		tn := env.mustTenant(t)
		tn.mustCampaign(t, map[string]any{"name": "Padrão", "reward_type": "fixed", "reward_value": 1000})
		tokens := []string{tn.mustCreator(t, tn.mustMember(t, "ana@example.com", "Ana"), "Ana"),
			tn.mustCreator(t, tn.mustMember(t, "bia@example.com", "Bia"), "Bia"),
			tn.mustCreator(t, tn.mustMember(t, "caio@example.com", "Caio"), "Caio")}
		// Calls from an address of their own (any 127/8 address is this
		// host): the suite's other tests all call from 127.0.0.1.
		local := fmt.Sprintf("127.%d.%d.%d", 1+time.Now().UnixNano()%250, time.Now().UnixNano()/7%250, 2+time.Now().UnixNano()/13%250)
		dialer := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}}
		env.client = &http.Client{Transport: env.v.Transport(env.url, &http.Transport{DialContext: dialer.DialContext})}
		wantStatus(t, env.public(t, "/api/v1/creators/"+tokens[0]), http.StatusOK)
		wantStatus(t, env.public(t, "/api/v1/creators/"+tokens[1]), http.StatusOK)
		// Each token is under its own limit: the address's is what refuses.
		r := env.untilLimited(t, "/api/v1/creators/"+tokens[2]+"/sales")
		wantError(t, r, http.StatusTooManyRequests, "RATE_LIMITED", "")
		if r.header.Get("Retry-After") == "" || r.header.Get("RateLimit-Limit") != "2" {
			t.Errorf("429 headers %v, want Retry-After and RateLimit-Limit 2", r.header)
		}
	})
	t.Run("per forwarded address", func(t *testing.T) {
		t.Parallel()
		env := mustCreatorEnv(t, creatorEnvOptions{limits: httpapi.CreatorsConfig{IPPerSecond: 1, IPBurst: 2},
			trusted: clientip.MustParse("127.0.0.1/32")})
		tn := env.mustTenant(t)
		tn.mustCampaign(t, map[string]any{"name": "Padrão", "reward_type": "fixed", "reward_value": 1000})
		token := tn.mustCreator(t, tn.mustMember(t, "ana@example.com", "Ana"), "Ana")
		// Addresses of the test's own, which the trusted proxy (this
		// host) forwards: the suite's other tests all count as 127.0.0.1.
		a := fmt.Sprintf("198.51.%d.%d", time.Now().UnixNano()%250, 1+time.Now().UnixNano()/7%250)
		b := fmt.Sprintf("2001:db8:%x::1", time.Now().UnixNano()%65000)
		from := func(client string) reply {
			return env.call(t, request{method: http.MethodGet, path: "/api/v1/creators/" + token,
				header: map[string]string{"X-Forwarded-For": client}})
		}
		var r reply
		for range 20 {
			if r = from(a); r.status != http.StatusOK {
				break
			}
		}
		wantError(t, r, http.StatusTooManyRequests, "RATE_LIMITED", "")
		wantStatus(t, from(b), http.StatusOK)
	})
	t.Run("redis down", func(t *testing.T) {
		t.Parallel()
		rdb := redis.NewClient(&redis.Options{Addr: closedAddr(t), MaxRetries: -1})
		t.Cleanup(func() { _ = rdb.Close() })
		env := mustCreatorEnv(t, creatorEnvOptions{rdb: rdb, limits: httpapi.CreatorsConfig{TokenPerSecond: 1, TokenBurst: 1}})
		tn := env.mustTenant(t)
		tn.mustCampaign(t, map[string]any{"name": "Padrão", "reward_type": "fixed", "reward_value": 1000})
		token := tn.mustCreator(t, tn.mustMember(t, "ana@example.com", "Ana"), "Ana")
		for range 3 {
			r := env.public(t, "/api/v1/creators/"+token)
			wantStatus(t, r, http.StatusOK)
			if r.header.Get("RateLimit-Limit") != "" {
				t.Errorf("RateLimit-Limit %q while the limiter is down, want none", r.header.Get("RateLimit-Limit"))
			}
		}
	})
}

// untilLimited calls path until it answers 429 (at most 20 times: a slow
// machine may refill an allowance of 1 per second between two calls).
func (e *creatorEnv) untilLimited(tb testing.TB, path string) reply {
	tb.Helper()
	var r reply
	for range 20 {
		if r = e.public(tb, path); r.status != http.StatusOK {
			break
		}
	}
	return r
}

// closedAddr is a loopback address nothing listens on.
func closedAddr(tb testing.TB) string {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	return addr
}
