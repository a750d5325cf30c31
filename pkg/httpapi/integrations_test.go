package httpapi_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/convida/convida/pkg/postgres"
)

func TestIntegrations(t *testing.T) {
	t.Parallel()
	env := mustEnv(t)
	tn := env.mustTenant(t)
	other := env.mustTenant(t)
	webhookURL := func(tn *tenant, provider string) string {
		return ingestURL + "/api/webhooks/" + provider + "/" + tn.merchant.ID.String()
	}
	const (
		guruAccount  = "gAcc0123456789abcdefghijklmnopqrstuvWXYZ" // 40 characters
		guruUser     = "guru-user-token-aaaa-bbbb-cccc-1234"
		guruUser2    = "guru-user-token-second-9876"
		yampiSecret  = "wh_sec_yampi_0123456789abcdefQRST"
		yampiUser    = "yampi-user-token-5555-6666"
		yampiUserKey = "sk_yampi_user_secret_key_7777"
	)
	secrets := []string{guruAccount, guruUser, guruUser2, yampiSecret, yampiUser, yampiUserKey}
	noSecretIn := func(t *testing.T, r reply) {
		t.Helper()
		for _, s := range secrets {
			if bytes.Contains(r.raw, []byte(s)) {
				t.Errorf("response shows the secret %q: %s", s, r.raw)
			}
		}
	}

	// Before any PUT: not configured, the URL to paste is already known.
	for p, missing := range map[string]string{"guru": "[user_token]", "yampi": "[user_token user_secret_key store_alias]"} {
		r := tn.get(t, "/api/v1/integrations/"+p)
		wantStatus(t, r, http.StatusOK)
		wantKeys(t, r, "", "data")
		wantFields(t, r, map[string]any{"data.provider": p, "data.configured": false, "data.webhook_url": webhookURL(tn, p),
			"data.api_configured": false})
		wantMissing(t, r, missing)
	}

	steps := []struct {
		name, method, provider string
		body                   any
		want                   map[string]any
		missing                string // data.api_missing, printed
	}{
		{"guru first PUT", http.MethodPut, "guru",
			map[string]any{"account_token": guruAccount, "user_token": guruUser, "api_url": "https://digitalmanager.guru/api/v2"},
			map[string]any{"data.account_token": "****WXYZ", "data.user_token": "****1234",
				"data.api_url": "https://digitalmanager.guru/api/v2", "data.api_configured": true}, "[]"},
		{"guru GET", http.MethodGet, "guru", nil,
			map[string]any{"data.account_token": "****WXYZ", "data.user_token": "****1234",
				"data.api_url": "https://digitalmanager.guru/api/v2", "data.api_configured": true}, "[]"},
		{"guru PUT of one field keeps the others", http.MethodPut, "guru",
			map[string]any{"user_token": guruUser2},
			map[string]any{"data.account_token": "****WXYZ", "data.user_token": "****9876",
				"data.api_url": "https://digitalmanager.guru/api/v2"}, "[]"},
		{"guru PUT of another api_url alone drops the user token", http.MethodPut, "guru",
			map[string]any{"api_url": "https://guru.example.com/api/v2"},
			map[string]any{"data.account_token": "****WXYZ", "data.user_token": "",
				"data.api_url": "https://guru.example.com/api/v2", "data.api_configured": false}, "[user_token]"},
		{"guru empty PUT keeps everything", http.MethodPut, "guru", map[string]any{},
			map[string]any{"data.account_token": "****WXYZ", "data.user_token": "",
				"data.api_url": "https://guru.example.com/api/v2", "data.api_configured": false}, "[user_token]"},
		{"guru another api_url with the user token", http.MethodPut, "guru",
			map[string]any{"api_url": "https://guru2.example.com/api/v2", "user_token": guruUser2},
			map[string]any{"data.account_token": "****WXYZ", "data.user_token": "****9876",
				"data.api_url": "https://guru2.example.com/api/v2", "data.api_configured": true}, "[]"},
		{"yampi first PUT", http.MethodPut, "yampi",
			map[string]any{"webhook_secret": yampiSecret, "user_token": yampiUser, "user_secret_key": yampiUserKey,
				"store_alias": "loja-exemplo", "api_url": "https://api.dooki.com.br/v2"},
			map[string]any{"data.webhook_secret": "****QRST", "data.user_token": "****6666",
				"data.user_secret_key": "****7777", "data.store_alias": "loja-exemplo",
				"data.api_url": "https://api.dooki.com.br/v2", "data.api_configured": true}, "[]"},
		{"yampi PUT of the same store_alias keeps the secrets", http.MethodPut, "yampi",
			map[string]any{"store_alias": "loja-exemplo", "api_url": "https://api.dooki.com.br/v2"},
			map[string]any{"data.webhook_secret": "****QRST", "data.user_token": "****6666",
				"data.user_secret_key": "****7777", "data.store_alias": "loja-exemplo", "data.api_configured": true}, "[]"},
		{"yampi PUT of another store_alias alone drops the API credentials", http.MethodPut, "yampi",
			map[string]any{"store_alias": "loja-nova"},
			map[string]any{"data.webhook_secret": "****QRST", "data.user_token": "",
				"data.user_secret_key": "", "data.store_alias": "loja-nova",
				"data.api_url": "https://api.dooki.com.br/v2", "data.api_configured": false}, "[user_token user_secret_key]"},
		{"yampi the user token alone", http.MethodPut, "yampi",
			map[string]any{"user_token": yampiUser},
			map[string]any{"data.user_token": "****6666", "data.user_secret_key": "", "data.api_configured": false}, "[user_secret_key]"},
		{"yampi GET", http.MethodGet, "yampi", nil,
			map[string]any{"data.webhook_secret": "****QRST", "data.user_token": "****6666",
				"data.user_secret_key": "", "data.store_alias": "loja-nova"}, "[user_secret_key]"},
		{"yampi another store_alias with both credentials", http.MethodPut, "yampi",
			map[string]any{"store_alias": "loja-exemplo", "user_token": yampiUser, "user_secret_key": yampiUserKey},
			map[string]any{"data.webhook_secret": "****QRST", "data.user_token": "****6666",
				"data.user_secret_key": "****7777", "data.store_alias": "loja-exemplo", "data.api_configured": true}, "[]"},
		{"guru still as it was", http.MethodGet, "guru", nil,
			map[string]any{"data.account_token": "****WXYZ", "data.user_token": "****9876"}, "[]"},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			r := tn.do(t, st.method, "/api/v1/integrations/"+st.provider, st.body)
			wantStatus(t, r, http.StatusOK)
			wantKeys(t, r, "", "data")
			want := map[string]any{"data.provider": st.provider, "data.configured": true,
				"data.webhook_url": webhookURL(tn, st.provider)}
			for k, v := range st.want {
				want[k] = v
			}
			// Each provider shows only its own fields.
			if st.provider == "guru" {
				want["data.webhook_secret"], want["data.user_secret_key"], want["data.store_alias"] = absent{}, absent{}, absent{}
			} else {
				want["data.account_token"] = absent{}
			}
			wantFields(t, r, want)
			wantMissing(t, r, st.missing)
			noSecretIn(t, r)
		})
	}

	t.Run("stored encrypted", func(t *testing.T) {
		rows, err := env.pool.Query(context.Background(), `SELECT provider, account_token_enc, webhook_secret_enc,
  user_token_enc, user_secret_key_enc FROM integration_settings WHERE merchant_id = $1`, tn.merchant.ID)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		opened := map[string]bool{}
		n := 0
		for rows.Next() {
			n++
			var provider string
			var cols [4][]byte
			if err := rows.Scan(&provider, &cols[0], &cols[1], &cols[2], &cols[3]); err != nil {
				t.Fatal(err)
			}
			names := []string{"account_token_enc", "webhook_secret_enc", "user_token_enc", "user_secret_key_enc"}
			for i, c := range cols {
				for _, s := range secrets {
					if bytes.Contains(c, []byte(s)) {
						t.Errorf("%s: a column holds the secret %q in plain text", provider, s)
					}
				}
				if len(c) == 0 {
					continue
				}
				plain, err := env.box.Open(c, postgres.SealedAt("integration_settings", names[i], tn.merchant.ID, provider))
				if err != nil {
					t.Errorf("%s: a column does not open with the secrets key: %v", provider, err)
				}
				opened[plain] = true
			}
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		if n != 2 {
			t.Fatalf("integration_settings rows = %d, want 2", n)
		}
		for _, s := range []string{guruAccount, guruUser2, yampiSecret, yampiUser, yampiUserKey} {
			if !opened[s] {
				t.Errorf("no column opens to the secret %q", s)
			}
		}
	})

	t.Run("another merchant sees nothing", func(t *testing.T) {
		r := other.get(t, "/api/v1/integrations/guru")
		wantStatus(t, r, http.StatusOK)
		wantFields(t, r, map[string]any{"data.configured": false, "data.webhook_url": webhookURL(other, "guru")})
		noSecretIn(t, r)
	})

	errs := []struct {
		name, method, path string
		body               any
		status             int
		code, mentions     string
	}{
		{"unknown provider GET", http.MethodGet, "/api/v1/integrations/stripe", nil, http.StatusNotFound, "not_found", ""},
		{"unknown provider PUT", http.MethodPut, "/api/v1/integrations/stripe", map[string]any{"user_token": "x"},
			http.StatusNotFound, "not_found", ""},
		{"provider case matters", http.MethodGet, "/api/v1/integrations/GURU", nil, http.StatusNotFound, "not_found", ""},
		{"api_url without scheme", http.MethodPut, "/api/v1/integrations/guru", map[string]any{"api_url": "digitalmanager.guru/api/v2"},
			http.StatusBadRequest, "validation_error", "api_url"},
		{"api_url ftp", http.MethodPut, "/api/v1/integrations/yampi", map[string]any{"api_url": "ftp://api.dooki.com.br/v2"},
			http.StatusBadRequest, "validation_error", "api_url"},
		{"api_url without host", http.MethodPut, "/api/v1/integrations/guru", map[string]any{"api_url": "https://"},
			http.StatusBadRequest, "validation_error", "api_url"},
		{"api_url not text", http.MethodPut, "/api/v1/integrations/guru", `{"api_url": 42}`,
			http.StatusBadRequest, "validation_error", "api_url"},
		{"token not text", http.MethodPut, "/api/v1/integrations/guru", `{"account_token": ["a"]}`,
			http.StatusBadRequest, "validation_error", "account_token"},
		{"malformed JSON", http.MethodPut, "/api/v1/integrations/yampi", `{"webhook_secret": `,
			http.StatusBadRequest, "validation_error", ""},
	}
	for _, tt := range errs {
		t.Run(tt.name, func(t *testing.T) {
			r := tn.do(t, tt.method, tt.path, tt.body)
			wantError(t, r, tt.status, tt.code, tt.mentions)
		})
	}
	// A refused PUT changed nothing.
	r := tn.get(t, "/api/v1/integrations/guru")
	wantFields(t, r, map[string]any{"data.api_url": "https://guru2.example.com/api/v2", "data.account_token": "****WXYZ",
		"data.user_token": "****9876"})
}

