package dashboard_test

import (
	"context"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/ids"
	"github.com/convida/convida/pkg/postgres"
	"github.com/convida/convida/pkg/webhook"
)

var webhookSecretRe = regexp.MustCompile(`data-testid="webhook-secret" id="webhook-secret">([^<]+)<`)

func (e *env) webhooks() *postgres.WebhookStore {
	return postgres.NewWebhookStore(e.deps.Pool, e.deps.Box)
}

// endpointOf creates an endpoint of merchantID in the store, as the API would.
func (e *env) endpointOf(merchantID string, rawURL string) *webhook.Endpoint {
	e.t.Helper()
	ep := &webhook.Endpoint{MerchantID: uuid.MustParse(merchantID), URL: rawURL, Events: []string{"member.created"},
		IsActive: true, Secret: webhook.NewSecret()}
	if err := e.webhooks().CreateWebhook(context.Background(), ep); err != nil {
		e.t.Fatal(err)
	}
	return ep
}

// attemptOf logs one failed attempt of ep's.
func (e *env) attemptOf(ep *webhook.Endpoint) webhook.Attempt {
	e.t.Helper()
	a := webhook.Attempt{MerchantID: ep.MerchantID, ID: uuid.New(), WebhookID: ep.ID, EventID: uuid.New(), EventType: "member.created",
		Status: webhook.StatusFailed, Attempt: 1, ResponseStatus: 500, ResponseBody: "boom", CreatedAt: time.Now()}
	if err := e.webhooks().RecordAttempts(context.Background(), []webhook.Attempt{a}); err != nil {
		e.t.Fatal(err)
	}
	return a
}

func (e *env) attemptCount(ep uuid.UUID, status string) int {
	e.t.Helper()
	_, n, err := e.webhooks().ListAttempts(context.Background(), uuid.MustParse(e.demo.MerchantID), ep, webhook.AttemptFilter{Status: status, Limit: 1})
	if err != nil {
		e.t.Fatal(err)
	}
	return n
}

