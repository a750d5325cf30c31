package httpapi_test

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/convida/convida/pkg/httpapi"
	"github.com/convida/convida/pkg/openapi/openapitest"
	"github.com/convida/convida/pkg/postgres"
	"github.com/convida/convida/pkg/secretbox"
)

// TestPortalAPI: minting a portal link or an embed token answers 201 with
// a URL under PUBLIC_URL whose token is stored only as its hash; a blocked
// member gets 409 member_unavailable, a portal turned off 409
// portal_disabled, another merchant's member 404; the settings are read
// and changed (audited), and refused when out of bounds.
func TestPortalAPI(t *testing.T) {
	t.Parallel()
	v := openapitest.New(t)
	var pool *pgxpool.Pool
	env := mustEnvWith(t, envOptions{
		wire: func(p *pgxpool.Pool, _ *secretbox.Box) httpapi.Config {
			pool = p
			return httpapi.Config{Catalog: catalog(p), Audit: postgres.NewAuditStore(p), PublicURL: "https://convida.example/",
				Portal: httpapi.PortalConfig{Tokens: postgres.NewPortalTokens(p), Settings: postgres.NewPortalSettings(p)}}
		},
		client: v.Client,
	})
	a, b := env.mustTenant(t), env.mustTenant(t)
	a.mustCampaign(t, map[string]any{"name": "Padrão", "reward_type": "fixed", "reward_value": 1000})
	b.mustCampaign(t, map[string]any{"name": "Padrão", "reward_type": "fixed", "reward_value": 1000})
	ana := a.mustMember(t, "ana@example.com", "Ana Souza")
	path := "/api/v1/members/" + ana.prefID

	r := a.do(t, http.MethodPost, path+"/portal-sessions", map[string]any{"return_url": "https://loja.example.com/conta", "locale": "en"})
	wantStatus(t, r, http.StatusCreated)
	url := str(t, r, "data.url")
	if !strings.HasPrefix(url, "https://convida.example/portal/s/") || len(strings.TrimPrefix(url, "https://convida.example/portal/s/")) != 43 {
		t.Errorf("url = %q", url)
	}
	expires, err := time.Parse(time.RFC3339, str(t, r, "data.expires_at"))
	if err != nil || expires.Sub(t0) > 121*time.Second || expires.Sub(t0) < 120*time.Second {
		t.Errorf("expires_at = %v (%v), want in 120 s", expires, err)
	}
	token := url[strings.LastIndexByte(url, '/')+1:]
	var n int
	if err := pool.QueryRow(context.Background(), `SELECT count(*) FROM portal_tokens WHERE token_hash::text LIKE '%'||$1||'%'`, token).Scan(&n); err != nil || n != 0 {
		t.Errorf("the token is stored in clear: %d %v", n, err)
	}
	r = a.do(t, http.MethodPost, path+"/portal-sessions", nil)
	wantStatus(t, r, http.StatusCreated)

	r = a.do(t, http.MethodPost, path+"/embed-tokens", map[string]any{"locale": "pt-BR"})
	wantStatus(t, r, http.StatusCreated)
	if tok := str(t, r, "data.token"); str(t, r, "data.url") != "https://convida.example/embed/portal?token="+tok {
		t.Errorf("embed url = %s", r.raw)
	}

	wantError(t, a.do(t, http.MethodPost, path+"/portal-sessions", map[string]any{"return_url": "javascript:alert(1)"}), 400, "validation_error", "return_url")
	wantError(t, a.do(t, http.MethodPost, path+"/portal-sessions", map[string]any{"locale": "fr"}), 400, "validation_error", "locale")
	wantError(t, a.do(t, http.MethodPost, path+"/embed-tokens", map[string]any{"locale": "fr"}), 400, "validation_error", "locale")
	wantError(t, b.do(t, http.MethodPost, path+"/portal-sessions", nil), 404, "not_found", "")
	wantError(t, b.do(t, http.MethodPost, path+"/embed-tokens", nil), 404, "not_found", "")
	wantError(t, env.call(t, request{method: http.MethodPost, path: path + "/portal-sessions"}), 401, "unauthorized", "")
	wantError(t, env.call(t, request{method: http.MethodPost, path: path + "/embed-tokens"}), 401, "unauthorized", "")

	// Settings: the defaults, then a change, audited.
	r = a.get(t, "/api/v1/portal/settings")
	wantStatus(t, r, http.StatusOK)
	if !bytes.Contains(r.raw, []byte(`"enabled":true`)) || !bytes.Contains(r.raw, []byte(`"embed_origins":[]`)) || !bytes.Contains(r.raw, []byte(`"updated_at":null`)) {
		t.Errorf("default settings = %s", r.raw)
	}
	r = a.do(t, http.MethodPut, "/api/v1/portal/settings", map[string]any{"embed_origins": []string{"https://Loja.example.com/", "https://b.example"}, "brand_color": "#0B6E4F"})
	wantStatus(t, r, http.StatusOK)
	if !bytes.Contains(r.raw, []byte(`"embed_origins":["https://loja.example.com","https://b.example"]`)) || str(t, r, "data.brand_color") != "#0b6e4f" {
		t.Errorf("saved settings = %s", r.raw)
	}
	wantError(t, a.do(t, http.MethodPut, "/api/v1/portal/settings", map[string]any{"embed_origins": []string{"http://loja.example.com"}}), 400, "validation_error", "embed_origins")
	wantError(t, a.do(t, http.MethodPut, "/api/v1/portal/settings", map[string]any{"brand_color": "red"}), 400, "validation_error", "brand_color")
	wantError(t, a.get(t, "/api/v1/portal/settings?x=%00"), 400, "validation_error", "")
	wantError(t, env.call(t, request{method: http.MethodGet, path: "/api/v1/portal/settings"}), 401, "unauthorized", "")
	wantError(t, env.call(t, request{method: http.MethodPut, path: "/api/v1/portal/settings", body: map[string]any{}}), 401, "unauthorized", "")
	r = a.get(t, "/api/v1/audit-events?action=portal_settings.updated")
	wantStatus(t, r, http.StatusOK)
	if !bytes.Contains(r.raw, []byte(`"fields":["embed_origins","brand_color"]`)) {
		t.Errorf("audit = %s", r.raw)
	}

	// Blocked, then the portal off.
	wantStatus(t, a.do(t, http.MethodPatch, path, map[string]any{"status": "blocked"}), http.StatusOK)
	wantError(t, a.do(t, http.MethodPost, path+"/portal-sessions", nil), 409, "member_unavailable", "")
	wantError(t, a.do(t, http.MethodPost, path+"/embed-tokens", nil), 409, "member_unavailable", "")
	wantStatus(t, a.do(t, http.MethodPatch, path, map[string]any{"status": "active"}), http.StatusOK)
	wantStatus(t, a.do(t, http.MethodPut, "/api/v1/portal/settings", map[string]any{"enabled": false}), http.StatusOK)
	wantError(t, a.do(t, http.MethodPost, path+"/portal-sessions", nil), 409, "portal_disabled", "")
	wantError(t, a.do(t, http.MethodPost, path+"/embed-tokens", nil), 409, "portal_disabled", "")

	v.WantExercised(t, ex("createPortalSession", 201), ex("createPortalSession", 400), ex("createPortalSession", 401),
		ex("createPortalSession", 404), ex("createPortalSession", 409), ex("createEmbedToken", 201), ex("createEmbedToken", 400),
		ex("createEmbedToken", 401), ex("createEmbedToken", 404), ex("createEmbedToken", 409),
		ex("getPortalSettings", 200), ex("getPortalSettings", 400), ex("getPortalSettings", 401),
		ex("putPortalSettings", 200), ex("putPortalSettings", 400), ex("putPortalSettings", 401))
}
