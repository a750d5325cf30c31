package httpapi_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/testenv"
)

func TestAuthentication(t *testing.T) {
	t.Parallel()
	env := mustEnv(t)
	tn := env.mustTenant(t)
	tn.mustCampaign(t, map[string]any{"name": "Padrão", "reward_type": "fixed", "reward_value": 1000})
	m := tn.mustMember(t, "ana@example.com", "Ana Souza")

	const (
		adminPath  = "/api/v1/integrations/guru"
		memberPath = "/api/v1/wallet/balance?email=ana@example.com"
	)
	tests := []struct {
		name     string
		header   map[string]string
		wantCode int // 0: 200
	}{
		{"X-API-Key", map[string]string{"X-API-Key": tn.key}, 0},
		{"Bearer", map[string]string{"Authorization": "Bearer " + tn.key}, 0},
		{"bearer in lowercase", map[string]string{"Authorization": "bearer " + tn.key}, 0},
		{"no key", nil, http.StatusUnauthorized},
		{"unknown key", map[string]string{"X-API-Key": uuid.NewString()}, http.StatusUnauthorized},
		{"unknown bearer", map[string]string{"Authorization": "Bearer " + uuid.NewString()}, http.StatusUnauthorized},
		{"empty bearer", map[string]string{"Authorization": "Bearer "}, http.StatusUnauthorized},
		{"basic scheme", map[string]string{"Authorization": "Basic " + tn.key}, http.StatusUnauthorized},
		{"key without scheme", map[string]string{"Authorization": tn.key}, http.StatusUnauthorized},
		{"not a uuid", map[string]string{"X-API-Key": "sk_live_123"}, http.StatusUnauthorized},
		{"oversized key", map[string]string{"X-API-Key": strings.Repeat("a", 4096)}, http.StatusUnauthorized},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			admin := env.call(t, request{method: http.MethodGet, path: adminPath, header: tt.header})
			mf := env.call(t, request{method: http.MethodGet, path: memberPath, header: tt.header})
			if tt.wantCode == 0 {
				wantStatus(t, admin, http.StatusOK)
				wantFields(t, admin, map[string]any{"data.provider": "guru"})
				wantStatus(t, mf, http.StatusOK)
				wantFields(t, mf, map[string]any{"data.memberId": m.id.String()})
				return
			}
			wantError(t, admin, tt.wantCode, "unauthorized", "")
			wantError(t, mf, tt.wantCode, "UNAUTHORIZED", "")
		})
	}
}

// TestRevokedKey: decision 2, a revoked key is refused within 5 s, however
// recently it was used (the cache TTL), and never served when unused.
func TestRevokedKey(t *testing.T) {
	t.Parallel()
	env := mustEnv(t)
	tn := env.mustTenant(t)
	ctx := context.Background()
	other := testenv.MustKey(t, env.pool, tn.merchant.ID)
	unused := testenv.MustKey(t, env.pool, tn.merchant.ID)
	paths := []struct{ path, code string }{
		{"/api/v1/integrations/yampi", "unauthorized"},
		{"/api/v1/member/me?email=nobody@example.com", "UNAUTHORIZED"},
	}
	use := func(t *testing.T, key string) []reply {
		t.Helper()
		var out []reply
		for _, p := range paths {
			out = append(out, env.call(t, request{method: http.MethodGet, path: p.path,
				header: map[string]string{"Authorization": "Bearer " + key}}))
		}
		return out
	}
	// Warm the cache with the key about to be revoked.
	for _, r := range use(t, tn.key) {
		if r.status == http.StatusUnauthorized {
			t.Fatalf("valid key refused: %s", r)
		}
	}
	for _, key := range []string{tn.key, unused} {
		if _, err := env.merchants.RevokeKey(ctx, tn.merchant.ID, key[:8]); err != nil {
			t.Fatalf("RevokeKey: %v", err)
		}
	}
	// A revoked key the API never saw is refused at once.
	for i, r := range use(t, unused) {
		wantError(t, r, http.StatusUnauthorized, paths[i].code, "")
	}
	env.clock.Advance(5 * time.Second)
	for i, r := range use(t, tn.key) {
		wantError(t, r, http.StatusUnauthorized, paths[i].code, "")
	}
	// The merchant's other key still works.
	for _, r := range use(t, other) {
		if r.status == http.StatusUnauthorized {
			t.Errorf("unrevoked key refused: %s", r)
		}
	}
}

func TestUnknownRouteAndMethod(t *testing.T) {
	t.Parallel()
	env := mustEnv(t)
	tn := env.mustTenant(t)
	tests := []struct {
		method, path string
		status       int
		code         string
	}{
		{http.MethodGet, "/api/v1/nothing-here", http.StatusNotFound, "not_found"},
		{http.MethodGet, "/nothing-here", http.StatusNotFound, "not_found"},
		{http.MethodGet, "/api/v1/members/mem_0b5c3e9e2f4a4c1e9d1a7e2f0c9a1b2c/nothing", http.StatusNotFound, "not_found"},
		{http.MethodGet, "/api/v2/members", http.StatusNotFound, "not_found"},
		{http.MethodDelete, "/api/v1/campaigns", http.StatusMethodNotAllowed, "method_not_allowed"},
		{http.MethodPut, "/api/v1/members", http.StatusMethodNotAllowed, "method_not_allowed"},
		{http.MethodPost, "/api/v1/member/me", http.StatusMethodNotAllowed, "method_not_allowed"},
		{http.MethodDelete, "/api/v1/wallet/balance", http.StatusMethodNotAllowed, "method_not_allowed"},
		{http.MethodPost, "/api/v1/integrations/guru", http.StatusMethodNotAllowed, "method_not_allowed"},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			t.Parallel()
			for _, header := range []map[string]string{nil, {"X-API-Key": tn.key}} {
				r := env.call(t, request{method: tt.method, path: tt.path, header: header})
				wantError(t, r, tt.status, tt.code, "")
			}
		})
	}
}
