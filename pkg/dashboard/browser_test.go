package dashboard_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/convida/convida/pkg/testenv"
)

// browser drives Debian's Chromium through the dashboard by what a person
// sees: labels, button and link names.
type browser struct {
	t   *testing.T
	e   *env
	ctx context.Context
}

func newBrowser(t *testing.T, e *env) *browser {
	ctx, cancel := context.WithTimeout(testenv.MustBrowser(t), 2*time.Minute)
	t.Cleanup(cancel)
	return &browser{t: t, e: e, ctx: ctx}
}

func xpathString(s string) string { return `"` + s + `"` }

// field is the input or select whose label reads label.
func field(label string) chromedp.Search {
	l := xpathString(label)
	return chromedp.Search(`//*[(self::input or self::select) and @id=//label[normalize-space(.)=` + l + `]/@for]`)
}

func button(name string) chromedp.Search {
	return chromedp.Search(`//button[normalize-space(.)=` + xpathString(name) + `]`)
}

func link(name string) chromedp.Search {
	return chromedp.Search(`//a[normalize-space(.)=` + xpathString(name) + `]`)
}

func (b *browser) do(what string, steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	if err := chromedp.Do(b.ctx, steps...); err != nil {
		b.t.Fatalf("%s: %v", what, err)
	}
}

// submit runs steps that load a page (a click on a form's button) and
// returns that page's HTTP status.
func (b *browser) submit(what string, steps ...chromedp.Action[chromedp.Void]) int64 {
	b.t.Helper()
	resp, err := chromedp.RunResponse(b.ctx, steps...)
	if err != nil {
		b.t.Fatalf("%s: %v", what, err)
	}
	return resp.Status
}

func text[S chromedp.Selectable](b *browser, sel S) string {
	b.t.Helper()
	s, err := chromedp.Run(b.ctx, chromedp.Text(sel))
	if err != nil {
		b.t.Fatalf("text of %v: %v", sel, err)
	}
	return strings.TrimSpace(s)
}

func (b *browser) location() string {
	b.t.Helper()
	loc, err := chromedp.Run(b.ctx, chromedp.Location())
	if err != nil {
		b.t.Fatal(err)
	}
	return strings.TrimPrefix(loc, b.e.url)
}

func (b *browser) open(path string) { b.do("open "+path, chromedp.Navigate(b.e.url+path)) }

// signIn fills the sign-in form and submits it; it returns the status.
func (b *browser) signIn(email, password string) int64 {
	b.t.Helper()
	b.open("/dashboard/sign-in")
	return b.submit("sign in as "+email,
		chromedp.SendKeys(field("Email"), email), chromedp.SendKeys(field("Password"), password), chromedp.Click(button("Sign in")))
}

func (b *browser) alert() string { return text(b, chromedp.CSS(`[role="alert"]`)) }