// wantMissing checks data.api_missing, a JSON array (never null), printed
// as fmt prints a []string.
func wantMissing(t *testing.T, r reply, want string) {
	t.Helper()
	got, ok := at(r.json, "data.api_missing")
	if list, isList := got.([]any); !ok || !isList || fmt.Sprint(list) != want {
		t.Errorf("data.api_missing = %#v, want %s; body %s", got, want, r.raw)
	}
}

// TestIntegrationsRefuseNonPublicURLs: while PLATFORM_ALLOW_PRIVATE_NETWORKS
// is off, an api_url naming the operator's network, or plain http, is
// refused with 400 naming api_url and never the address; nothing is saved.
func TestIntegrationsRefuseNonPublicURLs(t *testing.T) {
	t.Parallel()
	tn := mustEnv(t).mustTenant(t)
	const notPublic, notHTTPS = "api_url: the address is not public", "api_url: only https URLs are allowed"
	for _, tc := range []struct{ url, host, message string }{
		{"https://127.0.0.1:8443/api/v2", "127.0.0.1", notPublic},
		{"https://10.0.0.5/api/v2", "10.0.0.5", notPublic},
		{"https://192.168.10.20:8443/v2", "192.168.10.20", notPublic},
		{"https://169.254.169.254/latest/meta-data/", "169.254.169.254", notPublic},
		{"https://[::1]:8443/", "::1", notPublic},
		{"https://[fd12::1]/", "fd12::1", notPublic},
		{"https://[::ffff:127.0.0.1]/", "::ffff:127.0.0.1", notPublic},
		{"https://0.0.0.0:8443/", "0.0.0.0", notPublic},
		{"https://localhost:8443/api", "localhost", notPublic},
		{"http://api.dooki.com.br/v2", "api.dooki.com.br", notHTTPS},
		{"http://127.0.0.1:9999/api/v2", "127.0.0.1", notHTTPS},
	} {
		for _, p := range []string{"guru", "yampi"} {
			r := tn.do(t, http.MethodPut, "/api/v1/integrations/"+p, map[string]any{"api_url": tc.url, "user_token": "ut-0123456789"})
			wantError(t, r, http.StatusBadRequest, "validation_error", "")
			wantFields(t, r, map[string]any{"error.message": tc.message})
			if bytes.Contains(r.raw, []byte(tc.host)) {
				t.Errorf("%s %s: the answer repeats the address: %s", p, tc.url, r.raw)
			}
		}
	}
	for _, p := range []string{"guru", "yampi"} {
		wantFields(t, tn.get(t, "/api/v1/integrations/"+p), map[string]any{"data.configured": false})
	}
}

