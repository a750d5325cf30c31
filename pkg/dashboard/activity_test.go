package dashboard_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/convida/convida/pkg/testenv"
)

// activityRows returns the rows of the Activity table as text, cells
// joined by " | ", tags stripped.
func activityRows(body string) []string {
	tbody := body
	if i := strings.Index(tbody, "<tbody>"); i >= 0 {
		tbody = tbody[i:]
	} else {
		return nil
	}
	var rows []string
	for _, tr := range regexp.MustCompile(`(?s)<tr>(.*?)</tr>`).FindAllStringSubmatch(tbody, -1) {
		var cells []string
		for _, td := range regexp.MustCompile(`(?s)<td>(.*?)</td>`).FindAllStringSubmatch(tr[1], -1) {
			cells = append(cells, strings.TrimSpace(td[1]))
		}
		rows = append(rows, strings.Join(cells, " | "))
	}
	return rows
}

// TestActivityPage: the owner's changes through the dashboard are on the
// Activity page, newest first, in words (action, who, on what, the
// address), filtered by action, in both languages, never with the key or
// the invitation link; a viewer is refused it and not shown its link.
func TestActivityPage(t *testing.T) {
	e := newEnv(t)
	owner := e.owner()
	keys := e.do(owner, http.MethodPost, "/dashboard/settings/api-keys", url.Values{})
	newKey := regexp.MustCompile(`data-testid="new-api-key"[^>]*>([^<]+)<`).FindStringSubmatch(keys.body)
	if newKey == nil {
		t.Fatalf("no new key on the page: %s", keys.body)
	}
	link := e.inviteURL(owner, "bia@loja-demo.example.com", "viewer")
	viewer := e.accept(link, "viewer-password-1")

	r := e.do(owner, http.MethodGet, "/dashboard/settings/activity", nil)
	if r.StatusCode != http.StatusOK {
		t.Fatalf("owner's Activity: %d", r.StatusCode)
	}
	rows := activityRows(r.body)
	owner1 := e.demo.DashboardEmail
	want := []string{
		"Signed in | bia@loja-demo.example.com | User bia@loja-demo.example.com | by invitation | 127.0.0.1",
		"User invited | " + owner1 + " | User bia@loja-demo.example.com | Role: Viewer | 127.0.0.1",
		"API key created | " + owner1 + " | API key ",
		"Signed in | " + owner1 + " | User " + owner1 + " |  | 127.0.0.1",
		"API key created | System | API key ", // merchant.Register's first key
	}
	if len(rows) != len(want) {
		t.Fatalf("rows %q, want %d", rows, len(want))
	}
	for i, w := range want {
		// Each row starts with its date: compare what follows it.
		if _, rest, _ := strings.Cut(rows[i], " | "); !strings.HasPrefix(rest, w) {
			t.Errorf("row %d = %q, want %q…", i, rest, w)
		}
	}
	for _, secret := range []string{newKey[1], strings.TrimPrefix(link, e.url+"/dashboard/invite/"), e.demo.DashboardPassword, "viewer-password-1"} {
		if strings.Contains(r.body, secret) {
			t.Errorf("the Activity page shows a secret %q", secret)
		}
	}
	if !strings.Contains(r.body, `href="/dashboard/settings/activity" aria-current="page">Activity</a>`) {
		t.Errorf("the settings navigation does not mark Activity current")
	}

	r = e.do(owner, http.MethodGet, "/dashboard/settings/activity?action=api_key.created", nil)
	if rows := activityRows(r.body); len(rows) != 2 || !strings.Contains(r.body, `<option value="api_key.created" selected>`) {
		t.Errorf("filtered by api_key.created: %q, want the 2 keys with the choice selected", rows)
	}
	if r := e.do(owner, http.MethodGet, "/dashboard/settings/activity?action=member.deleted", nil); r.StatusCode != http.StatusBadRequest {
		t.Errorf("an unknown action: %d, want 400", r.StatusCode)
	}
	r = e.do(owner, http.MethodGet, "/dashboard/settings/activity", nil, "Accept-Language", "pt-BR")
	if rows := activityRows(r.body); len(rows) == 0 || !strings.Contains(rows[0], "Login realizado") || !strings.Contains(r.body, "<h1>Atividade</h1>") {
		t.Errorf("in Portuguese: %q", rows)
	}

	if r := e.do(viewer, http.MethodGet, "/dashboard/settings/activity", nil); r.StatusCode != http.StatusForbidden ||
		!strings.Contains(r.body, "Only owners can see the activity.") {
		t.Errorf("a viewer's Activity: %d, want 403 saying owners only", r.StatusCode)
	}
	if r := e.do(viewer, http.MethodGet, "/dashboard/settings/users", nil); strings.Contains(r.body, "/dashboard/settings/activity") {
		t.Errorf("the viewer's settings navigation links Activity")
	}
}

// In Chromium: a role changed on the Users page is on the Activity page,
// reached from the settings navigation, and the action filter keeps only
// that action.
func TestBrowserActivity(t *testing.T) {
	e := newEnv(t)
	e.accept(e.inviteURL(e.owner(), "bia@loja-demo.example.com", "viewer"), "viewer-password-1")
	b := newBrowser(t, e)
	if status := b.signIn(e.demo.DashboardEmail, e.demo.DashboardPassword); status != http.StatusOK {
		t.Fatalf("sign in: %d", status)
	}
	b.open("/dashboard/settings/users")
	b.submit("change role", chromedp.SetValue(chromedp.Search(`//select[@aria-label="Role of bia@loja-demo.example.com"]`), "owner"),
		chromedp.Click(chromedp.Search(`//button[@aria-label="Change role of bia@loja-demo.example.com"]`)))
	b.submit("open Activity", chromedp.Click(link("Activity")))
	if got := text(b, chromedp.CSS("h1")); got != "Activity" {
		t.Fatalf("the Activity page is titled %q", got)
	}
	first := text(b, chromedp.CSS("tbody tr:first-child"))
	for _, w := range []string{"User role changed", e.demo.DashboardEmail, "User bia@loja-demo.example.com", "Viewer → Owner", "127.0.0.1"} {
		if !strings.Contains(first, w) {
			t.Errorf("the newest row %q does not say %q", first, w)
		}
	}
	testenv.Screenshot(t, b.ctx, "activity")
	b.submit("filter", chromedp.SetValue(field("Action"), "sign_in.succeeded"), chromedp.Click(button("Filter")))
	all, err := chromedp.Run(b.ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("tbody tr td:nth-child(2)")].map(td => td.textContent.trim())`))
	if err != nil || len(all) != 3 {
		t.Fatalf("filtered rows %q (%v), want the 3 sign-ins", all, err)
	}
	for _, a := range all {
		if a != "Signed in" {
			t.Errorf("filtered by Signed in, a row says %q", a)
		}
	}
}
