package e2e

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/uuid"

	"github.com/convida/convida/pkg/campaign"
	"github.com/convida/convida/pkg/ids"
	"github.com/convida/convida/pkg/member"
	"github.com/convida/convida/pkg/merchant"
	"github.com/convida/convida/pkg/postgres"
	"github.com/convida/convida/pkg/testenv"
)

// testID is the text of the element data-testid names.
func (b *dashboardBrowser) testID(id string) string {
	b.t.Helper()
	return browserText(b, chromedp.Search(`//*[@data-testid="`+id+`"]`))
}

// TestBrowserDashboardMembersAndCreators: a merchant's owner creates a
// member, opens it from the Members list by its name's link and sees its
// wallet; a sale credited through the ingest shows as R$ 9,79 in
// Portuguese; a redemption on the member's behalf reaches the (fake)
// Yampi and changes the wallet; the member's creator profile shows its
// token, and rotating it makes the old one 404 on the public API.
func TestBrowserDashboardMembersAndCreators(t *testing.T) {
	s := startRedeemStack(t)
	yampi := newPlatform(t)
	creds, err := merchant.Register(context.Background(), postgres.NewMerchantStore(s.deps.Pool, s.deps.Box),
		&merchant.Merchant{Name: "Loja Membros", StoreURL: "https://membros.example.com", CodePrefix: "MEMB"})
	if err != nil {
		t.Fatal(err)
	}
	tn := &tenant{guruToken: "guru-members-token-" + strings.Repeat("7", 21), apiKey: creds.APIKey}
	if tn.merchant, err = postgres.NewMerchantStore(s.deps.Pool, s.deps.Box).FindMerchantByID(context.Background(), uuid.MustParse(creds.MerchantID)); err != nil {
		t.Fatal(err)
	}
	tn.campaign = testenv.MustCampaign(t, s.deps.Pool, tn.merchant.ID, campaign.Campaign{Name: "Fixo", RewardType: campaign.RewardFixed,
		RewardValue: 979, WarrantyDays: 30, IsActive: true})
	for provider, body := range map[string]string{
		"guru":  `{"account_token": "` + tn.guruToken + `"}`,
		"yampi": `{"user_token": "yampi-ut", "user_secret_key": "yampi-usk", "store_alias": "loja", "api_url": "` + yampi.srv.URL + `"}`,
	} {
		if status, res := s.api(tn, http.MethodPut, "/integrations/"+provider, []byte(body)); status != 200 {
			t.Fatalf("PUT integration %s = %d %v", provider, status, res)
		}
	}

	ctx, cancel := context.WithTimeout(testenv.MustBrowser(t), 3*time.Minute)
	t.Cleanup(cancel)
	b := &dashboardBrowser{t: t, url: s.apiURL, ctx: ctx}
	b.load("open sign-in", chromedp.Navigate(s.apiURL+"/dashboard/sign-in"))
	if status := b.load("sign in", chromedp.SendKeys(labelled("Email"), creds.DashboardEmail),
		chromedp.SendKeys(labelled("Password"), creds.DashboardPassword), chromedp.Click(named("button", "Sign in"))); status != http.StatusOK {
		t.Fatalf("sign in: %d", status)
	}

	// A new member, through the form.
	b.load("open Members", chromedp.Click(named("a", "Members")))
	b.load("New member", chromedp.Click(named("a", "New member")))
	if status := b.load("create member", chromedp.SendKeys(labelled("Name"), "Ana Souza"),
		chromedp.SendKeys(labelled("Email"), "ana@example.com"), chromedp.Click(named("button", "Create member"))); status != http.StatusOK {
		t.Fatalf("create member: %d", status)
	}
	if got := browserText(b, chromedp.Search(`//*[@role="status"]`)); got != "The member was created." {
		t.Errorf("after creating: %q", got)
	}
	var m *member.Member
	if m, err = postgres.NewMemberStore(s.deps.Pool).FindMemberByEmailOrExternalID(context.Background(), tn.merchant.ID, "ana@example.com", ""); err != nil {
		t.Fatal(err)
	}

	// The list links the member's name to its page, which shows the wallet.
	b.load("open Members", chromedp.Click(named("a", "Members")))
	testenv.Screenshot(t, b.ctx, "members")
	b.load("open Ana", chromedp.Click(named("a", "Ana Souza")))
	if loc := b.location(); loc != "/dashboard/members/"+m.ID.String() {
		t.Fatalf("the name's link went to %s", loc)
	}
	if got := b.testID("wallet-available"); got != "R$0.00" {
		t.Errorf("a new member's available balance shows %q", got)
	}

	// A sale for her code, through the ingest: 9.79 pending.
	wantStatus(t, s.postGuru(tn, guruSale(t, tn, "members-1", m.CouponCode, 97.90, "approved")), 200)
	s.waitBalance(tn, m.Email, wallet{totalEarned: 979, pending: 979})
	b.load("reload", chromedp.Reload())
	if got := b.testID("wallet-pending"); got != "R$9.79" {
		t.Errorf("pending after the sale: %q, want R$9.79", got)
	}
	b.load("Português", chromedp.Click(named("button", "Português")))
	if got := b.testID("wallet-pending"); got != "R$ 9,79" {
		t.Errorf("pending in Portuguese: %q, want R$ 9,79", got)
	}
	if got := b.testID("wallet-total-earned"); got != "R$ 9,79" {
		t.Errorf("total earned in Portuguese: %q, want R$ 9,79", got)
	}
	b.load("English", chromedp.Click(named("button", "English")))

	// Approved, the reward is available; redeem 5,00 of it as store credit.
	var refID uuid.UUID
	if err := s.deps.Pool.QueryRow(context.Background(), `SELECT id FROM referrals WHERE merchant_id = $1`, tn.merchant.ID).Scan(&refID); err != nil {
		t.Fatal(err)
	}
	if status, body := s.api(tn, http.MethodPost, "/referrals/"+ids.Format(ids.Referral, refID)+"/approve", []byte(`{}`)); status != 200 && status != 202 {
		t.Fatalf("approve = %d %v", status, body)
	}
	s.waitBalance(tn, m.Email, wallet{totalEarned: 979, available: 979})
	b.load("reload", chromedp.Reload())
	if status := b.load("redeem", chromedp.SendKeys(labelled("Amount (R$)"), "5,00"), chromedp.SetValue(labelled("Type"), "store_credit"),
		chromedp.Click(named("button", "Redeem"))); status != http.StatusOK {
		t.Fatalf("redeem: %d", status)
	}
	if got := browserText(b, chromedp.Search(`//*[@role="status"]`)); got != "The redemption was made." {
		t.Errorf("after redeeming: %q", got)
	}
	if got := b.testID("wallet-available"); got != "R$4.79" {
		t.Errorf("available after redeeming 5,00: %q, want R$4.79", got)
	}
	if got := b.testID("wallet-total-redeemed"); got != "R$5.00" {
		t.Errorf("total redeemed: %q, want R$5.00", got)
	}
	if seen := yampi.seen(); len(seen) != 1 || !strings.HasPrefix(seen[0], "POST /loja/pricing/promocodes yampi-ut/yampi-usk ") ||
		!strings.Contains(seen[0], `"value":5`) {
		t.Errorf("yampi saw %q, want one coupon of 5.00", seen)
	}
	s.waitBalance(tn, m.Email, wallet{totalEarned: 979, available: 479, totalRedeemed: 500})
	testenv.Screenshot(t, b.ctx, "member")
	b.load("open the ledger", chromedp.Navigate(s.apiURL+"/dashboard/members/"+ids.Format(ids.Member, m.ID)+"/ledger"))
	if got := browserText(b, chromedp.Search(`//tbody`)); !strings.Contains(got, "Debit") || !strings.Contains(got, "Release") ||
		!strings.Contains(got, "Credit") || !strings.Contains(got, "-R$5.00") {
		t.Errorf("the member's ledger page shows %q", got)
	}
	b.load("back", chromedp.Click(named("a", "Back to Ana Souza")))

	// Her creator profile: from her page, the token shown, rotated; the
	// campaign's tiers (set after her sale, which kept the campaign's
	// reward) give her month's one sale Bronze.
	if status, body := s.api(tn, http.MethodPut, "/campaigns/"+ids.Format(ids.Campaign, tn.campaign.ID)+"/tiers",
		[]byte(`{"tiers":[{"name":"Bronze","min_sales":0,"commission_percent":10},{"name":"Silver","min_sales":3,"commission_percent":15}]}`)); status != 200 {
		t.Fatalf("PUT tiers = %d %v", status, body)
	}
	b.load("make creator", chromedp.Click(named("a", "Create a creator profile")))
	if status := b.load("save creator", chromedp.SetValue(labelled("Display name"), "Ana Creates"), chromedp.SendKeys(labelled("Niche"), "fitness"),
		chromedp.SendKeys(labelled("Instagram"), "@ana.creates"), chromedp.Click(named("button", "Save creator"))); status != http.StatusOK {
		t.Fatalf("save creator: %d", status)
	}
	token := b.testID("creator-token")
	if len(token) < 40 || creatorStatus(t, s, token) != http.StatusOK {
		t.Fatalf("the token shown %q does not read the creator's profile", token)
	}
	if got := b.testID("creator-tier"); got != "Bronze (10%)" {
		t.Errorf("the creator's tier shows %q, want Bronze (10%%)", got)
	}
	b.load("open Creators", chromedp.Click(named("a", "Creators")))
	if got := browserText(b, chromedp.Search(`//tbody/tr[1]/td[1]`)); got != "Ana Creates" {
		t.Errorf("the creators list shows %q", got)
	}
	testenv.Screenshot(t, b.ctx, "creators")
	b.load("open creator", chromedp.Click(named("a", "Ana Creates")))
	testenv.Screenshot(t, b.ctx, "creator")
	b.load("rotate", chromedp.Click(named("button", "Rotate token")))
	b.load("confirm rotate", chromedp.Click(named("button", "Yes, rotate")))
	rotated := b.testID("creator-token")
	if rotated == token || len(rotated) < 40 {
		t.Fatalf("after rotating, the page shows %q (was %q)", rotated, token)
	}
	if got := creatorStatus(t, s, token); got != http.StatusNotFound {
		t.Errorf("the old token on the public API: %d, want 404", got)
	}
	if got := creatorStatus(t, s, rotated); got != http.StatusOK {
		t.Errorf("the new token on the public API: %d, want 200", got)
	}
}

