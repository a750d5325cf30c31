package e2e

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/uuid"

	"github.com/convida/convida/pkg/merchant"
	"github.com/convida/convida/pkg/postgres"
	"github.com/convida/convida/pkg/program"
	"github.com/convida/convida/pkg/testenv"
)

// dashboardBrowser drives Chromium through one dashboard by what a person
// sees (the pkg/dashboard browser tests do the same inside that package).
type dashboardBrowser struct {
	t   *testing.T
	url string
	ctx context.Context
}

func labelled(label string) chromedp.Search {
	return chromedp.Search(`//*[(self::input or self::select) and @id=//label[normalize-space(.)="` + label + `"]/@for]`)
}

func named(tag, name string) chromedp.Search {
	return chromedp.Search(`//` + tag + `[normalize-space(.)="` + name + `"]`)
}

// load runs steps that load a page and returns its HTTP status.
func (b *dashboardBrowser) load(what string, steps ...chromedp.Action[chromedp.Void]) int64 {
	b.t.Helper()
	resp, err := chromedp.RunResponse(b.ctx, steps...)
	if err != nil {
		b.t.Fatalf("%s: %v", what, err)
	}
	return resp.Status
}

func browserText[S chromedp.Selectable](b *dashboardBrowser, sel S) string {
	b.t.Helper()
	s, err := chromedp.Run(b.ctx, chromedp.Text(sel))
	if err != nil {
		b.t.Fatalf("text of %v: %v", sel, err)
	}
	return strings.TrimSpace(s)
}

func (b *dashboardBrowser) html() string {
	b.t.Helper()
	s, err := chromedp.Run(b.ctx, chromedp.OuterHTML(chromedp.Search("html")))
	if err != nil {
		b.t.Fatal(err)
	}
	return s
}