// Every field is bounded: a longer one is refused with 400 naming it.
func TestIntegrationsBoundFields(t *testing.T) {
	t.Parallel()
	tn := mustEnv(t).mustTenant(t)
	long := strings.Repeat("x", 256)
	for _, tc := range []struct{ provider, field, value, message string }{
		{"guru", "account_token", long, "account_token: must be at most 255 characters"},
		{"guru", "user_token", long, "user_token: must be at most 255 characters"},
		{"yampi", "webhook_secret", long, "webhook_secret: must be at most 255 characters"},
		{"yampi", "user_secret_key", long, "user_secret_key: must be at most 255 characters"},
		{"yampi", "store_alias", long, "store_alias: must be at most 255 characters"},
		{"yampi", "api_url", "https://api.example.com/" + strings.Repeat("v", 2025), "api_url: must be at most 2048 characters"},
	} {
		r := tn.do(t, http.MethodPut, "/api/v1/integrations/"+tc.provider, map[string]any{tc.field: tc.value})
		wantError(t, r, http.StatusBadRequest, "validation_error", "")
		wantFields(t, r, map[string]any{"error.message": tc.message})
	}
	r := tn.do(t, http.MethodPut, "/api/v1/integrations/yampi", map[string]any{"store_alias": strings.Repeat("é", 255),
		"api_url": "https://api.example.com/" + strings.Repeat("v", 2024)})
	wantStatus(t, r, http.StatusOK)
}