// creatorStatus is the status of GET /api/v1/creators/{token}.
func creatorStatus(t *testing.T, s *stack, token string) int {
	return do(t, http.MethodGet, s.apiURL+"/api/v1/creators/"+token, nil, nil).Status
}

// TestDashboardRedeemFormSentTwice: the redeem form names its redemption
// by the one-time key it carries, so the same form sent twice (a double
// click, a retried request) redeems once; a new form redeems again.
func TestDashboardRedeemFormSentTwice(t *testing.T) {
	t.Parallel()
	s := startRedeemStack(t)
	guru, yampi := newPlatform(t), newPlatform(t)
	tn, m := s.richMember(t, 5000, 0, guru, yampi)
	email, password := dashboardUser(t, s.deps.Pool, tn.merchant.ID, merchant.RoleOwner)
	owner := signedIn(t, s.apiURL, email, password)
	form := url.Values{"key": {"form-1"}, "amount": {"10,00"}, "type": {"store_credit"}}
	path := "/dashboard/members/" + m.ID.String() + "/redeem"
	for i := range 2 {
		if status, body := owner.do(http.MethodPost, path, form); status != http.StatusSeeOther {
			t.Fatalf("redeem form sent (%d): %d: %s", i+1, status, body)
		}
	}
	s.waitBalance(tn, m.Email, wallet{totalEarned: 5000, available: 4000, totalRedeemed: 1000})
	form.Set("key", "form-2")
	if status, body := owner.do(http.MethodPost, path, form); status != http.StatusSeeOther {
		t.Fatalf("a second form: %d: %s", status, body)
	}
	s.waitBalance(tn, m.Email, wallet{totalEarned: 5000, available: 3000, totalRedeemed: 2000})
	if n := len(yampi.seen()); n != 2 {
		t.Errorf("yampi calls = %d, want 2 (one per form)", n)
	}
	// Another merchant's redemption cannot be named: the key is the
	// merchant's own.
	other := s.newTenant(testenv.FixedCampaign(100, 7))
	oEmail, oPassword := dashboardUser(t, s.deps.Pool, other.merchant.ID, merchant.RoleOwner)
	if status, _ := signedIn(t, s.apiURL, oEmail, oPassword).do(http.MethodPost, path, form); status != http.StatusNotFound {
		t.Errorf("another merchant's owner redeems for the member: %d, want 404", status)
	}
	s.waitBalance(tn, m.Email, wallet{totalEarned: 5000, available: 3000, totalRedeemed: 2000})
}