// dashboardOn serves the API program (and so the dashboard) of a second
// set of connections to s's database, with INGEST_PUBLIC_URL the stack's
// ingest: the webhook URL the dashboard shows is one a platform can post to.
func dashboardOn(t *testing.T, s *stack) string {
	cfg := s.deps.Config
	cfg.IngestPublicURL = s.ingestURL
	d, err := program.Open(context.Background(), cfg, s.deps.Log, "test-dashboard")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	srv := httptest.NewServer(program.APIRouter(d))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestBrowserDashboardIntegrationsAndWebhooks: a merchant signs in, saves
// only Guru's "Account token", posts a Guru sale carrying it to the
// webhook URL the page shows, and sees the delivery listed (its body with
// the token redacted); then creates a webhook endpoint, sees its secret
// once, and "Send test event" reaches the receiver, signed with it.
func TestBrowserDashboardIntegrationsAndWebhooks(t *testing.T) {
	s := startStack(t, stackOptions{env: webhookEnv(t, nil)})
	dashURL := dashboardOn(t, s)
	creds, err := merchant.Register(context.Background(), postgres.NewMerchantStore(s.deps.Pool, s.deps.Box),
		&merchant.Merchant{Name: "Loja Navegador", StoreURL: "https://navegador.example.com", CodePrefix: "NAVEG"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(testenv.MustBrowser(t), 3*time.Minute)
	t.Cleanup(cancel)
	b := &dashboardBrowser{t: t, url: dashURL, ctx: ctx}

	b.load("open sign-in", chromedp.Navigate(dashURL+"/dashboard/sign-in"))
	if status := b.load("sign in", chromedp.SendKeys(labelled("Email"), creds.DashboardEmail),
		chromedp.SendKeys(labelled("Password"), creds.DashboardPassword), chromedp.Click(named("button", "Sign in"))); status != http.StatusOK {
		t.Fatalf("sign in: %d", status)
	}

	// Integrations: the account token alone, with "Save".
	b.load("open Integrations", chromedp.Click(named("a", "Integrations")))
	token := "guru-browser-token-" + strings.Repeat("4", 21)
	if status := b.load("save Guru", chromedp.SendKeys(labelled("Account token"), token), chromedp.Click(named("button", "Save"))); status != http.StatusOK {
		t.Fatalf("save the Guru account token: %d", status)
	}
	if got := browserText(b, chromedp.CSS(`[role="status"]`)); got != "The Guru settings were saved." {
		t.Errorf("after saving: %q", got)
	}
	if strings.Contains(b.html(), token) {
		t.Errorf("the page shows the saved token")
	}
	hookURL := browserText(b, chromedp.CSS(`[data-testid="webhook-url-guru"]`))
	if want := s.ingestURL + "/api/webhooks/guru/" + creds.MerchantID; hookURL != want {
		t.Fatalf("the page shows the webhook URL %q, want %q", hookURL, want)
	}
	sale := do(t, http.MethodPost, hookURL, fixture(t, guruApproved, map[string]any{"api_token": token, "id": uuid.NewString()}),
		map[string]string{"Content-Type": "application/json"})
	if sale.Status != http.StatusOK {
		t.Fatalf("the Guru sale posted to the page's URL: %d %s, want 200", sale.Status, sale.Body)
	}
	row := chromedp.Search(`//section[@aria-labelledby="guru-title"]//tbody/tr[1]`)
	testenv.Eventually(t, 15*time.Second, "the delivery listed on the Integrations page", func() bool {
		b.load("reload", chromedp.Reload())
		return strings.Contains(b.html(), `<section class="platform" aria-labelledby="guru-title">`) &&
			!strings.Contains(strings.Split(b.html(), `aria-labelledby="yampi-title"`)[0], "No deliveries received yet.")
	})
	if got := browserText(b, row); !strings.Contains(got, "200") {
		t.Errorf("the delivery's row reads %q, want HTTP 200", got)
	}
	testenv.Screenshot(t, b.ctx, "integrations")
	b.load("open the delivery", chromedp.Click(chromedp.Search(`//section[@aria-labelledby="guru-title"]//tbody/tr[1]/td[1]/a`)))
	if body := browserText(b, chromedp.CSS(`[data-testid="delivery-body"]`)); !strings.Contains(body, `"api_token": "[redacted]"`) || strings.Contains(body, token) {
		t.Errorf("the delivery's body is not redacted: %s", body)
	}

	// Webhooks: create (the secret once), send a test event.
	rc := newReceiver(t, nil)
	b.load("open Webhooks", chromedp.Click(named("a", "Webhooks")))
	if status := b.load("create an endpoint", chromedp.SendKeys(labelled("URL"), rc.srv.URL+"/hooks"),
		chromedp.Click(chromedp.Search(`//input[@type="checkbox" and @value="member.created"]`)),
		chromedp.Click(named("button", "Create endpoint"))); status != http.StatusOK {
		t.Fatalf("create the endpoint: %d", status)
	}
	secret := browserText(b, chromedp.CSS(`[data-testid="webhook-secret"]`))
	if !strings.HasPrefix(secret, "whsec_") {
		t.Fatalf("the new endpoint's secret reads %q", secret)
	}
	rc.secret.Store(secret)
	if status := b.load("send a test event", chromedp.Click(named("button", "Send test event"))); status != http.StatusOK {
		t.Fatalf("send test event: %d", status)
	}
	if got := browserText(b, chromedp.CSS(`[data-testid="log-status"]`)); got != "Succeeded" {
		t.Errorf("the test attempt's status reads %q, want Succeeded", got)
	}
	if got := browserText(b, chromedp.CSS(`[data-testid="log-response-status"]`)); got != "200" {
		t.Errorf("the test attempt's response status reads %q, want 200", got)
	}
	got := rc.received()
	if len(got) != 1 || got[0].typ != "webhook.test" || !got[0].validSigs {
		t.Errorf("the receiver got %+v, want one webhook.test signed with the secret shown", got)
	}
	b.load("back to the endpoint", chromedp.Navigate(dashURL+"/dashboard/webhooks"))
	b.load("open the endpoint", chromedp.Click(named("a", rc.srv.URL+"/hooks")))
	if strings.Contains(b.html(), secret) {
		t.Errorf("the endpoint's page shows the secret again")
	}
	testenv.Screenshot(t, b.ctx, "webhooks")
}
