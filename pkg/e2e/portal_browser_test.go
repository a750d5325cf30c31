package e2e

import (
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/convida/convida/pkg/ids"
	"github.com/convida/convida/pkg/testenv"
)

// TestBrowserPortal: in Chromium, on a 360 px phone in Portuguese and on a
// desktop in English, a member opens the link her store minted, sees her
// code with no sideways scrolling, her wallet in her language, redeems a
// store coupon through the form (the browser's own Origin and Referer pass
// the form checks) and switches language.
func TestBrowserPortal(t *testing.T) {
	t.Parallel()
	s := startRedeemStack(t)
	yampi := newPlatform(t)
	tn, ana := s.richMember(t, 5000, 0, nil, yampi)
	anaID := ids.Format(ids.Member, ana.ID)
	ctx := testenv.MustBrowser(t)
	do := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, steps...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	text := func(sel string) string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
		if err != nil {
			t.Fatalf("text of %s: %v", sel, err)
		}
		return strings.ReplaceAll(s, "\u00a0", " ")
	}
	open := func(locale string) {
		t.Helper()
		status, body := s.api(tn, http.MethodPost, "/members/"+anaID+"/portal-sessions", []byte(`{"locale":"`+locale+`"}`))
		if status != 201 {
			t.Fatalf("mint = %d %v", status, body)
		}
		do("open the minted link", chromedp.Navigate(s.apiURL+pathOf(t, body["data"].(map[string]any)["url"].(string))))
	}
	for _, tc := range []struct {
		name          string
		width, height int64
		locale        string
		share, wallet string // a heading and the available balance after 10 reais redeemed
		amount        string
	}{
		{"phone in Portuguese", 360, 740, "pt-BR", "Indique e ganhe", "R$ 40,00", "10,00"},
		{"desktop in English", 1280, 900, "en", "Share and earn", "R$30.00", "10.00"},
	} {
		do("viewport "+tc.name, chromedp.EmulateViewport(tc.width, tc.height))
		open(tc.locale)
		loc, err := chromedp.Run(ctx, chromedp.Location())
		if err != nil || !strings.HasSuffix(loc, "/portal") {
			t.Fatalf("%s: landed on %q (%v)", tc.name, loc, err)
		}
		if h := text("h1"); h != tc.share || text("#referral-code") != ana.CouponCode {
			t.Errorf("%s: share page %q, code %q", tc.name, h, text("#referral-code"))
		}
		wide, err := chromedp.Run(ctx, chromedp.Evaluate[int64](`document.documentElement.scrollWidth`))
		if err != nil || wide > tc.width {
			t.Errorf("%s: the page is %d px wide, want at most %d", tc.name, wide, tc.width)
		}
		do("open redeem", chromedp.Navigate(s.apiURL+"/portal/redeem"))
		resp, err := chromedp.RunResponse(ctx, chromedp.Click(chromedp.CSS(`input[value=store_credit]`)),
			chromedp.SetValue(chromedp.CSS(`#amount`), tc.amount),
			chromedp.Click(chromedp.CSS(`form[action="/portal/redeem"] button[type=submit]`)))
		if err != nil || resp.Status != 200 {
			html, _ := chromedp.Run(ctx, chromedp.OuterHTML(chromedp.CSS(`main`)))
			t.Fatalf("%s: redeem: %v %v\n%s", tc.name, resp.Status, err, html)
		}
		if code := text("#coupon-code"); code == "" {
			t.Errorf("%s: no coupon code shown", tc.name)
		}
		do("open the wallet", chromedp.Navigate(s.apiURL+"/portal/wallet"))
		if got := text("#balance-available"); got != tc.wallet {
			t.Errorf("%s: available = %q, want %q", tc.name, got, tc.wallet)
		}
		testenv.Screenshot(t, ctx, "portal-"+tc.locale)
	}
	// The language switch, JavaScript on: back to Portuguese.
	if _, err := chromedp.RunResponse(ctx, chromedp.SetValue(chromedp.CSS(`#lang-select`), "pt-BR"),
		chromedp.Click(chromedp.CSS(`form.lang button`))); err != nil {
		t.Fatal(err)
	}
	if got := text("#balance-available"); got != "R$ 30,00" {
		t.Errorf("after the switch: %q, want R$ 30,00", got)
	}
}
