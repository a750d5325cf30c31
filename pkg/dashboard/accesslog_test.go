package dashboard_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/google/uuid"
)

// requestLine returns the access-log line of the request answered with
// X-Request-Id id.
func (e *env) requestLine(id string) map[string]any {
	e.t.Helper()
	for _, entry := range e.logs.FilterMessage("request").All() {
		if f := entry.ContextMap(); f["request_id"] == id {
			return f
		}
	}
	e.t.Fatalf("no access-log line with request_id %s", id)
	return nil
}

// TestDashboardRequestLines: a dashboard request's access-log line names
// the route template the dashboard's mux chose (not /dashboard, nor the
// path), the signed-in user's merchant and the user; a public page's line
// names neither, and the invitation token of its path is never logged.
func TestDashboardRequestLines(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	owner := e.owner()
	u, err := e.store.FindUserByEmail(context.Background(), uuid.MustParse(e.demo.MerchantID), e.demo.DashboardEmail)
	if err != nil {
		t.Fatal(err)
	}
	link := e.inviteURL(owner, "ana@loja-demo.example.com", "viewer")
	token := link[strings.LastIndex(link, "/")+1:]

	for _, c := range []struct {
		name         string
		client       *http.Client
		method, path string
		form         url.Values
		route        string
		signedIn     bool
	}{
		{"a page", owner, http.MethodGet, "/dashboard/members/" + uuid.NewString(), nil, "/dashboard/members/{id}", true},
		{"the overview", owner, http.MethodGet, "/dashboard", nil, "/dashboard", true},
		{"an action", owner, http.MethodPost, "/dashboard/settings/users/invite", url.Values{"email": {"bia@loja-demo.example.com"}, "role": {"viewer"}},
			"/dashboard/settings/users/invite", true},
		{"an invitation", e.client(), http.MethodGet, strings.TrimPrefix(link, e.url), nil, "/dashboard/invite/{token}", false},
		{"signed out", e.client(), http.MethodGet, "/dashboard/members", nil, "/dashboard/members", false},
	} {
		r := e.do(c.client, c.method, c.path, c.form)
		f := e.requestLine(r.Header.Get("X-Request-Id"))
		wantMerchant, wantUser := "", any(nil)
		if c.signedIn {
			wantMerchant, wantUser = e.demo.MerchantID, u.ID.String()
		}
		if f["route"] != c.route || f["merchant"] != wantMerchant || f["user"] != wantUser || f["status"] != int64(r.StatusCode) {
			t.Errorf("%s: %s %s logged %v; want route %s, merchant %q, user %v", c.name, c.method, c.path, f, c.route, wantMerchant, wantUser)
		}
	}

	// Signing in names the user who signed in.
	c := e.client()
	r := e.do(c, http.MethodPost, "/dashboard/sign-in", url.Values{"email": {e.demo.DashboardEmail}, "password": {e.demo.DashboardPassword}})
	if f := e.requestLine(r.Header.Get("X-Request-Id")); f["route"] != "/dashboard/sign-in" || f["user"] != u.ID.String() || f["merchant"] != e.demo.MerchantID {
		t.Errorf("sign in logged %v, want the user and the merchant", f)
	}

	for _, entry := range e.logs.All() {
		for k, v := range entry.ContextMap() {
			if s, ok := v.(string); ok && strings.Contains(s, token) {
				t.Errorf("the log line %q holds the invitation token in %s", entry.Message, k)
			}
		}
	}
}

// TestErrorPageShowsRequestID: an error page shows the request's id, the
// one the answer's X-Request-Id carries and the log line names, so a
// merchant can quote it.
func TestErrorPageShowsRequestID(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	owner := e.owner()
	for _, sent := range []string{"", "support-ticket-4711"} {
		var headers []string
		if sent != "" {
			headers = []string{"X-Request-Id", sent}
		}
		r := e.do(owner, http.MethodGet, "/dashboard/members/"+uuid.NewString(), nil, headers...)
		id := r.Header.Get("X-Request-Id")
		if r.StatusCode != http.StatusNotFound || id == "" || (sent != "" && id != sent) {
			t.Fatalf("GET an unknown member: %d, X-Request-Id %q (sent %q)", r.StatusCode, id, sent)
		}
		if want := `<code data-testid="request-id">` + id + `</code>`; !strings.Contains(r.body, want) {
			t.Errorf("the error page does not show the request id %s:\n%s", id, r.body)
		}
		if f := e.requestLine(id); f["status"] != int64(http.StatusNotFound) {
			t.Errorf("the log line of request %s: %v", id, f)
		}
	}
	// A page that is not an error shows none.
	if r := e.do(owner, http.MethodGet, "/dashboard/members", nil); strings.Contains(r.body, `data-testid="request-id"`) {
		t.Error("the members page shows a request id")
	}
}
