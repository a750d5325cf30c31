package e2e

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"golang.org/x/crypto/bcrypt"

	"github.com/convida/convida/pkg/campaign"
	"github.com/convida/convida/pkg/merchant"
	"github.com/convida/convida/pkg/postgres"
	"github.com/convida/convida/pkg/testenv"
)

// dashboardUser gives the merchant a dashboard user of role by an
// accepted invitation, as the Users page would, and returns its e-mail and
// password.
func dashboardUser(t testing.TB, pool *pgxpool.Pool, merchantID uuid.UUID, role string) (email, password string) {
	t.Helper()
	ctx, now := testenv.SeedContext(t), testenv.Now(t)
	email, password = role+"-"+uuid.NewString()[:8]+"@loja.example.com", "dashboard-password-1"
	users := postgres.NewDashboardUserStore(pool)
	_, hash := merchant.NewInviteToken()
	if err := users.CreateInvite(ctx, &merchant.Invite{MerchantID: merchantID, Email: email, Role: role,
		ExpiresAt: now.Add(time.Hour)}, hash); err != nil {
		t.Fatal(err)
	}
	pw, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := users.AcceptInvite(ctx, hash, string(pw), now); err != nil {
		t.Fatal(err)
	}
	return email, password
}

// dashboardClient is a signed-in HTTP client of the dashboard at base: it
// keeps the session cookie and does not follow redirects.
type dashboardClient struct {
	t    testing.TB
	base string
	c    *http.Client
}

