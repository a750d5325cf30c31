package dashboard_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestPortalSettingsAndOpenPortal: an owner saves the member portal's
// settings (refused when out of bounds, in her language), a viewer cannot;
// "Open the member's portal" lands an owner on the member's portal, her
// code on it; a cross-site POST is refused.
func TestPortalSettingsAndOpenPortal(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.campaignFor(e.demo)
	owner := e.owner()
	ana := e.createMember(owner, "Ana Souza", "ana@example.com")

	if r := e.do(owner, http.MethodGet, "/dashboard/settings/portal", nil); r.StatusCode != 200 || !strings.Contains(r.body, `name="embed_origins"`) {
		t.Fatalf("settings page = %d", r.StatusCode)
	}
	r := e.do(owner, http.MethodPost, "/dashboard/settings/portal", url.Values{"enabled": {"on"},
		"embed_origins": {"https://Loja.example.com/\r\nhttps://b.example"}, "brand_color": {"#0B6E4F"}})
	if r.StatusCode != 200 || !strings.Contains(r.body, "https://loja.example.com\nhttps://b.example") || !strings.Contains(r.body, `value="#0b6e4f"`) {
		t.Errorf("save = %d:\n%s", r.StatusCode, r.body)
	}
	if r := e.do(owner, http.MethodPost, "/dashboard/settings/portal", url.Values{"embed_origins": {"http://loja.example.com"}}); r.StatusCode != 400 ||
		!strings.Contains(r.body, `role="alert"`) {
		t.Errorf("an http origin = %d", r.StatusCode)
	}
	if r := e.do(owner, http.MethodPost, "/dashboard/settings/portal", url.Values{"enabled": {"on"}}, "Origin", "https://evil.example"); r.StatusCode != 403 {
		t.Errorf("cross-site = %d, want 403", r.StatusCode)
	}
	if r := e.do(e.viewer(), http.MethodPost, "/dashboard/settings/portal", url.Values{"enabled": {"on"}}); r.StatusCode != 403 {
		t.Errorf("a viewer's save = %d, want 403", r.StatusCode)
	}
	if r := e.do(owner, http.MethodGet, "/dashboard/settings/activity", nil); !strings.Contains(r.body, "Portal settings updated") {
		t.Errorf("the activity page has no portal_settings.updated")
	}

	page := e.do(owner, http.MethodGet, "/dashboard/members/"+ana.String(), nil)
	if !strings.Contains(page.body, "Open the member&#39;s portal") && !strings.Contains(page.body, "Open the member's portal") {
		t.Fatalf("the member page has no portal button")
	}
	open := e.do(owner, http.MethodPost, "/dashboard/members/"+ana.String()+"/portal", url.Values{})
	loc := open.Header.Get("Location")
	if open.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc, "/portal/s/") {
		t.Fatalf("open portal = %d %q", open.StatusCode, loc)
	}
	member := e.client()
	if r := e.do(member, http.MethodGet, loc, nil); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("the minted link = %d", r.StatusCode)
	}
	if r := e.do(member, http.MethodGet, "/portal", nil); r.StatusCode != 200 || !strings.Contains(r.body, `id="referral-code"`) || !strings.Contains(r.body, "Loja Demo") {
		t.Errorf("the portal = %d", r.StatusCode)
	}
}