// The owner's whole round: create (the secret shown once), edit, send a
// test event and retry it (WEBHOOK_ALLOW_PRIVATE_NETWORKS lets the URL name
// a closed port on loopback: both attempts are logged as failed), filter
// the log, disable, enable, rotate, delete.
func TestWebhooksManage(t *testing.T) {
	t.Parallel()
	e := newEnvWith(t, map[string]string{"WEBHOOK_ALLOW_PRIVATE_NETWORKS": "true"})
	owner := e.owner()
	if r := e.do(owner, http.MethodGet, "/dashboard/webhooks", nil); r.StatusCode != http.StatusOK || !strings.Contains(r.body, "No endpoints yet.") {
		t.Fatalf("the empty webhooks page: %d: %s", r.StatusCode, r.body)
	}
	for _, tc := range []struct {
		name string
		form url.Values
		want string
	}{
		{"http URL", url.Values{"url": {"http://hooks.example.com/x"}, "events": {"member.created"}}, "The URL must be an absolute https URL."},
		{"no event", url.Values{"url": {"https://hooks.example.com/x"}}, "Choose at least one event."},
		{"unknown event", url.Values{"url": {"https://hooks.example.com/x"}, "events": {"member.exploded"}}, "Choose at least one event."},
	} {
		r := e.do(owner, http.MethodPost, "/dashboard/webhooks", tc.form)
		if r.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(r.body, `role="alert" class="alert">`+tc.want) {
			t.Errorf("%s: %d, want 422 with %q: %s", tc.name, r.StatusCode, tc.want, r.body)
		}
	}

	r := e.do(owner, http.MethodPost, "/dashboard/webhooks", url.Values{"url": {"https://127.0.0.1:1/hooks"},
		"events": {"member.created", "wallet.credited", "member.created"}})
	m := webhookSecretRe.FindStringSubmatch(r.body)
	if r.StatusCode != http.StatusOK || m == nil || r.Header.Get("Cache-Control") != "no-store" {
		t.Fatalf("create: %d, Cache-Control %q, want 200 no-store with the secret: %s", r.StatusCode, r.Header.Get("Cache-Control"), r.body)
	}
	secret := html.UnescapeString(m[1]) // base64: a + is written &#43;
	list, err := e.webhooks().ListWebhooks(context.Background(), uuid.MustParse(e.demo.MerchantID))
	if err != nil || len(list) != 1 || list[0].Secret != secret || strings.Join(list[0].Events, ",") != "member.created,wallet.credited" {
		t.Fatalf("stored endpoints %+v (%v), want one with the secret shown and the events once each", list, err)
	}
	id := list[0].ID.String()
	base := "/dashboard/webhooks/" + id

	r = e.do(owner, http.MethodPost, base, url.Values{"url": {"https://127.0.0.1:2/other"}, "events": {"referral.approved"}})
	if r.StatusCode != http.StatusSeeOther || r.Header.Get("Location") != base {
		t.Fatalf("edit: %d %s: %s", r.StatusCode, r.Header.Get("Location"), r.body)
	}
	if r := e.do(owner, http.MethodPost, base, url.Values{"url": {"https://127.0.0.1:2/other"}}); r.StatusCode != http.StatusUnprocessableEntity {
		t.Errorf("an edit without events: %d, want 422", r.StatusCode)
	}
	page := e.do(owner, http.MethodGet, base, nil)
	if !strings.Contains(page.body, "https://127.0.0.1:2/other") || !strings.Contains(page.body, `value="referral.approved" checked`) ||
		!strings.Contains(html.UnescapeString(page.body), "whsec_****"+secret[len(secret)-4:]) {
		t.Errorf("the edited endpoint's page: %s", page.body)
	}

	// Send test event, then retry its record.
	r = e.do(owner, http.MethodPost, base+"/test", url.Values{})
	if r.StatusCode != http.StatusSeeOther || !strings.HasPrefix(r.Header.Get("Location"), base+"/logs/") {
		t.Fatalf("send test event: %d %s: %s", r.StatusCode, r.Header.Get("Location"), r.body)
	}
	logPath := r.Header.Get("Location")
	logPage := e.do(owner, http.MethodGet, logPath, nil)
	if logPage.StatusCode != http.StatusOK || !strings.Contains(logPage.body, "A test event was sent.") ||
		!strings.Contains(logPage.body, `data-testid="log-status">Failed<`) || !strings.Contains(logPage.body, "webhook.test") {
		t.Errorf("the test attempt's page: %d: %s", logPage.StatusCode, logPage.body)
	}
	r = e.do(owner, http.MethodPost, logPath+"/retry", url.Values{})
	if r.StatusCode != http.StatusSeeOther || r.Header.Get("Location") == logPath || !strings.HasPrefix(r.Header.Get("Location"), base+"/logs/") {
		t.Errorf("retry: %d %s, want 303 to the new attempt", r.StatusCode, r.Header.Get("Location"))
	}
	if n := e.attemptCount(list[0].ID, ""); n != 2 {
		t.Errorf("%d attempts logged, want the test and its retry", n)
	}
	if p := e.do(owner, http.MethodGet, base+"?status=success", nil); !strings.Contains(p.body, "No deliveries here.") {
		t.Errorf("the success tab lists failed attempts")
	}
	if p := e.do(owner, http.MethodGet, base+"?status=failed", nil); strings.Count(p.body, `<a href="`+base+`/logs/`) != 2 {
		t.Errorf("the failed tab does not list both attempts: %s", p.body)
	}

	// Disable: nothing can be sent; enable again.
	if r := e.do(owner, http.MethodPost, base+"/active", url.Values{"active": {"false"}}); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("disable: %d", r.StatusCode)
	}
	if p := e.do(owner, http.MethodGet, base, nil); !strings.Contains(p.body, `data-testid="webhook-status">Disabled<`) {
		t.Errorf("after disabling, the status reads: %s", p.body)
	}
	if r := e.do(owner, http.MethodPost, base+"/test", url.Values{}); r.StatusCode != http.StatusConflict || !strings.Contains(r.body, "enable it first") {
		t.Errorf("a test to a disabled endpoint: %d, want 409: %s", r.StatusCode, r.body)
	}
	if r := e.do(owner, http.MethodPost, base+"/active", url.Values{"active": {"true"}}); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("enable: %d", r.StatusCode)
	}
	if ep, _ := e.webhooks().FindWebhook(context.Background(), list[0].MerchantID, list[0].ID); !ep.IsActive {
		t.Errorf("enabled endpoint stored inactive")
	}

	// Rotate: a new secret, once.
	r = e.do(owner, http.MethodPost, base+"/rotate-secret", url.Values{})
	m = webhookSecretRe.FindStringSubmatch(r.body)
	if r.StatusCode != http.StatusOK || m == nil || html.UnescapeString(m[1]) == secret {
		t.Fatalf("rotate: %d, want a new secret: %s", r.StatusCode, r.body)
	}
	rotated := html.UnescapeString(m[1])
	for _, p := range []string{"/dashboard/webhooks", base, logPath, base + "/delete"} {
		page := html.UnescapeString(e.do(owner, http.MethodGet, p, nil).body)
		if strings.Contains(page, secret) || strings.Contains(page, rotated) {
			t.Errorf("GET %s shows a secret again", p)
		}
	}
	for _, s := range []string{secret, rotated} {
		if e.logged(s) {
			t.Errorf("a log line holds the secret %s…", s[:10])
		}
	}

	// Delete, after the confirmation page.
	if p := e.do(owner, http.MethodGet, base+"/delete", nil); !strings.Contains(p.body, "Yes, delete") {
		t.Errorf("the delete confirmation: %s", p.body)
	}
	if r := e.do(owner, http.MethodPost, base+"/delete", url.Values{}); r.StatusCode != http.StatusSeeOther || r.Header.Get("Location") != "/dashboard/webhooks" {
		t.Fatalf("delete: %d %s", r.StatusCode, r.Header.Get("Location"))
	}
	if r := e.do(owner, http.MethodGet, base, nil); r.StatusCode != http.StatusNotFound {
		t.Errorf("the deleted endpoint: %d, want 404", r.StatusCode)
	}
}

