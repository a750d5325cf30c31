package dashboard_test

import (
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/convida/convida/pkg/report"
	"github.com/convida/convida/pkg/testenv"
)

// drawnTextJS records every text drawn on a canvas (uPlot draws its axes
// there, out of the DOM's reach), for the test to read what a person sees.
const drawnTextJS = `(() => {
  window.__drawn = [];
  const fill = CanvasRenderingContext2D.prototype.fillText;
  CanvasRenderingContext2D.prototype.fillText = function (text, ...rest) {
    window.__drawn.push(String(text));
    return fill.call(this, text, ...rest);
  };
})();`

// chartTexts opens path and returns the texts the chart drew once it has
// drawn them, with no-break spaces as spaces.
func (b *browser) chartTexts(path string) []string {
	b.t.Helper()
	b.open(path)
	b.do("the chart drawn", chromedp.WaitVisible(chromedp.CSS(`main figure.chart canvas`)))
	var drawn []string
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		got, err := chromedp.Run(b.ctx, chromedp.Evaluate[[]string](`window.__drawn.map(s => s.replace(/\u00a0/g, " "))`))
		if err != nil {
			b.t.Fatalf("read the chart's texts: %v", err)
		}
		if drawn = got; len(drawn) > 4 {
			break
		}
	}
	return drawn
}

var dayTickRe = regexp.MustCompile(`^\d{1,2}/\d{1,2}$`)

// dayTicks are the texts among drawn that read as a day: "27/11", "11/27".
func dayTicks(drawn []string) []string {
	var ticks []string
	for _, s := range drawn {
		if dayTickRe.MatchString(s) {
			ticks = append(ticks, s)
		}
	}
	return ticks
}

// TestBrowserChartAndFiguresInLanguage: in Chromium, the overview's chart
// of a merchant with history labels its days as the dashboard writes a day
// in the page's language, two digits each (27/11 and 01/12 in Portuguese,
// 11/27 and 12/01 in English), its money axis
// as reais (R$ 1.000,00 or R$1,000.00), and a campaign's fixed reward
// typed as 9,79 is listed as R$ 9,79 (R$9.79 in English); counts are
// grouped (1.300 members, 1,300).
func TestBrowserChartAndFiguresInLanguage(t *testing.T) {
	e := newEnv(t)
	now := e.clock.Now()
	testenv.MustSeedScale(t, e.deps.Pool, testenv.Scale{Members: 1300, Referrals: 12000, Days: 10, Now: now, Box: e.deps.Box})
	b := newBrowser(t, e)
	if status := b.signIn(testenv.DashboardEmail, "pw"); status != 200 {
		t.Fatalf("sign in: %d", status)
	}
	if _, err := chromedp.Call(b.ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: drawnTextJS}); err != nil {
		t.Fatal(err)
	}
	zone, err := report.LoadZone("")
	if err != nil {
		t.Fatal(err)
	}
	// The ten days up to today in the merchant's zone, as each language
	// writes a day on the axis: dd/mm and mm/dd, always two digits.
	first := now.In(zone).AddDate(0, 0, -9)
	var pt, en []string
	for d := range 10 {
		day := first.AddDate(0, 0, d)
		pt = append(pt, day.Format("02/01"))
		en = append(en, day.Format("01/02"))
	}
	chart := "/dashboard?range=custom&from=" + first.Format(time.DateOnly) + "&to=" + now.In(zone).Format(time.DateOnly)

	for _, tc := range []struct {
		lang, button   string
		days           []string
		money          *regexp.Regexp
		reward, counts string
	}{
		{"pt-BR", "Português", pt, regexp.MustCompile(`^R\$ \d{1,3}(\.\d{3})*,\d{2}$`), "R$ 9,79", "1.300"},
		{"en", "English", en, regexp.MustCompile(`^R\$\d{1,3}(,\d{3})*\.\d{2}$`), "R$9.79", "1,300"},
	} {
		b.open("/dashboard/settings/password")
		b.submit(tc.button, chromedp.Click(button(tc.button)))

		ticks := dayTicks(b.chartTexts(chart))
		if len(ticks) < 3 {
			t.Errorf("%s: the chart's time axis drew %v, want at least 3 days like %s", tc.lang, ticks, tc.days[len(tc.days)-1])
		}
		for _, tick := range ticks {
			if !slices.Contains(tc.days, tick) {
				t.Errorf("%s: the axis labels a day %q; the range's days read %v", tc.lang, tick, tc.days)
			}
		}
		var amounts []string
		for _, s := range b.chartTexts(chart + "&metric=referred_revenue") {
			if strings.HasPrefix(s, "R$") {
				amounts = append(amounts, s)
			}
		}
		if len(amounts) < 2 {
			t.Errorf("%s: the money axis drew %v, want amounts in reais", tc.lang, amounts)
		}
		for _, a := range amounts {
			if !tc.money.MatchString(a) {
				t.Errorf("%s: the money axis reads %q, want like %s", tc.lang, a, tc.money)
			}
		}
		testenv.Screenshot(t, b.ctx, "overview-chart-"+tc.lang)

		b.open("/dashboard/members")
		if got := text(b, chromedp.CSS(`nav.tabs li:first-child .count`)); got != tc.counts {
			t.Errorf("%s: the members' tab counts %q, want %q", tc.lang, got, tc.counts)
		}
	}

	// A fixed reward typed the Portuguese way, listed in each language.
	b.open("/dashboard/campaigns/new")
	b.submit("Português", chromedp.Click(button("Português")))
	b.do("fill the campaign", chromedp.SendKeys(field("Nome"), "Fixa"), chromedp.SetValue(field("Tipo de recompensa"), "fixed"),
		chromedp.SendKeys(field("Valor da recompensa"), "9,79"))
	b.submit("create", chromedp.Click(button("Criar campanha")))
	fixed := chromedp.Search(`//tr[td/a[normalize-space(.)="Fixa"]]/td[@data-testid="reward"]`)
	if got := text(b, fixed); got != "R$ 9,79" {
		t.Errorf("pt-BR: the campaign's reward reads %q, want R$ 9,79", got)
	}
	b.submit("English", chromedp.Click(button("English")))
	if got := text(b, fixed); got != "R$9.79" {
		t.Errorf("en: the campaign's reward reads %q, want R$9.79", got)
	}
}
