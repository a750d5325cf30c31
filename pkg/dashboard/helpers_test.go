package dashboard_test

import (
	"context"
	"io"
	"maps"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
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
	clock *testenv.Clock // every role's clock (deps.Now): testenv.Now's instant, running
}

func newEnv(t *testing.T) *env { t.Helper(); return newEnvWith(t, nil) }

// newEnvWith is newEnv with the settings of env (TRUSTED_PROXIES, …).
func newEnvWith(t *testing.T, settings map[string]string) *env {
	t.Helper()
	srv := httptest.NewUnstartedServer(nil)
	// The tests share 127.0.0.1 and one Redis: the API's
	// failed-authentication limit is on only where a test sets it.
	vars := map[string]string{"AUTH_FAILURE_LIMIT": "0"}
	maps.Copy(vars, settings)
	cfg, err := program.LoadConfig(func(k string) string { return vars[k] })
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
	clock := testenv.NewClock(t)
	d.Now = clock.Now
	srv.Config.Handler = program.APIRouter(d)
	srv.Start()
	t.Cleanup(srv.Close)
	e := &env{t: t, url: srv.URL, deps: d, logs: logs, store: postgres.NewDashboardUserStore(d.Pool), clock: clock}
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

var inviteLinkRe = regexp.MustCompile(`data-testid="invite-link"[^>]*>([^<]+)<`)

// inviteURL invites email with role as c and returns the one-time link
// the answer shows (the only place it is ever shown).
func (e *env) inviteURL(c *http.Client, email, role string) string {
	e.t.Helper()
	r := e.do(c, http.MethodPost, "/dashboard/settings/users/invite", url.Values{"email": {email}, "role": {role}})
	m := inviteLinkRe.FindStringSubmatch(r.body)
	if r.StatusCode != http.StatusOK || m == nil {
		e.t.Fatalf("invite %s: %d, no invite-link element: %s", email, r.StatusCode, r.body)
	}
	return m[1]
}

// accept accepts the invitation link with password in a new client,
// signed in as the new user.
func (e *env) accept(link, password string) *http.Client {
	e.t.Helper()
	c := e.client()
	r := e.do(c, http.MethodPost, strings.TrimPrefix(link, e.url), url.Values{"password": {password}})
	if r.StatusCode != http.StatusSeeOther {
		e.t.Fatalf("accept invitation: %d: %s", r.StatusCode, r.body)
	}
	return c
}

// viewer returns a client signed in as a viewer the owner invited.
func (e *env) viewer() *http.Client {
	e.t.Helper()
	return e.accept(e.inviteURL(e.owner(), "viewer@loja-demo.example.com", "viewer"), "viewer-password-1")
}

// sessionRows counts the rows of the sessions table: the server's
// sessions.
func (e *env) sessionRows() int {
	e.t.Helper()
	var n int
	if err := e.deps.Pool.QueryRow(context.Background(), `SELECT count(*) FROM sessions`).Scan(&n); err != nil {
		e.t.Fatal(err)
	}
	return n
}

// sessionCookie is c's session cookie for the dashboard, as a thief would
// copy it.
func (e *env) sessionCookie(c *http.Client) *http.Cookie {
	e.t.Helper()
	u, _ := url.Parse(e.url + "/dashboard")
	for _, k := range c.Jar.Cookies(u) {
		if k.Name == "convida_session" {
			return &http.Cookie{Name: k.Name, Value: k.Value}
		}
	}
	e.t.Fatal("no convida_session cookie")
	return nil
}

// withCookie is a client that sends only the cookie k (no jar), so that
// a response cannot take it away.
func (e *env) withCookie(k *http.Cookie) *http.Client {
	return &http.Client{Transport: cookieTransport{k}, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

type cookieTransport struct{ k *http.Cookie }

func (t cookieTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.AddCookie(t.k)
	return http.DefaultTransport.RoundTrip(r)
}