// A viewer gets 403 on every POST; another merchant's endpoint and log
// record are 404 on every page and action, and stay as they were.
func TestWebhooksViewerAndOtherMerchant(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	other := e.register("Outra Loja", "https://outra.example.com", "OUTRA")
	theirs := e.endpointOf(other.MerchantID, "https://hooks.outra.example.com/x")
	theirLog := e.attemptOf(theirs)
	mine := e.endpointOf(e.demo.MerchantID, "https://hooks.loja.example.com/x")
	myLog := e.attemptOf(mine)

	posts := func(ep uuid.UUID, log uuid.UUID) map[string]url.Values {
		base := "/dashboard/webhooks/" + ep.String()
		return map[string]url.Values{
			base:                    {"url": {"https://evil.example.com/x"}, "events": {"wallet.debited"}},
			base + "/active":        {"active": {"false"}},
			base + "/rotate-secret": {},
			base + "/test":          {},
			base + "/logs/" + log.String() + "/retry": {},
			base + "/delete": {},
		}
	}
	owner := e.owner()
	theirBase := "/dashboard/webhooks/" + theirs.ID.String()
	for _, p := range []string{theirBase, theirBase + "/delete", theirBase + "/logs/" + theirLog.ID.String(),
		"/dashboard/webhooks/" + mine.ID.String() + "/logs/" + theirLog.ID.String(), "/dashboard/webhooks/not-a-uuid"} {
		if r := e.do(owner, http.MethodGet, p, nil); r.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", p, r.StatusCode)
		}
	}
	for p, form := range posts(theirs.ID, theirLog.ID) {
		if r := e.do(owner, http.MethodPost, p, form); r.StatusCode != http.StatusNotFound {
			t.Errorf("POST %s of another merchant: %d, want 404", p, r.StatusCode)
		}
	}
	// The pages open by the ids the API shows (wh_…, whl_…) as by the
	// dashboard's own links; another kind's prefix finds nothing.
	for p, want := range map[string]int{
		"/dashboard/webhooks/" + ids.Format(ids.Webhook, mine.ID):                                                    http.StatusOK,
		"/dashboard/webhooks/" + ids.Format(ids.Webhook, mine.ID) + "/logs/" + ids.Format(ids.DeliveryLog, myLog.ID): http.StatusOK,
		"/dashboard/webhooks/" + ids.Format(ids.Webhook, theirs.ID):                                                  http.StatusNotFound,
		"/dashboard/webhooks/" + ids.Format(ids.Member, mine.ID):                                                     http.StatusNotFound,
	} {
		if r := e.do(owner, http.MethodGet, p, nil); r.StatusCode != want || (want == http.StatusOK && !strings.Contains(r.body, mine.URL)) {
			t.Errorf("GET %s: %d, want %d", p, r.StatusCode, want)
		}
	}
	if p := e.do(owner, http.MethodGet, "/dashboard/webhooks", nil); strings.Contains(p.body, theirs.URL) {
		t.Errorf("the list shows another merchant's endpoint")
	}
	if ep, err := e.webhooks().FindWebhook(context.Background(), theirs.MerchantID, theirs.ID); err != nil ||
		ep.URL != theirs.URL || !ep.IsActive || ep.Secret != theirs.Secret {
		t.Errorf("another merchant's endpoint changed: %+v (%v)", ep, err)
	}

	viewer := e.viewer()
	if r := e.do(viewer, http.MethodGet, "/dashboard/webhooks/"+mine.ID.String(), nil); r.StatusCode != http.StatusOK {
		t.Errorf("a viewer's GET of the endpoint: %d, want 200", r.StatusCode)
	}
	actions := posts(mine.ID, myLog.ID)
	actions["/dashboard/webhooks"] = url.Values{"url": {"https://hooks.example.com/v"}, "events": {"member.created"}}
	for p, form := range actions {
		if r := e.do(viewer, http.MethodPost, p, form); r.StatusCode != http.StatusForbidden {
			t.Errorf("a viewer's POST %s: %d, want 403", p, r.StatusCode)
		}
	}
	list, _ := e.webhooks().ListWebhooks(context.Background(), mine.MerchantID)
	if len(list) != 1 || list[0].URL != mine.URL || !list[0].IsActive || list[0].Secret != mine.Secret {
		t.Errorf("the viewer's refused actions changed the endpoints: %+v", list)
	}
	if n := e.attemptCount(mine.ID, ""); n != 1 {
		t.Errorf("%d attempts after the viewer's refused test and retry, want 1", n)
	}

	// The owner's retry of a record whose event is no longer kept is
	// refused with a page saying so; from another site, refused outright.
	retry := "/dashboard/webhooks/" + mine.ID.String() + "/logs/" + myLog.ID.String() + "/retry"
	if r := e.do(owner, http.MethodPost, retry, url.Values{}); r.StatusCode != http.StatusConflict || !strings.Contains(r.body, "no longer kept") {
		t.Errorf("retry of an event no longer kept: %d, want 409: %s", r.StatusCode, r.body)
	}
	if r := e.do(owner, http.MethodPost, "/dashboard/webhooks", url.Values{"url": {"https://evil.example/x"}, "events": {"member.created"}},
		"Origin", "https://evil.example"); r.StatusCode != http.StatusForbidden {
		t.Errorf("a cross-origin creation: %d, want 403", r.StatusCode)
	}
	if list, _ := e.webhooks().ListWebhooks(context.Background(), mine.MerchantID); len(list) != 1 {
		t.Errorf("%d endpoints after refused creations, want 1", len(list))
	}
}