// Hotmart and Kiwify: their webhook secret and pull credentials are
// write-only and masked, each shows only its own fields, the defaults
// show before the first save, and a new api_url or auth_url drops the
// stored client secret (and Hotmart's basic token).
func TestIntegrationsHotmartKiwify(t *testing.T) {
	t.Parallel()
	env := mustEnv(t)
	tn := env.mustTenant(t)
	const (
		hottok      = "hottok-0123456789abcdefWXYZ"
		hmSecret    = "hotmart-client-secret-9876"
		hmBasic     = "aG90bWFydC1iYXNpYy10b2tlbg==BASC"
		kwToken     = "kiwify-webhook-token-QRST"
		kwSecret    = "kiwify-client-secret-7777"
		hotmartAPI  = "https://developers.hotmart.com/payments/api/v1"
		hotmartAuth = "https://api-sec-vlc.hotmart.com/security/oauth/token"
	)
	secrets := []string{hottok, hmSecret, hmBasic, kwToken, kwSecret}
	r := tn.get(t, "/api/v1/integrations/hotmart")
	wantStatus(t, r, http.StatusOK)
	wantFields(t, r, map[string]any{"data.configured": false, "data.api_url": hotmartAPI, "data.auth_url": hotmartAuth,
		"data.hottok": "", "data.client_id": "", "data.account_token": absent{}, "data.user_token": absent{}})
	wantMissing(t, r, "[client_id client_secret basic_token]")
	r = tn.get(t, "/api/v1/integrations/kiwify")
	wantFields(t, r, map[string]any{"data.configured": false, "data.api_url": "https://public-api.kiwify.com/v1",
		"data.checkout_url": "", "data.webhook_token": "", "data.auth_url": absent{}, "data.webhook_secret": absent{}})
	wantMissing(t, r, "[client_id client_secret account_id]")

	for _, st := range []struct {
		name, provider string
		body, want     map[string]any
		missing        string
	}{
		{"hotmart first PUT", "hotmart",
			map[string]any{"hottok": hottok, "client_id": "hm-client", "client_secret": hmSecret, "basic_token": hmBasic,
				"account_token": "ignored-for-hotmart"},
			map[string]any{"data.hottok": "****WXYZ", "data.client_id": "hm-client", "data.client_secret": "****9876",
				"data.basic_token": "****BASC", "data.api_url": hotmartAPI, "data.auth_url": hotmartAuth,
				"data.api_configured": true, "data.account_token": absent{}}, "[]"},
		{"hotmart the default auth_url again keeps the secrets", "hotmart", map[string]any{"auth_url": hotmartAuth},
			map[string]any{"data.client_secret": "****9876", "data.basic_token": "****BASC", "data.api_configured": true}, "[]"},
		{"hotmart another auth_url drops them", "hotmart", map[string]any{"auth_url": "https://auth.example.com/oauth/token"},
			map[string]any{"data.hottok": "****WXYZ", "data.client_id": "hm-client", "data.client_secret": "",
				"data.basic_token": "", "data.auth_url": "https://auth.example.com/oauth/token", "data.api_configured": false},
			"[client_secret basic_token]"},
		{"kiwify first PUT", "kiwify",
			map[string]any{"webhook_token": kwToken, "client_id": "kw-client", "client_secret": kwSecret, "account_id": "acc-1",
				"checkout_url": "https://pay.kiwify.com.br/AbC123x?utm_source=x"},
			map[string]any{"data.webhook_token": "****QRST", "data.client_id": "kw-client", "data.client_secret": "****7777",
				"data.account_id": "acc-1", "data.checkout_url": "https://pay.kiwify.com.br/AbC123x?utm_source=x",
				"data.api_configured": true}, "[]"},
		{"kiwify another api_url drops the client secret", "kiwify", map[string]any{"api_url": "https://kiwify.example.com/v1"},
			map[string]any{"data.webhook_token": "****QRST", "data.client_secret": "", "data.account_id": "acc-1",
				"data.api_url": "https://kiwify.example.com/v1", "data.api_configured": false}, "[client_secret]"},
	} {
		t.Run(st.name, func(t *testing.T) {
			r := tn.do(t, http.MethodPut, "/api/v1/integrations/"+st.provider, st.body)
			wantStatus(t, r, http.StatusOK)
			want := map[string]any{"data.provider": st.provider, "data.configured": true,
				"data.webhook_url": ingestURL + "/api/webhooks/" + st.provider + "/" + tn.merchant.ID.String(),
				"data.user_token":  absent{}, "data.store_alias": absent{}}
			for k, v := range st.want {
				want[k] = v
			}
			wantFields(t, r, want)
			wantMissing(t, r, st.missing)
			for _, s := range secrets {
				if bytes.Contains(r.raw, []byte(s)) {
					t.Errorf("response shows the secret %q: %s", s, r.raw)
				}
			}
		})
	}

	// The secrets are sealed, each for its own column and row.
	wantStatus(t, tn.do(t, http.MethodPut, "/api/v1/integrations/hotmart", map[string]any{"client_secret": hmSecret, "basic_token": hmBasic}), http.StatusOK)
	var hottokEnc, secretEnc []byte
	if err := env.pool.QueryRow(context.Background(), `SELECT account_token_enc, client_secret_enc FROM integration_settings
  WHERE merchant_id = $1 AND provider = 'hotmart'`, tn.merchant.ID).Scan(&hottokEnc, &secretEnc); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(hottokEnc, []byte(hottok)) || bytes.Contains(secretEnc, []byte(hmSecret)) {
		t.Errorf("a Hotmart secret is stored in plain text")
	}
	if plain, err := env.box.Open(hottokEnc, postgres.SealedAt("integration_settings", "account_token_enc", tn.merchant.ID, "hotmart")); err != nil || plain != hottok {
		t.Errorf("the hottok opens to %q, %v", plain, err)
	}
	if plain, err := env.box.Open(secretEnc, postgres.SealedAt("integration_settings", "client_secret_enc", tn.merchant.ID, "hotmart")); err != nil || plain != hmSecret {
		t.Errorf("the client secret opens to %q, %v", plain, err)
	}

	long := strings.Repeat("x", 256)
	for _, tc := range []struct {
		provider string
		body     any
		message  string
	}{
		{"hotmart", map[string]any{"hottok": long}, "hottok: must be at most 255 characters"},
		{"hotmart", map[string]any{"basic_token": long}, "basic_token: must be at most 255 characters"},
		{"kiwify", map[string]any{"webhook_token": long}, "webhook_token: must be at most 255 characters"},
		{"kiwify", map[string]any{"account_id": long}, "account_id: must be at most 255 characters"},
		{"kiwify", map[string]any{"checkout_url": "https://pay.kiwify.com.br/" + strings.Repeat("p", 2030)},
			"checkout_url: must be at most 2048 characters"},
		{"hotmart", map[string]any{"auth_url": "https://127.0.0.1:8443/oauth"}, "auth_url: the address is not public"},
		{"hotmart", map[string]any{"api_url": "http://developers.hotmart.com/x"}, "api_url: only https URLs are allowed"},
		{"kiwify", map[string]any{"api_url": "https://10.0.0.5/v1"}, "api_url: the address is not public"},
		{"kiwify", map[string]any{"checkout_url": "http://pay.kiwify.com.br/x"}, "checkout_url: must be an https URL"},
		{"kiwify", map[string]any{"checkout_url": "pay.kiwify.com.br/x"}, "checkout_url: must be an absolute URL with a host"},
		{"kiwify", map[string]any{"checkout_url": "https://u:p@pay.kiwify.com.br/x"}, "checkout_url: must be a URL without credentials or fragment"},
	} {
		r := tn.do(t, http.MethodPut, "/api/v1/integrations/"+tc.provider, tc.body)
		wantError(t, r, http.StatusBadRequest, "validation_error", "")
		wantFields(t, r, map[string]any{"error.message": tc.message})
	}
	// The refusals changed nothing.
	wantFields(t, tn.get(t, "/api/v1/integrations/kiwify"), map[string]any{"data.account_id": "acc-1",
		"data.checkout_url": "https://pay.kiwify.com.br/AbC123x?utm_source=x", "data.api_url": "https://kiwify.example.com/v1"})
}

