package dashboard_test

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest"
	"go.uber.org/zap/zaptest/observer"

	"github.com/convida/convida/pkg/merchant"
	"github.com/convida/convida/pkg/postgres"
	"github.com/convida/convida/pkg/program"
	"github.com/convida/convida/pkg/secretbox"
	"github.com/convida/convida/pkg/testenv"
)

// env is the API program's router (the dashboard under /dashboard, the
// API under /api/v1) on a fresh database, served by httptest, with a demo
// merchant registered as `make run` registers it, and every log line kept.
type env struct {
	t     *testing.T
	url   string
	deps  *program.Deps
	demo  merchant.Credentials
	logs  *observer.ObservedLogs
	store *postgres.DashboardUserStore
}

func newEnv(t *testing.T) *env {
	t.Helper()
	srv := httptest.NewUnstartedServer(nil)
	cfg, err := program.LoadConfig(func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	cfg.DatabaseURL, cfg.RedisURL, cfg.KafkaBrokers = testenv.MustDatabase(t), testenv.RedisURL(), testenv.MustBroker(t)
	cfg.SecretsKey = secretbox.NewKey()
	cfg.PublicURL = "http://" + srv.Listener.Addr().String()
	core, logs := observer.New(zap.DebugLevel)
	log := zap.New(zapcore.NewTee(zaptest.NewLogger(t, zaptest.Level(zap.WarnLevel)).Core(), core))
	d, err := program.Open(context.Background(), cfg, log, "test")
	if err != nil {
		t.Fatalf("program.Open: %v", err)
	}
	t.Cleanup(d.Close)
	srv.Config.Handler = program.APIRouter(d)
	srv.Start()
	t.Cleanup(srv.Close)
	e := &env{t: t, url: srv.URL, deps: d, logs: logs, store: postgres.NewDashboardUserStore(d.Pool)}
	e.demo = e.register("Loja Demo", "https://loja-demo.example.com", "DEMO")
	return e
}

// register creates a merchant as `merchant create` does.
func (e *env) register(name, storeURL, prefix string) merchant.Credentials {
	e.t.Helper()
	c, err := merchant.Register(context.Background(), postgres.NewMerchantStore(e.deps.Pool, e.deps.Box),
		&merchant.Merchant{Name: name, StoreURL: storeURL, CodePrefix: prefix})
	if err != nil {
		e.t.Fatalf("merchant.Register: %v", err)
	}
	return c
}

// client is a browser-like HTTP client: it keeps cookies and does not
// follow redirects, so a test sees each 303.
func (e *env) client() *http.Client {
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

type response struct {
	*http.Response
	body string
}

// do sends a request with the dashboard's own Origin on a POST, as a
// browser does, unless headers say otherwise.
func (e *env) do(c *http.Client, method, path string, form url.Values, headers ...string) response {
	e.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, e.url+path, body)
	if err != nil {
		e.t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if method == http.MethodPost {
		req.Header.Set("Origin", e.url)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := c.Do(req)
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return response{Response: resp, body: string(b)}
}

// signIn signs c in with email and password and checks it worked.
func (e *env) signIn(c *http.Client, email, password string) {
	e.t.Helper()
	r := e.do(c, http.MethodPost, "/dashboard/sign-in", url.Values{"email": {email}, "password": {password}})
	if r.StatusCode != http.StatusSeeOther || r.Header.Get("Location") != "/dashboard" {
		e.t.Fatalf("sign in as %s: %d %s, want 303 to /dashboard: %s", email, r.StatusCode, r.Header.Get("Location"), r.body)
	}
}

// owner returns a client signed in as the demo merchant's owner.
func (e *env) owner() *http.Client {
	c := e.client()
	e.signIn(c, e.demo.DashboardEmail, e.demo.DashboardPassword)
	return c
}

// inviteURL invites email with role as c and returns the one-time link
// from the "dashboard invite" log line.
func (e *env) inviteURL(c *http.Client, email, role string) string {
	e.t.Helper()
	r := e.do(c, http.MethodPost, "/dashboard/settings/users/invite", url.Values{"email": {email}, "role": {role}})
	if r.StatusCode != http.StatusSeeOther {
		e.t.Fatalf("invite %s: %d: %s", email, r.StatusCode, r.body)
	}
	for _, entry := range e.logs.FilterMessage("dashboard invite").All() {
		if entry.ContextMap()["email"] == email {
			return entry.ContextMap()["url"].(string)
		}
	}
	e.t.Fatalf("no \"dashboard invite\" log line for %s", email)
	return ""
}

// viewer returns a client signed in as a viewer the owner invited.
func (e *env) viewer() *http.Client {
	e.t.Helper()
	link := e.inviteURL(e.owner(), "viewer@loja-demo.example.com", "viewer")
	c := e.client()
	r := e.do(c, http.MethodPost, strings.TrimPrefix(link, e.url), url.Values{"password": {"viewer-password-1"}})
	if r.StatusCode != http.StatusSeeOther {
		e.t.Fatalf("accept invitation: %d: %s", r.StatusCode, r.body)
	}
	return c
}