// TestWebhookFormRefusesPrivateAddresses (issue 29): without
// WEBHOOK_ALLOW_PRIVATE_NETWORKS the form refuses a URL naming a loopback
// or private address, or localhost, on creation and on an edit, saying
// why, and stores nothing.
func TestWebhookFormRefusesPrivateAddresses(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	owner := e.owner()
	const want = `role="alert" class="alert">The URL must name a public server: its address is not public`
	ep := e.endpointOf(e.demo.MerchantID, "https://hooks.loja.example.com/x")
	for _, u := range []string{"https://127.0.0.1/x", "https://localhost/x", "https://10.0.0.7/x", "https://[::1]/x"} {
		form := url.Values{"url": {u}, "events": {"member.created"}}
		if r := e.do(owner, http.MethodPost, "/dashboard/webhooks", form); r.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(r.body, want) {
			t.Errorf("create %s: %d, want 422 saying the address is not public: %s", u, r.StatusCode, r.body)
		}
		if r := e.do(owner, http.MethodPost, "/dashboard/webhooks/"+ep.ID.String(), form); r.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(r.body, want) {
			t.Errorf("edit to %s: %d, want 422 saying the address is not public: %s", u, r.StatusCode, r.body)
		}
	}
	list, err := e.webhooks().ListWebhooks(context.Background(), ep.MerchantID)
	if err != nil || len(list) != 1 || list[0].URL != ep.URL {
		t.Errorf("stored endpoints %+v (%v), want only the first, unchanged", list, err)
	}
}