func signedIn(t testing.TB, base, email, password string) *dashboardClient {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	dc := &dashboardClient{t: t, base: base, c: &http.Client{Jar: jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	if status, _ := dc.do(http.MethodPost, "/dashboard/sign-in", url.Values{"email": {email}, "password": {password}}); status != http.StatusSeeOther {
		t.Fatalf("sign in as %s: %d", email, status)
	}
	return dc
}

// do sends a request (a POST with the dashboard's own Origin, as a browser
// does) and returns the status and body.
func (dc *dashboardClient) do(method, path string, form url.Values) (int, string) {
	dc.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, _ := http.NewRequest(method, dc.base+path, body)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", dc.base)
	}
	resp, err := dc.c.Do(req)
	if err != nil {
		dc.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// flaggedSales starts a stack (its ledger) with a tenant whose campaign
// pays R$10.00 per sale and flags disposable buyer e-mails, and posts one
// Guru sale per order through the ingest, each bought by a mailinator.com
// address: every one is held pending in the review queue. It returns the
// member and the referrals' ids by order.
func flaggedSales(t *testing.T, orders ...string) (*stack, fraudMember, map[string]string) {
	t.Helper()
	s := startStack(t, stackOptions{})
	fm := s.newFraudTenant(t, 1000, campaign.Rules{BlockDisposableEmails: true}, "ana.souza@example.com", "")
	for _, o := range orders {
		s.guruBuy(t, fm, o, 100, "x@mailinator.com", "")
	}
	refs := map[string]string{}
	testenv.Eventually(t, 20*time.Second, "the flagged referrals in the review queue", func() bool {
		_, res := s.api(fm.tn, http.MethodGet, "/referrals?review_required=true&per_page=100", nil)
		list, _ := res["data"].([]any)
		for _, r := range list {
			ref := r.(map[string]any)
			refs[ref["order_id"].(string)] = ref["id"].(string)
		}
		return len(refs) == len(orders)
	})
	return s, fm, refs
}

func (s *stack) available(fm fraudMember) int64 {
	s.t.Helper()
	status, res := s.api(fm.tn, http.MethodGet, "/members/"+fm.id+"/wallet", nil)
	if status != http.StatusOK {
		s.t.Fatalf("GET wallet: %d %v", status, res)
	}
	return int64(res["data"].(map[string]any)["available"].(float64))
}

// TestBrowserDashboardCampaignsAndReview: a merchant signs in, creates a
// campaign of R$15,00 with "New campaign" (the API then shows 1500
// cents), finds two sales flagged for a disposable buyer e-mail in the
// review queue, approves one (the member's available balance grows by its
// reward) and rejects the other with a reason and "Confirm".
func TestBrowserDashboardCampaignsAndReview(t *testing.T) {
	s, fm, refs := flaggedSales(t, "g-approve", "g-reject")
	email, password := dashboardUser(t, s.deps.Pool, fm.tn.merchant.ID, merchant.RoleOwner)
	ctx, cancel := context.WithTimeout(testenv.MustBrowser(t), 3*time.Minute)
	t.Cleanup(cancel)
	b := &dashboardBrowser{t: t, url: s.apiURL, ctx: ctx}
	b.load("open sign-in", chromedp.Navigate(s.apiURL+"/dashboard/sign-in"))
	if status := b.load("sign in", chromedp.SendKeys(labelled("Email"), email), chromedp.SendKeys(labelled("Password"), password),
		chromedp.Click(named("button", "Sign in"))); status != http.StatusOK {
		t.Fatalf("sign in: %d", status)
	}

	// Campaigns: a fixed reward typed in reais.
	b.load("open Campaigns", chromedp.Click(named("a", "Campaigns")))
	b.load("New campaign", chromedp.Click(named("a", "New campaign")))
	if err := chromedp.Do(ctx, chromedp.SendKeys(labelled("Name"), "Amigos"), chromedp.SetValue(labelled("Reward type"), "fixed"),
		chromedp.SetValue(labelled("Reward value"), "15,00"), chromedp.SetValue(labelled("Warranty days"), "7")); err != nil {
		t.Fatalf("fill the new campaign's form: %v", err)
	}
	testenv.Screenshot(t, ctx, "campaign-new")
	if status := b.load("Create campaign", chromedp.Click(named("button", "Create campaign"))); status != http.StatusOK {
		t.Fatalf("create campaign: %d", status)
	}
	if got := browserText(b, chromedp.Search(`//tr[td/a[text()="Amigos"]]/td[@data-testid="reward"]`)); got != "R$15.00" {
		t.Errorf("the new campaign's reward shows %q, want R$15.00", got)
	}
	testenv.Screenshot(t, ctx, "campaigns")
	_, list := s.api(fm.tn, http.MethodGet, "/campaigns?per_page=100", nil)
	var created map[string]any
	for _, c := range list["data"].([]any) {
		if c.(map[string]any)["name"] == "Amigos" {
			created = c.(map[string]any)
		}
	}
	if created == nil || created["reward_type"] != "fixed" || created["reward_value"] != float64(1500) || created["warranty_days"] != float64(7) {
		t.Errorf("GET /api/v1/campaigns shows the new campaign as %v, want fixed 1500 cents, 7 days", created)
	}

	// The review queue: both flagged sales, with their reason.
	b.load("open Referrals", chromedp.Click(named("a", "Referrals")))
	testenv.Screenshot(t, ctx, "referrals")
	b.load("open the review queue", chromedp.Click(named("a", "Review queue")))
	queue := browserText(b, chromedp.CSS("main table"))
	for _, want := range []string{"g-approve", "g-reject", "disposable e-mail", "x@mailinator.com", "R$10.00"} {
		if !strings.Contains(queue, want) {
			t.Errorf("the review queue does not show %q: %s", want, queue)
		}
	}

	// Approve one: its reward becomes available.
	before := s.available(fm)
	b.load("open g-approve", chromedp.Click(named("a", "g-approve")))
	if loc := b.location(); loc != "/dashboard/referrals/"+refs["g-approve"] {
		t.Errorf("the referral's page is %s, want /dashboard/referrals/%s", loc, refs["g-approve"])
	}
	testenv.Screenshot(t, ctx, "referral")
	if status := b.load("Approve", chromedp.Click(named("button", "Approve"))); status != http.StatusOK {
		t.Fatalf("approve: %d", status)
	}
	if got := browserText(b, chromedp.CSS(`[role="status"]`)); !strings.Contains(got, "approved") {
		t.Errorf("after approving: %q", got)
	}
	if after := s.available(fm); after != before+1000 {
		t.Errorf("available after approving: %d, want %d", after, before+1000)
	}

	// Reject the other, with a reason, confirmed.
	b.load("open the queue again", chromedp.Navigate(s.apiURL+"/dashboard/referrals?review_required=true"))
	b.load("open g-reject", chromedp.Click(named("a", "g-reject")))
	b.load("Reject", chromedp.Click(named("button", "Reject")))
	if status := b.load("Confirm", chromedp.SetValue(labelled("Reason"), "fraud"), chromedp.SendKeys(`#reject-notes`, "throwaway address"),
		chromedp.Click(named("button", "Confirm"))); status != http.StatusOK {
		t.Fatalf("confirm the rejection: %d", status)
	}
	page := browserText(b, chromedp.CSS("main"))
	for _, want := range []string{"The referral was rejected.", "Rejected", "Fraud", "throwaway address"} {
		if !strings.Contains(page, want) {
			t.Errorf("the rejected referral's page does not show %q: %s", want, page)
		}
	}
	status, res := s.api(fm.tn, http.MethodGet, "/referrals/"+refs["g-reject"], nil)
	if ref := res["data"].(map[string]any); status != http.StatusOK || ref["status"] != "rejected" || ref["rejection_reason"] != "fraud" {
		t.Errorf("GET the rejected referral: %d %v", status, res)
	}
	if got := s.available(fm); got != before+1000 {
		t.Errorf("available after rejecting the other: %d, want still %d", got, before+1000)
	}
}

func (b *dashboardBrowser) location() string {
	b.t.Helper()
	loc, err := chromedp.Run(b.ctx, chromedp.Location())
	if err != nil {
		b.t.Fatal(err)
	}
	return strings.TrimPrefix(loc, b.url)
}

// TestDashboardReferralDecisions: a decision the referral's status no
// longer allows answers 409 with an alert; a rejection without a reason is
// refused before the ledger; a viewer decides nothing; another merchant's
// referral is not found; the filters and the CSV export select as the API.
func TestDashboardReferralDecisions(t *testing.T) {
	s, fm, refs := flaggedSales(t, "g-1", "g-2")
	email, password := dashboardUser(t, s.deps.Pool, fm.tn.merchant.ID, merchant.RoleOwner)
	owner := signedIn(t, s.apiURL, email, password)
	vEmail, vPassword := dashboardUser(t, s.deps.Pool, fm.tn.merchant.ID, merchant.RoleViewer)
	viewer := signedIn(t, s.apiURL, vEmail, vPassword)

	path := "/dashboard/referrals/" + refs["g-1"]
	if status, body := viewer.do(http.MethodPost, path+"/approve", url.Values{}); status != http.StatusForbidden || !strings.Contains(body, "viewer") {
		t.Errorf("a viewer's approval: %d, want 403", status)
	}
	if status, body := owner.do(http.MethodPost, path+"/reject", url.Values{"reason": {"because"}}); status != http.StatusUnprocessableEntity ||
		!strings.Contains(body, `role="alert"`) {
		t.Errorf("a rejection with an unknown reason: %d, want 422 with an alert", status)
	}
	if status, body := owner.do(http.MethodPost, path+"/approve", url.Values{"notes": {strings.Repeat("n", 2001)}}); status != http.StatusUnprocessableEntity ||
		!strings.Contains(body, "at most 2000 characters") {
		t.Errorf("an approval with too long notes: %d, want 422 with an alert", status)
	}
	if status, _ := owner.do(http.MethodPost, path+"/approve", url.Values{"notes": {"looked fine"}}); status != http.StatusSeeOther {
		t.Fatalf("approve: %d", status)
	}
	status, body := owner.do(http.MethodPost, path+"/approve", url.Values{})
	if status != http.StatusConflict || !strings.Contains(body, `role="alert"`) || !strings.Contains(body, "no longer allows") {
		t.Errorf("approving twice: %d, want 409 with an alert: %s", status, body)
	}
	if _, res := s.api(fm.tn, http.MethodGet, "/referrals/"+refs["g-1"], nil); res["data"].(map[string]any)["notes"] != "looked fine" {
		t.Errorf("the approval's notes: %v", res["data"])
	}

	// The list: the review queue holds only g-2 now; a status tab; CSV.
	if _, body := owner.do(http.MethodGet, "/dashboard/referrals?review_required=true", nil); !strings.Contains(body, "g-2") || strings.Contains(body, ">g-1<") {
		t.Errorf("the review queue after approving g-1 should list only g-2")
	}
	if _, body := owner.do(http.MethodGet, "/dashboard/referrals?status=approved", nil); !strings.Contains(body, ">g-1<") || strings.Contains(body, ">g-2<") {
		t.Errorf("the Approved tab should list only g-1")
	}
	if status, _ := owner.do(http.MethodGet, "/dashboard/referrals?status=paid", nil); status != http.StatusBadRequest {
		t.Errorf("an unknown status: %d, want 400", status)
	}
	if status, _ := owner.do(http.MethodGet, "/dashboard/referrals?from=yesterday", nil); status != http.StatusBadRequest {
		t.Errorf("a bad date: %d, want 400", status)
	}
	// The days, in São Paulo, the two sales were received on: one day, or
	// the two sides of a midnight when the clock is pinned at one.
	var days []string
	for _, order := range []string{"g-1", "g-2"} {
		_, res := s.api(fm.tn, http.MethodGet, "/referrals/"+refs[order], nil)
		at, err := time.Parse(time.RFC3339, fmt.Sprint(res["data"].(map[string]any)["created_at"]))
		if err != nil {
			t.Fatalf("%s's created_at: %v", order, err)
		}
		days = append(days, at.In(time.FixedZone("BRT", -3*3600)).Format(time.DateOnly))
	}
	slices.Sort(days)
	if _, body := owner.do(http.MethodGet, "/dashboard/referrals?from=2020-01-01&to=2020-01-31", nil); strings.Contains(body, ">g-1<") {
		t.Errorf("a range in 2020 lists this run's referrals")
	}
	if _, body := owner.do(http.MethodGet, "/dashboard/referrals?member="+fm.id+"&from="+days[0]+"&to="+days[1], nil); !strings.Contains(body, ">g-1<") || !strings.Contains(body, ">g-2<") {
		t.Errorf("the member's referrals from %s to %s, the days they were received, should list both", days[0], days[1])
	}
	if today := s.clock.Now().In(time.FixedZone("BRT", -3*3600)).Format(time.DateOnly); days[1] > today {
		t.Errorf("a referral received on %s, after today (%s) on the service's clock", days[1], today)
	}
	status, body = owner.do(http.MethodGet, "/dashboard/referrals?format=csv&status=pending", nil)
	rows, err := csv.NewReader(strings.NewReader(body)).ReadAll()
	if status != http.StatusOK || err != nil || len(rows) != 2 || rows[0][0] != "id" || rows[1][0] != refs["g-2"] || rows[1][10] != "100.00" || rows[1][11] != "10.00" {
		t.Errorf("CSV of the pending referrals: %d %v %q", status, err, rows)
	}

	// Another merchant's user finds none of them.
	other := s.newTenant(testenv.FixedCampaign(500, 7))
	oEmail, oPassword := dashboardUser(t, s.deps.Pool, other.merchant.ID, merchant.RoleOwner)
	stranger := signedIn(t, s.apiURL, oEmail, oPassword)
	for _, p := range []string{path, "/dashboard/referrals/" + refs["g-2"] + "/reject", "/dashboard/referrals/ref_nope"} {
		if status, _ := stranger.do(http.MethodGet, p, nil); status != http.StatusNotFound {
			t.Errorf("another merchant's GET %s: %d, want 404", p, status)
		}
	}
	if status, _ := stranger.do(http.MethodPost, "/dashboard/referrals/"+refs["g-2"]+"/reject", url.Values{"reason": {"fraud"}}); status != http.StatusNotFound {
		t.Errorf("another merchant's rejection: %d, want 404", status)
	}
	if _, body := stranger.do(http.MethodGet, "/dashboard/referrals", nil); strings.Contains(body, "g-2") {
		t.Errorf("another merchant's list shows the referral")
	}
	if _, res := s.api(fm.tn, http.MethodGet, "/referrals/"+refs["g-2"], nil); res["data"].(map[string]any)["status"] != "pending" {
		t.Errorf("g-2 after the refused decisions: %v", res["data"])
	}
}
