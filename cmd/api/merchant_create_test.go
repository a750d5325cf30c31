package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"go.uber.org/zap"

	"github.com/convida/convida/pkg/program"
	"github.com/convida/convida/pkg/secretbox"
	"github.com/convida/convida/pkg/testenv"
)

// TestMerchantCreatePrintsAPasswordThatSignsIn: every e-mail and password
// `api merchant create` prints signs in to the dashboard, whatever its
// letter case, and the same e-mail a second time (a user of another
// merchant); an e-mail the sign-in form could never submit (a display
// name, an IP literal, an underscore in the host) is refused on the
// command line, naming --email, and creates nothing.
func TestMerchantCreatePrintsAPasswordThatSignsIn(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cfg, err := program.LoadConfig(func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	cfg.DatabaseURL, cfg.RedisURL, cfg.KafkaBrokers = testenv.MustDatabase(t), testenv.RedisURL(), testenv.MustBroker(t)
	cfg.SecretsKey = secretbox.NewKey()
	d, err := program.Open(ctx, cfg, zap.NewNop(), "test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	srv := httptest.NewServer(program.APIRouter(d))
	t.Cleanup(srv.Close)
	signIn := func(email, password string) (int, string) {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/dashboard/sign-in",
			strings.NewReader(url.Values{"email": {email}, "password": {password}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", srv.URL)
		noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		resp, err := noRedirect.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode, resp.Header.Get("Location")
	}
	merchants := func() int {
		var n int
		if err := d.Pool.QueryRow(ctx, `SELECT count(*) FROM merchants`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}

	for _, args := range [][]string{
		{"--store-url", "https://loja.example.com"},
		{"--store-url", "http://localhost:8080"},
		{"--store-url", "https://loja.example.com", "--email", "Ana.Souza+loja@Example.com"},
		{"--store-url", "https://outra.example.com", "--email", "ana.souza+loja@example.com"}, // a user of the merchant above too
	} {
		var out bytes.Buffer
		if err := bootstrap(ctx, cfg, append([]string{"merchant", "create", "--name", "Loja"}, args...), &out); err != nil {
			t.Fatalf("merchant create %v: %v", args, err)
		}
		var printed struct {
			Email    string `json:"dashboard_email"`
			Password string `json:"dashboard_password"`
		}
		if err := json.Unmarshal(out.Bytes(), &printed); err != nil {
			t.Fatal(err)
		}
		if status, to := signIn(printed.Email, printed.Password); status != http.StatusSeeOther || to != "/dashboard" {
			t.Errorf("merchant create %v printed %s and a password that do not sign in: %d to %q", args, printed.Email, status, to)
		}
	}

	before := merchants()
	for _, args := range [][]string{
		{"--store-url", "https://loja.example.com", "--email", "Ana <ana@example.com>"},
		{"--store-url", "https://loja.example.com", "--email", "ana"},
		{"--store-url", "https://loja.example.com", "--email", "ana@loja_x.example.com"},
		{"--store-url", "https://loja.example.com", "--email", strings.Repeat("a", 250) + "@example.com"},
		{"--store-url", "http://[::1]:8080"},
		{"--store-url", "http://127.0.0.1:8080", "--email", "ana@[127.0.0.1]"},
	} {
		var out bytes.Buffer
		err := bootstrap(ctx, cfg, append([]string{"merchant", "create", "--name", "Loja"}, args...), &out)
		if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), "--email") || out.Len() != 0 {
			t.Errorf("merchant create %v: %v, printed %q; want a usage error naming --email, nothing printed", args, err, out.String())
		}
	}
	if n := merchants(); n != before {
		t.Errorf("the refused commands created %d merchants", n-before)
	}
}
