package e2e

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/convida/convida/pkg/postgres"
	"github.com/convida/convida/pkg/testenv"
)

// TestBrowserDashboardEraseMember: an owner erases a member's personal
// data from the member's page, through a confirmation page that says what
// goes and that it cannot be undone; the page then shows the member as
// erased, in both languages. A viewer can reach neither the confirmation
// nor the erasure.
func TestBrowserDashboardEraseMember(t *testing.T) {
	t.Parallel()
	s := startStack(t, stackOptions{noLedger: true, noRecorder: true})
	tn := s.newTenant(testenv.FixedCampaign(1000, 7))
	m := s.newMember(tn, "lia.mota@example.com", "Lia Mota")
	owner, ownerPassword := dashboardUser(t, s.deps.Pool, tn.merchant.ID, "owner")
	viewer, viewerPassword := dashboardUser(t, s.deps.Pool, tn.merchant.ID, "viewer")
	page := "/dashboard/members/" + m.ID.String()

	// A viewer: 403 on the confirmation and on the erasure.
	vc := signedIn(t, s.apiURL, viewer, viewerPassword)
	if status, _ := vc.do(http.MethodGet, page+"/erase", nil); status != http.StatusForbidden {
		t.Errorf("a viewer's GET of the confirmation: %d, want 403", status)
	}
	if status, _ := vc.do(http.MethodPost, page+"/erase", url.Values{}); status != http.StatusForbidden {
		t.Errorf("a viewer's erasure: %d, want 403", status)
	}
	if status, body := vc.do(http.MethodGet, page, nil); status != http.StatusOK || strings.Contains(body, "Erase personal data") {
		t.Errorf("a viewer's member page: %d, offering the erasure: %v", status, strings.Contains(body, "Erase personal data"))
	}

	ctx, cancel := context.WithTimeout(testenv.MustBrowser(t), 2*time.Minute)
	t.Cleanup(cancel)
	b := &dashboardBrowser{t: t, url: s.apiURL, ctx: ctx}
	b.load("open sign-in", chromedp.Navigate(s.apiURL+"/dashboard/sign-in"))
	if status := b.load("sign in", chromedp.SendKeys(labelled("Email"), owner),
		chromedp.SendKeys(labelled("Password"), ownerPassword), chromedp.Click(named("button", "Sign in"))); status != http.StatusOK {
		t.Fatalf("sign in: %d", status)
	}
	b.load("open Lia", chromedp.Navigate(s.apiURL+page))
	b.load("ask to erase", chromedp.Click(named("button", "Erase personal data")))
	if got := browserText(b, chromedp.Search(`//h1`)); got != "Erase personal data: Lia Mota" {
		t.Errorf("the confirmation's heading: %q", got)
	}
	if got := browserText(b, chromedp.Search(`//*[@role="alert"]`)); got != "This cannot be undone." {
		t.Errorf("the confirmation's warning: %q", got)
	}
	testenv.Screenshot(t, b.ctx, "member-erase")
	b.load("confirm", chromedp.Click(named("button", "Yes, erase")))
	if got := browserText(b, chromedp.Search(`//*[@role="status"]`)); got != "The member's personal data was erased." {
		t.Errorf("after erasing: %q", got)
	}
	if loc := b.location(); loc != page {
		t.Errorf("after erasing the browser is at %s, want the member's page", loc)
	}
	if got := browserText(b, chromedp.Search(`//h1`)); got != "(erased)" {
		t.Errorf("the erased member's heading: %q", got)
	}
	if got := b.testID("member-erased"); !strings.HasPrefix(got, "Personal data erased on ") {
		t.Errorf("the erased member's notice: %q", got)
	}
	if html := b.html(); strings.Contains(html, "Erase personal data") || strings.Contains(html, "Lia Mota") || strings.Contains(html, "lia.mota@") {
		t.Errorf("the erased member's page still offers the erasure or shows her data")
	}
	b.load("Português", chromedp.Click(named("button", "Português")))
	if got := browserText(b, chromedp.Search(`//h1`)); got != "(apagado)" {
		t.Errorf("the erased member's heading in Portuguese: %q", got)
	}
	got, err := postgres.NewMemberStore(s.deps.Pool).FindMemberByID(context.Background(), tn.merchant.ID, m.ID)
	if err != nil || !got.IsErased() || got.Name != "" {
		t.Errorf("the stored member: %+v, %v", got, err)
	}
}
