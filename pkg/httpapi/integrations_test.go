package httpapi_test

import (
	"bytes"
	"context"
	"net/http"
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
	for _, p := range []string{"guru", "yampi"} {
		r := tn.get(t, "/api/v1/integrations/"+p)
		wantStatus(t, r, http.StatusOK)
		wantKeys(t, r, "", "data")
		wantFields(t, r, map[string]any{"data.provider": p, "data.configured": false, "data.webhook_url": webhookURL(tn, p)})
	}

	steps := []struct {
		name, method, provider string
		body                   any
		want                   map[string]any
	}{
		{"guru first PUT", http.MethodPut, "guru",
			map[string]any{"account_token": guruAccount, "user_token": guruUser, "api_url": "https://digitalmanager.guru/api/v2"},
			map[string]any{"data.account_token": "****WXYZ", "data.user_token": "****1234",
				"data.api_url": "https://digitalmanager.guru/api/v2"}},
		{"guru GET", http.MethodGet, "guru", nil,
			map[string]any{"data.account_token": "****WXYZ", "data.user_token": "****1234",
				"data.api_url": "https://digitalmanager.guru/api/v2"}},
		{"guru PUT of one field keeps the others", http.MethodPut, "guru",
			map[string]any{"user_token": guruUser2},
			map[string]any{"data.account_token": "****WXYZ", "data.user_token": "****9876",
				"data.api_url": "https://digitalmanager.guru/api/v2"}},
		{"guru PUT of a local api_url", http.MethodPut, "guru",
			map[string]any{"api_url": "http://127.0.0.1:9999/api/v2"},
			map[string]any{"data.account_token": "****WXYZ", "data.user_token": "****9876",
				"data.api_url": "http://127.0.0.1:9999/api/v2"}},
		{"guru empty PUT keeps everything", http.MethodPut, "guru", map[string]any{},
			map[string]any{"data.account_token": "****WXYZ", "data.user_token": "****9876",
				"data.api_url": "http://127.0.0.1:9999/api/v2"}},
		{"yampi first PUT", http.MethodPut, "yampi",
			map[string]any{"webhook_secret": yampiSecret, "user_token": yampiUser, "user_secret_key": yampiUserKey,
				"store_alias": "loja-exemplo", "api_url": "https://api.dooki.com.br/v2"},
			map[string]any{"data.webhook_secret": "****QRST", "data.user_token": "****6666",
				"data.user_secret_key": "****7777", "data.store_alias": "loja-exemplo",
				"data.api_url": "https://api.dooki.com.br/v2"}},
		{"yampi PUT of store_alias keeps the secrets", http.MethodPut, "yampi",
			map[string]any{"store_alias": "loja-nova"},
			map[string]any{"data.webhook_secret": "****QRST", "data.user_token": "****6666",
				"data.user_secret_key": "****7777", "data.store_alias": "loja-nova",
				"data.api_url": "https://api.dooki.com.br/v2"}},
		{"yampi GET", http.MethodGet, "yampi", nil,
			map[string]any{"data.webhook_secret": "****QRST", "data.user_token": "****6666",
				"data.user_secret_key": "****7777", "data.store_alias": "loja-nova"}},
		{"guru still as it was", http.MethodGet, "guru", nil,
			map[string]any{"data.account_token": "****WXYZ", "data.user_token": "****9876"}},
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
	wantFields(t, r, map[string]any{"data.api_url": "http://127.0.0.1:9999/api/v2", "data.account_token": "****WXYZ"})
}
