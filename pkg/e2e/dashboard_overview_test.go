package e2e

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/convida/convida/pkg/dashboard"
	"github.com/convida/convida/pkg/ids"
	"github.com/convida/convida/pkg/report"
	"github.com/convida/convida/pkg/testenv"
)

// TestBrowserDashboardOverviewAndRedemptions: sales posted through the
// ingest, a redemption refused by Guru and one carried out by Yampi; in
// Chromium the owner signs in, sees the overview's chart drawn from its
// table with today's sales counted, switches the chart's metric, switches
// to Portuguese and reads a reward of 979 cents as "R$ 9,79", then finds
// both redemptions with their platform result.
func TestBrowserDashboardOverviewAndRedemptions(t *testing.T) {
	t.Parallel()
	s := startRedeemStack(t)
	guru, yampi := newPlatform(t), newPlatform(t)
	tn, m := s.richMember(t, 979, 0, guru, yampi) // one sale, approved: R$ 9,79 available
	for i, total := range []float64{150, 89.9} {
		wantStatus(t, s.postGuru(tn, guruSale(t, tn, "overview-"+strconv.Itoa(i), m.CouponCode, total, "approved")), 200)
	}
	s.waitBalance(tn, m.Email, wallet{totalEarned: 3 * 979, available: 979, pending: 2 * 979})
	guru.fail = func(int64, string) int { return http.StatusUnprocessableEntity }
	if status, body := s.api(tn, http.MethodPost, "/members/"+ids.Format(ids.Member, m.ID)+"/redeem",
		[]byte(`{"amount":500,"type":"subscription_discount","subscription_id":"sub_9"}`)); status != 422 {
		t.Fatalf("redeem refused by Guru = %d %v, want 422", status, body)
	}
	s.waitBalance(tn, m.Email, wallet{totalEarned: 3 * 979, available: 979, pending: 2 * 979})
	status, body := s.api(tn, http.MethodPost, "/members/"+ids.Format(ids.Member, m.ID)+"/redeem", []byte(`{"amount":979,"type":"store_credit"}`))
	if status != 200 {
		t.Fatalf("redeem at Yampi = %d %v", status, body)
	}
	coupon, _ := body["data"].(map[string]any)["metadata"].(map[string]any)["coupon_code"].(string)
	if coupon == "" {
		t.Fatalf("the Yampi redemption has no coupon code: %v", body)
	}

	zone, err := report.LoadZone("")
	if err != nil {
		t.Fatal(err)
	}
	y, mo, d := s.clock.Now().In(zone).Date()
	today := time.Date(y, mo, d, 0, 0, 0, 0, zone)
	todays := s.count(`SELECT count(*) FROM referrals WHERE merchant_id = $1 AND created_at >= $2 AND created_at < $3`,
		tn.merchant.ID, today, today.AddDate(0, 0, 1))
	// All three, unless the clock is pinned just before a midnight that
	// the sales straddled: the chart's cell of today holds what today has.
	if todays < 1 || todays > 3 {
		t.Fatalf("%d referrals today in São Paulo, want the 3 sales (or those after a midnight)", todays)
	}
	todaysCount, todaysRewards := strconv.Itoa(todays), dashboard.Money(dashboard.English, int64(todays)*979)

	ctx, cancel := context.WithTimeout(testenv.MustBrowser(t), 2*time.Minute)
	defer cancel()
	run := func(what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, actions...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	eval := func(what, js string) string {
		t.Helper()
		v, err := chromedp.Run(ctx, chromedp.Evaluate[string](js))
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return v
	}
	byLabel := func(label string) chromedp.Search {
		return chromedp.Search(`//*[(self::input or self::select) and @id=//label[normalize-space(.)="` + label + `"]/@for]`)
	}
	buttonNamed := func(name string) chromedp.Search {
		return chromedp.Search(`//button[normalize-space(.)="` + name + `"]`)
	}
	// chart reports the overview's figure in <main>: its accessible name,
	// whether uPlot drew a canvas of some size in it, the table's cell of
	// today and the number of captions.
	var readChart func() string
	chart := func() string {
		t.Helper()
		run("the chart drawn", chromedp.WaitVisible(chromedp.CSS(`main figure.chart canvas`)))
		// The page may still be settling (the deferred scripts, the
		// layout): read until the canvas has a size, for a few seconds.
		var got string
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			if got = readChart(); strings.Contains(got, "|drawn|") || time.Now().After(deadline) {
				return got
			}
		}
	}
	readChart = func() string {
		return eval("read the chart", `(() => {
  const fig = document.querySelector("main figure[aria-label]");
  const c = fig && fig.querySelector("canvas, svg");
  const r = c ? c.getBoundingClientRect() : {width: 0, height: 0};
  const cell = fig && fig.querySelector('table tr[data-t="`+strconv.FormatInt(today.Unix(), 10)+`"] td');
  return [fig ? fig.getAttribute("aria-label") : "", r.width > 0 && r.height > 0 ? "drawn" : "blank",
    cell ? cell.textContent.trim() : "", fig ? fig.querySelectorAll("table caption").length : 0].join("|");
})()`)
	}

	run("sign in", chromedp.Navigate(s.apiURL+"/dashboard/sign-in"),
		chromedp.SendKeys(byLabel("Email"), testenv.DashboardEmail), chromedp.SendKeys(byLabel("Password"), "pw"))
	// Each click that loads a page is followed by a wait for what only the
	// new page shows, rather than for the navigation's response.
	run("sign in", chromedp.Click(buttonNamed("Sign in")), chromedp.WaitReady(chromedp.CSS(`main figure[aria-label]`)))
	got := strings.Split(chart(), "|")
	if !strings.HasPrefix(got[0], "Referrals per day") || got[1] != "drawn" || got[2] != todaysCount || got[3] != "1" {
		t.Errorf("overview chart: label %q, %s, today's cell %q, %s caption(s); want Referrals per day, drawn, %s, 1", got[0], got[1], got[2], got[3], todaysCount)
	}
	rows := eval("table rows", `String(document.querySelectorAll("main figure table.series tbody tr").length)`)
	if rows != "30" {
		t.Errorf("the default range's table has %s days, want 30", rows)
	}
	testenv.Screenshot(t, ctx, "overview")

	// The metric selector: choosing the rewards credited loads the page
	// with that series (the select submits itself; chromedp's SetValue
	// fires the change event a person's choice fires). Without JavaScript
	// the "Show" button does it (TestOverviewRanges).
	run("choose a metric", chromedp.SetValue(byLabel("Chart"), "rewards_credited"),
		chromedp.WaitReady(chromedp.CSS(`main figure[aria-label^="Rewards credited per day"]`)))
	got = strings.Split(chart(), "|")
	if !strings.HasPrefix(got[0], "Rewards credited per day") || got[1] != "drawn" || got[2] != todaysRewards {
		t.Errorf("after choosing Rewards credited: label %q, %s, today's cell %q; want drawn and %s", got[0], got[1], got[2], todaysRewards)
	}

	// Português: money as R$ 9,79.
	run("Português", chromedp.Click(buttonNamed("Português")), chromedp.WaitReady(buttonNamed("English")))
	got = strings.Split(chart(), "|")
	if !strings.HasPrefix(got[0], "Indicações por dia") || got[1] != "drawn" {
		t.Errorf("in Portuguese the chart is %q, %s", got[0], got[1])
	}
	page := eval("page text", `document.querySelector("main").innerText`)
	if !strings.Contains(page, "R$ 9,79") || !strings.Contains(page, "R$ 29,37") {
		t.Errorf("the Portuguese overview does not show the reward as R$ 9,79 and the credited sum as R$ 29,37:\n%s", page)
	}

	// Redemptions, still in Portuguese: both, with what the platform said.
	run("open Resgates", chromedp.Click(chromedp.Search(`//nav//a[normalize-space(.)="Resgates"]`)),
		chromedp.WaitReady(chromedp.Search(`//h1[normalize-space(.)="Resgates"]`)))
	page = eval("redemptions text", `document.querySelector("main").innerText`)
	for _, want := range []string{"Concluído 1", "Falhou 1", coupon, "R$ 9,79", "R$ 5,00", "Falhou:", "Ana Souza"} {
		if !strings.Contains(page, want) {
			t.Errorf("the redemptions page lacks %q:\n%s", want, page)
		}
	}
	testenv.Screenshot(t, ctx, "redemptions")
}
