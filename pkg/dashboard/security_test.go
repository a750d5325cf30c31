package dashboard_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/postgres"
)

const wantCSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"frame-ancestors 'none'; base-uri 'self'; form-action 'self'"

// The pages of the navigation and settings, each a bookmarkable URL.
var pagePaths = []string{"/dashboard", "/dashboard/members", "/dashboard/referrals", "/dashboard/campaigns",
	"/dashboard/creators", "/dashboard/redemptions", "/dashboard/integrations", "/dashboard/webhooks",
	"/dashboard/settings/api-keys", "/dashboard/settings/users", "/dashboard/settings/password",
	"/dashboard/members/new", "/dashboard/creators/new",
	"/dashboard/referrals?review_required=true", "/dashboard/campaigns/new"}

func checkSecurityHeaders(t *testing.T, what string, r response) {
	t.Helper()
	if got := r.Header.Get("Content-Security-Policy"); got != wantCSP {
		t.Errorf("%s: Content-Security-Policy %q, want %q", what, got, wantCSP)
	}
	if got := r.Header.Get("X-Content-Type-Options"); got != "nosniff" {
		t.Errorf("%s: X-Content-Type-Options %q", what, got)
	}
	if got := r.Header.Get("Referrer-Policy"); got != "same-origin" {
		t.Errorf("%s: Referrer-Policy %q", what, got)
	}
	if strings.HasPrefix(r.Header.Get("Content-Type"), "text/html") && r.Header.Get("Cache-Control") != "no-store" {
		t.Errorf("%s: an HTML page with Cache-Control %q, want no-store", what, r.Header.Get("Cache-Control"))
	}
}

func TestSecurityHeadersOnEveryResponse(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	anon, owner := e.client(), e.owner()
	for _, p := range pagePaths {
		r := e.do(owner, http.MethodGet, p, nil)
		if r.StatusCode != http.StatusOK {
			t.Errorf("GET %s: %d", p, r.StatusCode)
		}
		checkSecurityHeaders(t, "GET "+p, r)
		checkSecurityHeaders(t, "GET "+p+" without a session", e.do(anon, http.MethodGet, p, nil))
	}
	notFound := e.do(owner, http.MethodGet, "/dashboard/no-such-page", nil)
	if notFound.StatusCode != http.StatusNotFound || !strings.Contains(notFound.body, "Not found") {
		t.Errorf("an unknown page: %d, want 404 with a page saying so: %s", notFound.StatusCode, notFound.body)
	}
	checkSecurityHeaders(t, "404", notFound)
	checkSecurityHeaders(t, "sign-in page", e.do(anon, http.MethodGet, "/dashboard/sign-in", nil))
	checkSecurityHeaders(t, "failed sign-in", e.do(anon, http.MethodPost, "/dashboard/sign-in", url.Values{"email": {"x@y.z"}, "password": {"no"}}))
	checkSecurityHeaders(t, "refused origin", e.do(anon, http.MethodPost, "/dashboard/sign-in", nil, "Origin", "https://evil.example"))
	asset := e.do(anon, http.MethodGet, "/dashboard/assets/app.js", nil)
	checkSecurityHeaders(t, "asset", asset)
	if asset.StatusCode != http.StatusOK || !strings.Contains(asset.Header.Get("Cache-Control"), "max-age=31536000") {
		t.Errorf("app.js: %d Cache-Control %q, want 200 cached a year", asset.StatusCode, asset.Header.Get("Cache-Control"))
	}
	// The icon, linked from every page and where browsers look for one.
	page := e.do(owner, http.MethodGet, "/dashboard", nil)
	link := regexp.MustCompile(`<link rel="icon" href="(/dashboard/assets/favicon\.svg\?v=[^"]+)" type="image/svg\+xml">`).FindStringSubmatch(page.body)
	if link == nil {
		t.Fatalf("the overview links no icon: %s", page.body)
	}
	for _, p := range append(link[1:], "/favicon.ico") {
		icon := e.do(anon, http.MethodGet, p, nil)
		if icon.StatusCode != http.StatusOK || icon.Header.Get("Content-Type") != "image/svg+xml" || !strings.HasPrefix(icon.body, "<svg ") {
			t.Errorf("GET %s: %d %s %.40q, want the SVG icon", p, icon.StatusCode, icon.Header.Get("Content-Type"), icon.body)
		}
		checkSecurityHeaders(t, "icon", icon)
	}
	missing := e.do(anon, http.MethodGet, "/dashboard/assets/nope.js", nil)
	if missing.StatusCode != http.StatusNotFound {
		t.Errorf("a missing asset: %d, want 404", missing.StatusCode)
	}
	checkSecurityHeaders(t, "missing asset", missing)
}

func TestForeignOriginRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	anon, owner := e.client(), e.owner()
	signIn := url.Values{"email": {e.demo.DashboardEmail}, "password": {e.demo.DashboardPassword}}
	for _, tc := range []struct {
		name    string
		c       *http.Client
		path    string
		form    url.Values
		headers []string
	}{
		{"sign-in from another origin", anon, "/dashboard/sign-in", signIn, []string{"Origin", "https://evil.example"}},
		{"sign-in from another port", anon, "/dashboard/sign-in", signIn, []string{"Origin", "http://127.0.0.1:1"}},
		{"sign-in cross-site without Origin", anon, "/dashboard/sign-in", signIn, []string{"Origin", "", "Sec-Fetch-Site", "cross-site"}},
		{"sign-in from Origin null", anon, "/dashboard/sign-in", signIn, []string{"Origin", "null"}},
		{"sign-in cross-site with the right Origin", anon, "/dashboard/sign-in", signIn, []string{"Sec-Fetch-Site", "cross-site"}},
		{"remove a user from Origin null", owner, "/dashboard/settings/users/" + uuid.NewString() + "/remove", url.Values{}, []string{"Origin", "null"}},
		{"invite cross-site", owner, "/dashboard/settings/users/invite", url.Values{"email": {"x@y.z"}, "role": {"owner"}}, []string{"Origin", "", "Sec-Fetch-Site", "cross-site"}},
		{"generate a key from another origin", owner, "/dashboard/settings/api-keys", url.Values{}, []string{"Origin", "https://evil.example"}},
		{"sign out from another origin", owner, "/dashboard/sign-out", url.Values{}, []string{"Origin", "null"}},
		{"language from another origin", anon, "/dashboard/language", url.Values{"lang": {"pt-BR"}}, []string{"Origin", "https://evil.example"}},
	} {
		r := e.do(tc.c, http.MethodPost, tc.path, tc.form, tc.headers...)
		if r.StatusCode != http.StatusForbidden || !strings.Contains(r.body, "another site") {
			t.Errorf("%s: %d, want 403 and a page saying why: %s", tc.name, r.StatusCode, r.body)
		}
		if r.Header.Get("Set-Cookie") != "" {
			t.Errorf("%s: a refused request set a cookie: %s", tc.name, r.Header.Get("Set-Cookie"))
		}
	}
	keys, err := postgres.NewMerchantStore(e.deps.Pool, e.deps.Box).ListKeys(context.Background(), uuid.MustParse(e.demo.MerchantID))
	if err != nil || len(keys) != 1 {
		t.Errorf("keys after the refused generation: %d (%v), want only the first one", len(keys), err)
	}
	// The owner is still signed in: the refused sign-out did nothing.
	if r := e.do(owner, http.MethodGet, "/dashboard/settings/api-keys", nil); r.StatusCode != http.StatusOK {
		t.Errorf("after a refused sign-out: %d, want 200", r.StatusCode)
	}
}

func TestNoSessionRedirectsToSignIn(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	anon := e.client()
	for _, p := range append(pagePaths, "/dashboard/no-such-page", "/dashboard/settings/api-keys/"+uuid.NewString()+"/revoke") {
		r := e.do(anon, http.MethodGet, p, nil)
		if r.StatusCode != http.StatusSeeOther || r.Header.Get("Location") != "/dashboard/sign-in" {
			t.Errorf("GET %s without a session: %d to %q, want 303 to /dashboard/sign-in", p, r.StatusCode, r.Header.Get("Location"))
		}
	}
	r := e.do(anon, http.MethodPost, "/dashboard/settings/api-keys", url.Values{})
	if r.StatusCode != http.StatusSeeOther || r.Header.Get("Location") != "/dashboard/sign-in" {
		t.Errorf("POST generate without a session: %d to %q, want 303 to sign in", r.StatusCode, r.Header.Get("Location"))
	}
	// After signing out the old cookie no longer works.
	owner := e.owner()
	if r := e.do(owner, http.MethodPost, "/dashboard/sign-out", url.Values{}); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign out: %d", r.StatusCode)
	}
	if r := e.do(owner, http.MethodGet, "/dashboard", nil); r.StatusCode != http.StatusSeeOther {
		t.Errorf("after sign out: %d, want 303 to sign in", r.StatusCode)
	}
}

var newKeyRe = regexp.MustCompile(`data-testid="new-api-key"[^>]*>([^<]+)<`)

func TestGeneratedKeyShownOnlyOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	owner := e.owner()
	r := e.do(owner, http.MethodPost, "/dashboard/settings/api-keys", url.Values{})
	m := newKeyRe.FindStringSubmatch(r.body)
	if r.StatusCode != http.StatusOK || m == nil {
		t.Fatalf("generate: %d, no new-api-key element: %s", r.StatusCode, r.body)
	}
	key := m[1]
	if r.Header.Get("Cache-Control") != "no-store" {
		t.Errorf("the response with the key: Cache-Control %q, want no-store", r.Header.Get("Cache-Control"))
	}
	api, _ := http.NewRequest(http.MethodGet, e.url+"/api/v1/members", nil)
	api.Header.Set("X-API-Key", key)
	resp, err := http.DefaultClient.Do(api)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("the API with the new key: %d, want 200", resp.StatusCode)
	}
	for _, p := range pagePaths {
		if r := e.do(owner, http.MethodGet, p, nil); strings.Contains(r.body, key) {
			t.Errorf("GET %s shows the key again", p)
		}
	}
	if list := e.do(owner, http.MethodGet, "/dashboard/settings/api-keys", nil); !strings.Contains(list.body, key[:8]) {
		t.Errorf("the key list does not show the key's first 8 characters %q", key[:8])
	}
	for _, entry := range e.logs.All() {
		if strings.Contains(entry.Message, key) {
			t.Errorf("log line %q contains the key", entry.Message)
		}
		for k, v := range entry.ContextMap() {
			if s, ok := v.(string); ok && strings.Contains(s, key) {
				t.Errorf("log line %q field %s contains the key", entry.Message, k)
			}
		}
	}
}

// One merchant's user sees nothing of another merchant: its key ids are
// not found, and a revocation of them changes nothing.
func TestOtherMerchantsIDsNotFound(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	other := e.register("Outra Loja", "https://outra.example.com", "OUTRA")
	keys, err := postgres.NewMerchantStore(e.deps.Pool, e.deps.Box).ListKeys(context.Background(), uuid.MustParse(other.MerchantID))
	if err != nil || len(keys) != 1 {
		t.Fatalf("the other merchant's keys: %v %v", keys, err)
	}
	owner := e.owner()
	path := "/dashboard/settings/api-keys/" + keys[0].ID.String() + "/revoke"
	if r := e.do(owner, http.MethodGet, path, nil); r.StatusCode != http.StatusNotFound {
		t.Errorf("GET the other merchant's key: %d, want 404", r.StatusCode)
	}
	if r := e.do(owner, http.MethodPost, path, url.Values{}); r.StatusCode != http.StatusNotFound {
		t.Errorf("POST revoke of the other merchant's key: %d, want 404", r.StatusCode)
	}
	if r := e.do(owner, http.MethodGet, "/dashboard/settings/api-keys/not-a-uuid/revoke", nil); r.StatusCode != http.StatusNotFound {
		t.Errorf("a malformed id: %d, want 404", r.StatusCode)
	}
	api, _ := http.NewRequest(http.MethodGet, e.url+"/api/v1/members", nil)
	api.Header.Set("X-API-Key", other.APIKey)
	resp, err := http.DefaultClient.Do(api)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("the other merchant's key after the refused revocation: %d, want 200", resp.StatusCode)
	}
	if users := e.do(owner, http.MethodGet, "/dashboard/settings/users", nil); strings.Contains(users.body, other.DashboardEmail) {
		t.Errorf("the users page shows the other merchant's owner")
	}
}

func TestViewerCannotChangeAnything(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	viewer := e.viewer()
	if r := e.do(viewer, http.MethodGet, "/dashboard/settings/api-keys", nil); r.StatusCode != http.StatusOK {
		t.Fatalf("a viewer looks at the keys: %d, want 200", r.StatusCode)
	}
	for _, p := range []string{"/dashboard/settings/api-keys", "/dashboard/settings/users/invite"} {
		r := e.do(viewer, http.MethodPost, p, url.Values{"email": {"x@loja-demo.example.com"}, "role": {"owner"}})
		if r.StatusCode != http.StatusForbidden || !strings.Contains(r.body, "viewer") {
			t.Errorf("a viewer's POST %s: %d, want 403 and a page saying why: %s", p, r.StatusCode, r.body)
		}
	}
	// A viewer still changes their own things: language, password, sign out.
	if r := e.do(viewer, http.MethodPost, "/dashboard/settings/password",
		url.Values{"current": {"viewer-password-1"}, "new": {"viewer-password-2"}}); r.StatusCode != http.StatusSeeOther {
		t.Errorf("a viewer changes their password: %d: %s", r.StatusCode, r.body)
	}
	e.signIn(e.client(), "viewer@loja-demo.example.com", "viewer-password-2")
}

func TestInvitationWorksOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	owner := e.owner()
	link := e.inviteURL(owner, "ana@loja-demo.example.com", "owner")
	if !strings.HasPrefix(link, e.url+"/dashboard/invite/") {
		t.Fatalf("invite link %q is not built from PUBLIC_URL %s", link, e.url)
	}
	path := strings.TrimPrefix(link, e.url)
	if r := e.do(e.client(), http.MethodGet, path, nil); r.StatusCode != http.StatusOK || !strings.Contains(r.body, "ana@loja-demo.example.com") {
		t.Fatalf("the invitation page: %d: %s", r.StatusCode, r.body)
	}
	if r := e.do(e.client(), http.MethodPost, path, url.Values{"password": {"short"}}); r.StatusCode != http.StatusUnprocessableEntity {
		t.Errorf("a too short password: %d, want 422", r.StatusCode)
	}
	ana := e.client()
	if r := e.do(ana, http.MethodPost, path, url.Values{"password": {"ana-password-1"}}); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("accept: %d: %s", r.StatusCode, r.body)
	}
	if r := e.do(ana, http.MethodGet, "/dashboard/settings/users", nil); r.StatusCode != http.StatusOK || !strings.Contains(r.body, "ana@loja-demo.example.com") {
		t.Errorf("the new user, signed in, sees the users: %d", r.StatusCode)
	}
	if r := e.do(e.client(), http.MethodPost, path, url.Values{"password": {"ana-password-2"}}); r.StatusCode != http.StatusNotFound {
		t.Errorf("the link used a second time: %d, want 404", r.StatusCode)
	}
	if r := e.do(owner, http.MethodPost, "/dashboard/settings/users/invite",
		url.Values{"email": {"ANA@loja-demo.example.com"}, "role": {"viewer"}}); r.StatusCode != http.StatusConflict {
		t.Errorf("inviting an existing user's e-mail (other case): %d, want 409", r.StatusCode)
	}
}

func TestAcceptLanguageChoosesUntilTheUserDoes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.client()
	if r := e.do(c, http.MethodGet, "/dashboard/sign-in", nil, "Accept-Language", "pt-BR,pt;q=0.9,en;q=0.5"); !strings.Contains(r.body, "Senha") || !strings.Contains(r.body, `lang="pt-BR"`) {
		t.Errorf("Accept-Language pt-BR: not the Portuguese page")
	}
	if r := e.do(c, http.MethodGet, "/dashboard/sign-in", nil, "Accept-Language", "de,en;q=0.5"); !strings.Contains(r.body, ">Password<") {
		t.Errorf("Accept-Language de,en: not the English page")
	}
	r := e.do(c, http.MethodPost, "/dashboard/language", url.Values{"lang": {"en"}, "next": {"/dashboard/sign-in"}})
	if r.StatusCode != http.StatusSeeOther || r.Header.Get("Location") != "/dashboard/sign-in" {
		t.Fatalf("choose English: %d to %q", r.StatusCode, r.Header.Get("Location"))
	}
	if r := e.do(c, http.MethodGet, "/dashboard/sign-in", nil, "Accept-Language", "pt-BR"); !strings.Contains(r.body, ">Password<") {
		t.Errorf("after choosing English, Accept-Language pt-BR still decided")
	}
	if r := e.do(c, http.MethodPost, "/dashboard/language", url.Values{"lang": {"pt-BR"}, "next": {"//evil.example/x"}}); r.Header.Get("Location") != "/dashboard" {
		t.Errorf("a foreign next: redirected to %q, want /dashboard", r.Header.Get("Location"))
	}
}

// Ten failures from one client IP, for any e-mails, throttle that IP's
// next sign-in, even with the right password.
func TestSignInThrottledPerIP(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.client()
	for i := range 10 {
		r := e.do(c, http.MethodPost, "/dashboard/sign-in", url.Values{"email": {fmt.Sprintf("guess%d@loja-demo.example.com", i)}, "password": {"x"}})
		if r.StatusCode != http.StatusUnauthorized || !strings.Contains(r.body, "Invalid email or password") {
			t.Fatalf("failure %d: %d", i+1, r.StatusCode)
		}
	}
	r := e.do(c, http.MethodPost, "/dashboard/sign-in", url.Values{"email": {e.demo.DashboardEmail}, "password": {e.demo.DashboardPassword}})
	if r.StatusCode != http.StatusTooManyRequests || !strings.Contains(r.body, `role="alert"`) || r.Header.Get("Set-Cookie") != "" {
		t.Errorf("the right password after 10 failures from the IP: %d (cookie %q), want 429 with an alert and no session",
			r.StatusCode, r.Header.Get("Set-Cookie"))
	}
}
