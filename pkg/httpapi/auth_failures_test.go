package httpapi_test

import (
	"context"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/convida/convida/pkg/clientip"
	"github.com/convida/convida/pkg/httpapi"
	"github.com/convida/convida/pkg/redisx"
	"github.com/convida/convida/pkg/secretbox"
	"github.com/convida/convida/pkg/testenv"
)

var _ clientip.FailureLimit = (*redisx.AuthFailures)(nil)

// failureBurst and failuresPerMinute are the tests' limit: three
// failures, then a block of up to 30 s, which no slow run outlasts.
const (
	failureBurst      = 3
	failuresPerMinute = 2
)

// mustAuthFailures is the limit as program.APIRouter wires it, on counts
// of the test's own (the suite shares one Redis).
func mustAuthFailures(tb testing.TB) *redisx.AuthFailures {
	tb.Helper()
	return redisx.NewAuthFailures(testenv.MustRedis(tb), nil,
		redisx.AuthFailuresConfig{Edge: "test-" + uuid.NewString(), Burst: failureBurst, PerMinute: failuresPerMinute})
}

// mustFailuresEnv is the API with the failed-authentication limit and
// TRUSTED_PROXIES set to trusted.
func mustFailuresEnv(tb testing.TB, trusted string) *apiEnv {
	tb.Helper()
	failures := mustAuthFailures(tb)
	return mustEnvWith(tb, envOptions{wire: func(*pgxpool.Pool, *secretbox.Box) httpapi.Config {
		return httpapi.Config{TrustedProxies: clientip.MustParse(trusted), Protection: httpapi.ProtectionConfig{AuthFailures: failures}}
	}})
}

// from calls path with key (none when "") as the client the proxy names.
func (e *apiEnv) from(tb testing.TB, client, key, path string) reply {
	tb.Helper()
	h := map[string]string{"X-Forwarded-For": client}
	if key != "" {
		h["X-API-Key"] = key
	}
	return e.call(tb, request{method: http.MethodGet, path: path, header: h})
}

func wantBlocked(tb testing.TB, r reply, code string) {
	tb.Helper()
	wantError(tb, r, http.StatusTooManyRequests, code, "failed authentications")
	if s, err := strconv.Atoi(r.header.Get("Retry-After")); err != nil || s < 1 || s > 30 {
		tb.Errorf("Retry-After %q, want 1 to 30 seconds", r.header.Get("Retry-After"))
	}
}

// TestFailedAuthenticationsBlockTheClient: past its allowance of wrong
// keys a client is answered 429 with Retry-After on every keyed route (in
// each style), with no key or any unknown one, and without a database
// read: a valid key the cache does not hold is refused too, while one it
// holds still works. Another client keeps its own allowance.
func TestFailedAuthenticationsBlockTheClient(t *testing.T) {
	t.Parallel()
	env := mustFailuresEnv(t, "127.0.0.1/32")
	tn := env.mustTenant(t)
	const (
		adminPath  = "/api/v1/integrations/guru"
		memberPath = "/api/v1/member/me?email=nobody@example.com"
	)
	guesser, neighbour := "198.51.100.7", "2001:db8:7:7::1"
	wantStatus(t, env.from(t, guesser, tn.key, adminPath), http.StatusOK) // the key is cached now
	for range failureBurst {
		wantError(t, env.from(t, guesser, uuid.NewString(), adminPath), http.StatusUnauthorized, "unauthorized", "")
	}
	wantBlocked(t, env.from(t, guesser, uuid.NewString(), adminPath), "rate_limited")
	wantBlocked(t, env.from(t, guesser, "", memberPath), "RATE_LIMITED")
	unseen := testenv.MustKey(t, env.pool, tn.merchant.ID)
	wantBlocked(t, env.from(t, guesser, unseen, adminPath), "rate_limited")
	wantStatus(t, env.from(t, guesser, tn.key, adminPath), http.StatusOK)

	wantError(t, env.from(t, neighbour, uuid.NewString(), adminPath), http.StatusUnauthorized, "unauthorized", "")
	wantStatus(t, env.from(t, neighbour, unseen, adminPath), http.StatusOK)
	// An IPv6 client is counted by its /64: another address of the
	// neighbour's /64 spends the same allowance.
	for range failureBurst - 1 {
		wantError(t, env.from(t, "2001:db8:7:7::2", "", adminPath), http.StatusUnauthorized, "unauthorized", "")
	}
	wantBlocked(t, env.from(t, "2001:db8:7:7:ffff::9", "", adminPath), "rate_limited")
}

// Without TRUSTED_PROXIES the forwarded address is not believed: every
// call of the test comes from 127.0.0.1, whatever its header says.
func TestFailedAuthenticationsIgnoreAnUntrustedHeader(t *testing.T) {
	t.Parallel()
	env := mustFailuresEnv(t, "")
	for i := range failureBurst {
		client := "198.51.100." + strconv.Itoa(10+i)
		wantError(t, env.from(t, client, uuid.NewString(), "/api/v1/integrations/yampi"), http.StatusUnauthorized, "unauthorized", "")
	}
	wantBlocked(t, env.from(t, "198.51.100.99", uuid.NewString(), "/api/v1/integrations/yampi"), "rate_limited")
}

// A creator token that finds no creator is a failed authentication too:
// past the allowance the client is answered 429 RATE_LIMITED, even for a
// real token, while another client reads its page.
func TestUnknownCreatorTokensBlockTheClient(t *testing.T) {
	t.Parallel()
	env := mustCreatorEnv(t, creatorEnvOptions{failures: mustAuthFailures(t), trusted: clientip.MustParse("127.0.0.1/32")})
	tn := env.mustTenant(t)
	tn.mustCampaign(t, map[string]any{"name": "Padrão", "reward_type": "fixed", "reward_value": 1000})
	token := tn.mustCreator(t, tn.mustMember(t, "ana@example.com", "Ana"), "Ana")
	creator := func(client, token string) reply {
		return env.call(t, request{method: http.MethodGet, path: "/api/v1/creators/" + token,
			header: map[string]string{"X-Forwarded-For": client}})
	}
	for range failureBurst {
		wantError(t, creator("198.51.100.7", uuid.NewString()+"x"), http.StatusNotFound, "NOT_FOUND", "")
	}
	wantBlocked(t, creator("198.51.100.7", token), "RATE_LIMITED")
	wantStatus(t, creator("198.51.100.8", token), http.StatusOK)
}

// A blocked client keeps its service with a key the cache holds only while
// the entry is fresh (KeyCacheTTL, 5 s): then the key is read again, which
// a blocked client may not cost, so it is refused like any other, and a
// key revoked meanwhile stops working within 5 s for it too (decision 2).
func TestBlockedClientKeepsACachedKeyWhileFresh(t *testing.T) {
	t.Parallel()
	env := mustFailuresEnv(t, "127.0.0.1/32")
	tn := env.mustTenant(t)
	const path, guesser = "/api/v1/integrations/guru", "198.51.100.7"
	wantStatus(t, env.from(t, guesser, tn.key, path), http.StatusOK) // the key is cached now
	for range failureBurst {
		wantError(t, env.from(t, guesser, uuid.NewString(), path), http.StatusUnauthorized, "unauthorized", "")
	}
	if _, err := env.merchants.RevokeKey(context.Background(), tn.merchant.ID, tn.key[:8]); err != nil {
		t.Fatal(err)
	}
	wantStatus(t, env.from(t, guesser, tn.key, path), http.StatusOK) // still cached
	env.clock.Advance(6 * time.Second)
	wantBlocked(t, env.from(t, guesser, tn.key, path), "rate_limited")
}