// apiStatus calls GET /api/v1/members with key.
func (e *env) apiStatus(key string) int {
	req, _ := http.NewRequest(http.MethodGet, e.url+"/api/v1/members", nil)
	req.Header.Set("X-API-Key", key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

var navNames = []string{"Overview", "Members", "Referrals", "Campaigns", "Creators", "Redemptions", "Integrations", "Webhooks", "API keys"}

// invisible returns the names among names of links (or buttons) in the
// <nav> that are missing or not wholly inside the 1280x900 window.
const invisibleJS = `(names => names.filter(n => {
  const el = [...document.querySelectorAll('nav a, nav button')].find(e => e.textContent.trim() === n);
  if (!el) return true;
  const r = el.getBoundingClientRect();
  return !(r.width > 0 && r.height > 0 && r.left >= 0 && r.top >= 0 && r.right <= innerWidth && r.bottom <= innerHeight);
}))(%s)`

func TestBrowserSignInKeysLanguageAndViewer(t *testing.T) {
	e := newEnv(t)
	b := newBrowser(t, e)

	b.open("/dashboard")
	if loc := b.location(); loc != "/dashboard/sign-in" {
		t.Fatalf("without a session /dashboard went to %s, want the sign-in page", loc)
	}
	testenv.Screenshot(t, b.ctx, "sign-in")
	if status := b.signIn(e.demo.DashboardEmail, "wrong password"); status != http.StatusUnauthorized {
		t.Errorf("a wrong password: %d, want 401", status)
	}
	if got := b.alert(); got != "Invalid email or password" {
		t.Errorf("a wrong password shows %q", got)
	}
	if status := b.signIn(e.demo.DashboardEmail, e.demo.DashboardPassword); status != http.StatusOK {
		t.Fatalf("sign in: %d", status)
	}
	if loc := b.location(); loc != "/dashboard" {
		t.Fatalf("signed in at %s, want /dashboard", loc)
	}

	cookies, err := chromedp.Call(b.ctx, network.GetCookies, network.GetCookiesParams{})
	if err != nil {
		t.Fatal(err)
	}
	if len(cookies.Cookies) != 1 {
		t.Errorf("%d cookies after sign-in, want only the session's", len(cookies.Cookies))
	}
	for _, c := range cookies.Cookies {
		if c.Name != "convida_session" || !c.HTTPOnly || c.SameSite != network.CookieSameSiteLax || c.Secure {
			t.Errorf("cookie %s: HttpOnly %v SameSite %q Secure %v, want convida_session, HttpOnly, Lax, not Secure on http",
				c.Name, c.HTTPOnly, c.SameSite, c.Secure)
		}
	}

	hidden, err := chromedp.Run(b.ctx, chromedp.Evaluate[[]string](fmt.Sprintf(invisibleJS, jsList(append(navNames, "Sign out")))))
	if err != nil || len(hidden) > 0 {
		t.Errorf("nav links missing or not visible at 1280 px: %v (%v)", hidden, err)
	}
	// htmx loaded (script-src 'self' lets our files run) and injected no
	// <style> (which style-src 'self' would block).
	if loaded, err := chromedp.Run(b.ctx, chromedp.Evaluate[bool](`typeof htmx === "object" && document.querySelectorAll("style").length === 0`)); err != nil || !loaded {
		t.Errorf("htmx not loaded, or an inline <style> in the page (%v)", err)
	}

	// API keys: generate, use, revoke.
	b.submit("open API keys", chromedp.Click(link("API keys")))
	b.submit("generate", chromedp.Click(button("Generate new key")))
	key := text(b, chromedp.CSS(`[data-testid="new-api-key"]`))
	if len(key) < 32 {
		t.Fatalf("the new key %q is too short to be one", key)
	}
	testenv.Screenshot(t, b.ctx, "api-keys")
	if status := e.apiStatus(key); status != http.StatusOK {
		t.Fatalf("GET /api/v1/members with the new key: %d, want 200", status)
	}
	b.open("/dashboard/settings/api-keys")
	if got := text(b, chromedp.Search(`//tr[td/code[text()="`+key[:8]+`"]]/td[1]`)); got != key[:8] {
		t.Errorf("the key's row shows %q, want its first 8 characters %q", got, key[:8])
	}
	b.submit("revoke", chromedp.Click(chromedp.Search(`//tr[td/code[text()="`+key[:8]+`"]]//button[normalize-space(.)="Revoke"]`)))
	b.submit("confirm", chromedp.Click(button("Yes, revoke")))
	if got := text(b, chromedp.CSS(`[role="status"]`)); got != "The key was revoked." {
		t.Errorf("after revoking: %q", got)
	}
	testenv.Eventually(t, 5*time.Second, "the revoked key refused", func() bool { return e.apiStatus(key) == http.StatusUnauthorized })

	// Português and back; the choice is kept across pages.
	b.submit("Português", chromedp.Click(button("Português")))
	if got := text(b, chromedp.CSS("h1")); got != "Chaves de API" {
		t.Errorf("in Portuguese the page is titled %q", got)
	}
	b.submit("Visão geral", chromedp.Click(link("Visão geral")))
	if got := text(b, button("English")); got != "English" {
		t.Errorf("the Portuguese page has no English switch")
	}
	b.submit("English", chromedp.Click(button("English")))
	if got := text(b, link("API keys")); got != "API keys" {
		t.Errorf("back in English, the nav shows %q", got)
	}

	// A viewer, invited by the owner, cannot revoke.
	b.open("/dashboard/settings/users")
	b.submit("invite", chromedp.SendKeys(field("Email"), "viewer@loja-demo.example.com"),
		chromedp.SetValue(field("Role"), "viewer"), chromedp.Click(button("Send invite")))
	inviteLink := text(b, chromedp.CSS(`[data-testid="invite-link"]`))
	if !strings.HasPrefix(inviteLink, e.url+"/dashboard/invite/") {
		t.Fatalf("no invitation link on the page: %q", inviteLink)
	}
	testenv.Screenshot(t, b.ctx, "users")
	b.submit("sign out", chromedp.Click(button("Sign out")))
	b.do("open the invitation", chromedp.Navigate(inviteLink))
	b.submit("accept", chromedp.SendKeys(field("Password"), "viewer-password-1"), chromedp.Click(button("Accept invitation")))
	b.open("/dashboard/settings/api-keys")
	b.submit("viewer revoke", chromedp.Click(button("Revoke")))
	if status := b.submit("viewer confirm", chromedp.Click(button("Yes, revoke"))); status != http.StatusForbidden {
		t.Errorf("a viewer's revocation: %d, want 403", status)
	}
	if got := b.alert(); !strings.Contains(got, "viewer") {
		t.Errorf("the viewer's refusal says %q", got)
	}
	if status := e.apiStatus(e.demo.APIKey); status != http.StatusOK {
		t.Errorf("the key the viewer tried to revoke: %d, want still 200", status)
	}
}

func jsList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return "[" + strings.Join(q, ",") + "]"
}

// After 10 failed sign-ins for one e-mail within 15 minutes the next
// answers 429, even with the right password.
func TestBrowserSignInThrottled(t *testing.T) {
	e := newEnv(t)
	b := newBrowser(t, e)
	for i := range 10 {
		if status := b.signIn(e.demo.DashboardEmail, fmt.Sprintf("wrong-%d", i)); status != http.StatusUnauthorized {
			t.Fatalf("wrong password %d: %d, want 401", i+1, status)
		}
	}
	if status := b.signIn(e.demo.DashboardEmail, e.demo.DashboardPassword); status != http.StatusTooManyRequests {
		t.Fatalf("the right password after 10 failures: %d, want 429", status)
	}
	if got := b.alert(); !strings.Contains(got, "Too many failed sign-in attempts") {
		t.Errorf("the 429 page says %q", got)
	}
	if loc := b.location(); loc != "/dashboard/sign-in" {
		t.Errorf("throttled, the browser is at %s", loc)
	}
}