// A member's Kiwify referral link is the integration's checkout_url with
// her code in sck, its own query kept; null while no checkout_url is set,
// and once she is erased.
func TestMemberKiwifyReferralLink(t *testing.T) {
	t.Parallel()
	tn := mustEnv(t).mustTenant(t)
	tn.mustCampaign(t, map[string]any{"name": "Padrão", "reward_type": "fixed", "reward_value": 1000})
	m := tn.mustMember(t, "ana@example.com", "Ana Souza")
	path := "/api/v1/members/" + m.prefID
	wantFields(t, tn.get(t, path), map[string]any{"data.referral_links.kiwify": nil})

	r := tn.do(t, http.MethodPut, "/api/v1/integrations/kiwify", map[string]any{"webhook_token": "kiwify-token-0001",
		"checkout_url": "https://pay.kiwify.com.br/AbC123x?utm_source=insta&sck=old"})
	wantStatus(t, r, http.StatusOK)
	want := "https://pay.kiwify.com.br/AbC123x?sck=" + url.QueryEscape(m.coupon) + "&utm_source=insta"
	wantFields(t, tn.get(t, path), map[string]any{"data.referral_links.kiwify": want})
	created := tn.do(t, http.MethodPost, "/api/v1/members", map[string]any{"email": "bia@example.com", "name": "Bia Lima"})
	wantStatus(t, created, http.StatusCreated)
	code, _ := at(created.json, "data.coupon_code")
	wantFields(t, created, map[string]any{"data.referral_links.kiwify": "https://pay.kiwify.com.br/AbC123x?sck=" +
		url.QueryEscape(code.(string)) + "&utm_source=insta"})
	// An erased member's code refers nobody: her link is null.
	if _, _, err := postgres.NewMemberStore(tn.env.pool).EraseMember(context.Background(), tn.merchant.ID, m.id); err != nil {
		t.Fatal(err)
	}
	wantFields(t, tn.get(t, path), map[string]any{"data.referral_links.kiwify": nil})
}

// Eduzz: its webhook secret is write-only and masked, its checkout link
// shown as saved; it has no API, so nothing of one is missing; a member's
// Eduzz referral link is the checkout link with her code in utm_content
// (null for an erased member: pkg/e2e TestEduzzWebhooks).
func TestIntegrationEduzz(t *testing.T) {
	t.Parallel()
	tn := mustEnv(t).mustTenant(t)
	tn.mustCampaign(t, map[string]any{"name": "Padrão", "reward_type": "fixed", "reward_value": 1000})
	m := tn.mustMember(t, "ana@example.com", "Ana Souza")
	const secret = "eduzz-webhook-secret-LMNO"
	r := tn.get(t, "/api/v1/integrations/eduzz")
	wantStatus(t, r, http.StatusOK)
	wantFields(t, r, map[string]any{"data.configured": false, "data.webhook_secret": "", "data.checkout_url": "",
		"data.api_configured": true, "data.api_url": absent{}, "data.webhook_token": absent{}})
	wantMissing(t, r, "[]")
	path := "/api/v1/members/" + m.prefID
	wantFields(t, tn.get(t, path), map[string]any{"data.referral_links.eduzz": nil})

	r = tn.do(t, http.MethodPut, "/api/v1/integrations/eduzz", map[string]any{"webhook_secret": secret,
		"checkout_url": "https://sun.eduzz.com/2384756?utm_source=insta&utm_content=old", "user_token": "ignored-for-eduzz"})
	wantStatus(t, r, http.StatusOK)
	wantFields(t, r, map[string]any{"data.provider": "eduzz", "data.configured": true, "data.webhook_secret": "****LMNO",
		"data.checkout_url": "https://sun.eduzz.com/2384756?utm_source=insta&utm_content=old", "data.user_token": absent{},
		"data.webhook_url": ingestURL + "/api/webhooks/eduzz/" + tn.merchant.ID.String()})
	if bytes.Contains(r.raw, []byte(secret)) {
		t.Errorf("the answer shows the secret: %s", r.raw)
	}
	// A blank secret keeps the saved one.
	r = tn.do(t, http.MethodPut, "/api/v1/integrations/eduzz", map[string]any{"webhook_secret": ""})
	wantFields(t, r, map[string]any{"data.webhook_secret": "****LMNO", "data.checkout_url": "https://sun.eduzz.com/2384756?utm_source=insta&utm_content=old"})
	want := "https://sun.eduzz.com/2384756?utm_content=" + url.QueryEscape(m.coupon) + "&utm_source=insta"
	wantFields(t, tn.get(t, path), map[string]any{"data.referral_links.eduzz": want, "data.referral_links.kiwify": nil})

	for _, tc := range []struct {
		body    any
		message string
	}{
		{map[string]any{"webhook_secret": strings.Repeat("x", 256)}, "webhook_secret: must be at most 255 characters"},
		{map[string]any{"checkout_url": "http://sun.eduzz.com/2384756"}, "checkout_url: must be an https URL"},
	} {
		r := tn.do(t, http.MethodPut, "/api/v1/integrations/eduzz", tc.body)
		wantError(t, r, http.StatusBadRequest, "validation_error", "")
		wantFields(t, r, map[string]any{"error.message": tc.message})
	}
}
