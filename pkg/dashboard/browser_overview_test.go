package dashboard_test

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/google/uuid"

	"github.com/convida/convida/pkg/dashboard"
	"github.com/convida/convida/pkg/ledger"
	"github.com/convida/convida/pkg/member"
	"github.com/convida/convida/pkg/postgres"
	"github.com/convida/convida/pkg/report"
	"github.com/convida/convida/pkg/testenv"
)

// history gives the demo merchant a campaign (R$ 9,79 a sale), two
// members and six sales made today through the real ledger store: one
// still pending, three released, one refunded before its release
// (cancelled) and one refunded after it (reversed). It returns the
// members.
func (e *env) history() []uuid.UUID {
	e.t.Helper()
	ctx := context.Background()
	merchantID := uuid.MustParse(e.demo.MerchantID)
	c := testenv.MustCampaign(e.t, e.deps.Pool, merchantID, testenv.FixedCampaign(979, 7))
	var members []uuid.UUID
	for _, email := range []string{"ana@example.com", "bia@example.com"} {
		m := &member.Member{MerchantID: merchantID, Email: email, Name: strings.ToUpper(email[:1]) + email[1:3], CampaignID: c.ID}
		if err := postgres.NewMemberStore(e.deps.Pool).CreateMember(ctx, m, "DEMO"); err != nil {
			e.t.Fatal(err)
		}
		members = append(members, m.ID)
	}
	store := postgres.NewLedgerStore(e.deps.Pool, e.clock.Now)
	apply := func(memberID uuid.UUID, cmd ledger.Command) {
		e.t.Helper()
		cmd.ID, cmd.MerchantID, cmd.MemberID = "cmd-"+uuid.NewString(), merchantID, memberID
		if cmd.IssuedAt.IsZero() {
			cmd.IssuedAt = e.clock.Now()
		}
		book, err := store.ApplyBatch(ctx, []ledger.Command{cmd})
		if err != nil || len(book.Outcomes) != 1 || book.Outcomes[0].Status != ledger.OutcomeApplied {
			e.t.Fatalf("%s: %v %+v", cmd.Type, err, book)
		}
	}
	sale := func(order string) *ledger.Sale {
		return &ledger.Sale{Source: "guru", OrderID: order, Amount: 9790, Currency: "BRL", BuyerEmail: order + "@buyer.example", PaidAt: e.clock.Now()}
	}
	orders := map[string]uuid.UUID{"pending": members[0], "released": members[0], "cancelled": members[0], "reversed": members[0],
		"bia-1": members[1], "bia-2": members[1]}
	for order, m := range orders {
		apply(m, ledger.Command{Type: ledger.CmdCreditSale, Sale: sale(order)})
	}
	apply(members[0], ledger.Command{Type: ledger.CmdRefund, Sale: sale("cancelled")})
	for _, order := range []string{"released", "reversed", "bia-1", "bia-2"} {
		var id uuid.UUID
		if err := e.deps.Pool.QueryRow(ctx, `SELECT id FROM referrals WHERE merchant_id = $1 AND order_id = $2`,
			merchantID, order).Scan(&id); err != nil {
			e.t.Fatal(err)
		}
		// After the 7-day warranty.
		apply(orders[order], ledger.Command{Type: ledger.CmdRelease, ReferralID: id, IssuedAt: e.clock.Now().AddDate(0, 0, 8)})
	}
	apply(members[0], ledger.Command{Type: ledger.CmdRefund, Sale: sale("reversed")})
	return members
}

// connectGuru saves Guru's account token as the owner does on the
// integrations page: the guided start's first step.
func (e *env) connectGuru() {
	e.t.Helper()
	if r := e.do(e.owner(), http.MethodPost, "/dashboard/integrations/guru", url.Values{"account_token": {"guru-token-1"}}); r.StatusCode != http.StatusSeeOther {
		e.t.Fatalf("save Guru's token: %d: %s", r.StatusCode, r.body)
	}
}

// cards reads the overview's KPI cards: each card's title and figure.
func (b *browser) cards() map[string]string {
	b.t.Helper()
	pairs, err := chromedp.Run(b.ctx, chromedp.Evaluate[[][]string](`[...document.querySelectorAll(".kpis > div")].map(d =>
  [d.querySelector("dt").textContent.trim(), d.querySelector("dd").textContent.trim()])`))
	if err != nil {
		b.t.Fatal(err)
	}
	out := map[string]string{}
	for _, p := range pairs {
		out[p[0]] = p[1]
	}
	return out
}

// gridRows counts the KPI cards on each row of the grid, by the top of
// their boxes, at a window width.
func (b *browser) gridRows(width int64) []int {
	b.t.Helper()
	b.do("resize", chromedp.EmulateViewport(width, 900), chromedp.Reload())
	rows, err := chromedp.Run(b.ctx, chromedp.Evaluate[[]int](`(() => {
  const rows = new Map();
  for (const d of document.querySelectorAll(".kpis > div")) {
    const top = Math.round(d.getBoundingClientRect().top);
    rows.set(top, (rows.get(top) || 0) + 1);
  }
  return [...rows.entries()].sort((a, b) => a[0] - b[0]).map(e => e[1]);
})()`))
	if err != nil {
		b.t.Fatal(err)
	}
	return rows
}

// TestBrowserOverviewTellsTheTruth: after sales, releases and refunds
// before and after release, the overview's cards show what the ledger
// holds for the referrals of the range: released net of the reversal,
// the reversed and the cancelled reward each on its own card, the pending
// one as the wallets hold it; in English and in Portuguese; and the grid
// of cards has full rows at 1280 and at 375 pixels.
func TestBrowserOverviewTellsTheTruth(t *testing.T) {
	e := newEnv(t)
	e.connectGuru()
	e.history()
	zone, err := report.LoadZone("")
	if err != nil {
		t.Fatal(err)
	}
	rng, err := report.LastDays(e.clock.Now(), 30, zone)
	if err != nil {
		t.Fatal(err)
	}
	var credited, released, reversed, cancelled, pending int64
	if err := e.deps.Pool.QueryRow(context.Background(), `SELECT
  COALESCE(sum(e.amount) FILTER (WHERE e.type = 'credit'), 0),
  COALESCE(sum(e.amount) FILTER (WHERE e.type = 'release'), 0) - COALESCE(sum(e.amount) FILTER (WHERE e.type = 'adjustment'), 0),
  COALESCE(sum(e.amount) FILTER (WHERE e.type = 'adjustment'), 0),
  COALESCE(sum(e.amount) FILTER (WHERE e.type = 'cancel'), 0),
  (SELECT sum(pending) FROM wallets WHERE merchant_id = $1)
FROM ledger_entries e JOIN referrals r ON r.merchant_id = e.merchant_id AND r.id = e.reference_id
WHERE e.merchant_id = $1 AND r.created_at >= $2 AND r.created_at < $3`, uuid.MustParse(e.demo.MerchantID), rng.From, rng.To).
		Scan(&credited, &released, &reversed, &cancelled, &pending); err != nil {
		t.Fatal(err)
	}
	if credited != 6*979 || released != 3*979 || reversed != 979 || cancelled != 979 || pending != 979 {
		t.Fatalf("the ledger holds credited %d, released %d, reversed %d, cancelled %d, pending %d; the history is not what this test means",
			credited, released, reversed, cancelled, pending)
	}

	b := newBrowser(t, e)
	if status := b.signIn(e.demo.DashboardEmail, e.demo.DashboardPassword); status != http.StatusOK {
		t.Fatalf("sign in: %d", status)
	}
	for _, lang := range []struct {
		lang, switchTo                                   string
		credited, released, reversed, cancelled, pending string
	}{
		{dashboard.English, "Português", "Rewards credited", "Rewards released", "Rewards reversed", "Rewards cancelled", "Pending in warranty"},
		{dashboard.Portuguese, "English", "Recompensas creditadas", "Recompensas liberadas", "Recompensas estornadas", "Recompensas canceladas", "Pendente em garantia"},
	} {
		cards := b.cards()
		for _, c := range []struct {
			card string
			want int64
		}{
			{lang.credited, credited}, {lang.released, released}, {lang.reversed, reversed},
			{lang.cancelled, cancelled}, {lang.pending, pending},
		} {
			if got, want := cards[c.card], dashboard.Money(lang.lang, c.want); got != want {
				t.Errorf("%s: the card %q shows %q, the ledger and wallets hold %s", lang.lang, c.card, got, want)
			}
		}
		for _, w := range []struct {
			width int64
			want  []int
		}{{375, []int{2, 2, 2, 2}}, {1280, []int{4, 4}}} {
			if got := b.gridRows(w.width); !slices.Equal(got, w.want) {
				t.Errorf("%s at %d px: cards per row %v, want %v", lang.lang, w.width, got, w.want)
			}
		}
		if strings.Contains(text(b, chromedp.CSS("main")), "Getting started") {
			t.Errorf("%s: the guided start is still shown once every required step is done", lang.lang)
		}
		testenv.Screenshot(t, b.ctx, "overview-"+lang.lang)
		b.submit(lang.switchTo, chromedp.Click(button(lang.switchTo)))
	}
}

// startItem is one item of the guided start as a person sees it.
type startItem struct {
	Text string `json:"text"`
	Href string `json:"href"`
	Done bool   `json:"done"`
}

// startItems reads the guided start's checklist; empty when it is not
// shown.
func (b *browser) startItems() []startItem {
	b.t.Helper()
	items, err := chromedp.Run(b.ctx, chromedp.Evaluate[[]startItem](`[...document.querySelectorAll('[data-testid="guided-start"] li')].map(li => ({
  text: li.querySelector("a").textContent.trim(), href: li.querySelector("a").getAttribute("href"),
  done: li.querySelector(".state").textContent.trim() === "done" && li.querySelector(".tick").textContent.trim() === "✓"}))`))
	if err != nil {
		b.t.Fatal(err)
	}
	return items
}

// TestBrowserGuidedStart: a new merchant's overview shows the checklist,
// every item unticked and linking to where it is done; each ticks itself
// from the data as the merchant does it, and the checklist goes once the
// required steps are done (the webhook endpoint is optional). Empty lists
// say what fills them and link there; the sign-in page carries the
// product's name and the language switch.
func TestBrowserGuidedStart(t *testing.T) {
	e := newEnv(t)
	b := newBrowser(t, e)
	b.open("/dashboard/sign-in")
	if got := text(b, chromedp.CSS("header .brand")); got != "Convida" {
		t.Errorf("the sign-in page's header shows %q, want the product's name", got)
	}
	b.submit("Português", chromedp.Click(button("Português")))
	if got := text(b, chromedp.CSS("h1")); got != "Entrar" {
		t.Errorf("after the switch the sign-in page is titled %q, want Entrar", got)
	}
	b.submit("English", chromedp.Click(button("English")))
	if status := b.signIn(e.demo.DashboardEmail, e.demo.DashboardPassword); status != http.StatusOK {
		t.Fatalf("sign in: %d", status)
	}

	steps := []startItem{
		{"Connect your sales platform", "/dashboard/integrations", false},
		{"Create a campaign", "/dashboard/campaigns/new", false},
		{"Add your first member", "/dashboard/members/new", false},
		{"Get your first sale credited", "/dashboard/referrals", false},
		{"Add a webhook endpoint", "/dashboard/webhooks", false},
	}
	if got := b.startItems(); !slices.Equal(got, steps) {
		t.Fatalf("a new merchant's checklist:\n%+v\nwant\n%+v", got, steps)
	}
	testenv.Screenshot(t, b.ctx, "overview-empty")
	for _, s := range steps {
		b.open("/dashboard")
		if status := b.submit(s.Text, chromedp.Click(link(s.Text))); status != http.StatusOK || b.location() != s.Href {
			t.Errorf("%q went to %s (%d), want %s", s.Text, b.location(), status, s.Href)
		}
	}

	// Every empty list says what fills it and links there.
	for _, l := range []struct{ page, link, href string }{
		{"/dashboard/members", "Add a member", "/dashboard/members/new"},
		{"/dashboard/referrals", "Connect a platform", "/dashboard/integrations"},
		{"/dashboard/campaigns", "Create a campaign", "/dashboard/campaigns/new"},
		{"/dashboard/creators", "Make a member a creator", "/dashboard/creators/new"},
		{"/dashboard/redemptions", "See the members' wallets", "/dashboard/members"},
		{"/dashboard/webhooks", "Add an endpoint", "#webhook-url"},
		{"/dashboard", "Connect a platform", "/dashboard/integrations"},
	} {
		b.open(l.page)
		href, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](`(() => {
  const a = [...document.querySelectorAll("main p.empty a")].find(a => a.textContent.trim() === `+"`"+l.link+"`"+`);
  return a ? a.getAttribute("href") : "";
})()`))
		if err != nil || href != l.href {
			t.Errorf("%s: the empty list's link %q goes to %q (%v), want %s", l.page, l.link, href, err, l.href)
		}
	}

	// The steps, one by one, as the merchant does them.
	e.connectGuru()
	b.open("/dashboard")
	steps[0].Done = true
	if got := b.startItems(); !slices.Equal(got, steps) {
		t.Errorf("after Guru's token:\n%+v\nwant\n%+v", got, steps)
	}
	e.history() // a campaign, members, credited sales
	b.open("/dashboard")
	if got := b.startItems(); len(got) != 0 {
		t.Errorf("with every required step done the checklist is still shown: %+v", got)
	}
}

// TestGuidedStartForAViewer: a viewer, who cannot create, sees the same
// checklist with its links to the lists rather than to the forms.
func TestGuidedStartForAViewer(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	viewer := e.viewer()
	r := e.do(viewer, http.MethodGet, "/dashboard", nil)
	for _, want := range []string{
		`<a href="/dashboard/campaigns">Create a campaign</a>`,
		`<a href="/dashboard/members">Add your first member</a>`,
		`<a href="/dashboard/integrations">Connect your sales platform</a>`,
	} {
		if r.StatusCode != http.StatusOK || !strings.Contains(r.body, want) {
			t.Errorf("a viewer's overview (%d) lacks %s", r.StatusCode, want)
		}
	}
	if strings.Contains(r.body, `href="/dashboard/members/new"`) || strings.Contains(r.body, `href="/dashboard/campaigns/new"`) {
		t.Errorf("a viewer's overview links to a form a viewer cannot use")
	}
	// The empty list of members says what fills it, without the form's link.
	r = e.do(viewer, http.MethodGet, "/dashboard/members", nil)
	if !strings.Contains(r.body, "Members are added by your store through the API, or by hand.") || strings.Contains(r.body, `href="/dashboard/members/new"`) {
		t.Errorf("a viewer's empty list of members: %s", r.body)
	}
}

// TestBrowserLongNamesKeepTheOverviewInTheWindow: a member with an e-mail
// of 120 characters without a space, a long name and a long creator name,
// among the top members, the top creators and the recent referrals, do
// not widen the overview past the window, on a phone (360 px) or a
// desktop (1280 px), in English or Portuguese: the page never scrolls
// sideways, the tables of the top members and creators fit their column
// (the whole e-mail shown, wrapped), and at 1280 px no table scrolls in
// its box either (on a phone the recent referrals' five columns may).
func TestBrowserLongNamesKeepTheOverviewInTheWindow(t *testing.T) {
	e := newEnv(t)
	e.connectGuru()
	ctx := context.Background()
	merchantID := uuid.MustParse(e.demo.MerchantID)
	c := testenv.MustCampaign(t, e.deps.Pool, merchantID, testenv.FixedCampaign(979, 7))
	email := strings.Repeat("ana.souza.da.silva.", 5) + "compras@" + strings.Repeat("loja", 6) + ".example.com"
	m := &member.Member{MerchantID: merchantID, Email: email, Name: "Anastácia" + strings.Repeat("Bernardes", 8), CampaignID: c.ID}
	if err := postgres.NewMemberStore(e.deps.Pool).CreateMember(ctx, m, "DEMO"); err != nil {
		t.Fatal(err)
	}
	if r := e.do(e.owner(), http.MethodPost, "/dashboard/creators", url.Values{"member_email": {email},
		"display_name": {strings.Repeat("Criadora", 8)}}); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("make her a creator: %d: %s", r.StatusCode, r.body)
	}
	book, err := postgres.NewLedgerStore(e.deps.Pool, e.clock.Now).ApplyBatch(ctx, []ledger.Command{{ID: "guru:long:sale",
		Type: ledger.CmdCreditSale, MerchantID: merchantID, MemberID: m.ID, IssuedAt: e.clock.Now(),
		Sale: &ledger.Sale{Source: "guru", OrderID: "long", Amount: 9790, Currency: "BRL", BuyerEmail: "b@buyer.example", PaidAt: e.clock.Now()}}})
	if err != nil || book.Outcomes[0].Status != ledger.OutcomeApplied {
		t.Fatalf("her sale: %v %+v", err, book)
	}

	b := newBrowser(t, e)
	if status := b.signIn(e.demo.DashboardEmail, e.demo.DashboardPassword); status != http.StatusOK {
		t.Fatalf("sign in: %d", status)
	}
	type layout struct {
		Page     int      `json:"page"`
		Window   int      `json:"window"`
		Past     []string `json:"past"`     // sections whose right edge is past the window
		Scrolled []string `json:"scrolled"` // tables wider than their box
		Email    bool     `json:"email"`    // her whole e-mail in a cell inside the window
	}
	for _, lang := range []struct{ name, switchTo string }{{"English", "Português"}, {"Portuguese", "English"}} {
		for _, width := range []int64{360, 1280} {
			b.do("resize", chromedp.EmulateViewport(width, 900), chromedp.Reload())
			got, err := chromedp.Run(b.ctx, chromedp.Evaluate[layout](`(email => {
  const title = el => el.closest("section").querySelector("h2").textContent.trim();
  return {
    page: document.documentElement.scrollWidth, window: innerWidth,
    past: [...document.querySelectorAll("main section")].filter(s => s.getBoundingClientRect().right > innerWidth).map(title),
    scrolled: [...document.querySelectorAll("main .scroll")].filter(d => d.scrollWidth > d.clientWidth).map(title),
    email: [...document.querySelectorAll("main td")].some(td => td.textContent.includes(email) && td.getBoundingClientRect().right <= innerWidth),
  };
})("`+email+`")`))
			if err != nil {
				t.Fatal(err)
			}
			scrolled := slices.DeleteFunc(got.Scrolled, func(s string) bool { return width < 600 && (s == "Recent referrals" || s == "Indicações recentes") })
			if got.Page > got.Window || len(got.Past) > 0 || len(scrolled) > 0 || !got.Email {
				t.Errorf("%s at %d px: the page is %d px wide in a window of %d; past the window: %v; scrolling in their box: %v; the whole e-mail shown: %v",
					lang.name, width, got.Page, got.Window, got.Past, scrolled, got.Email)
			}
		}
		b.submit(lang.switchTo, chromedp.Click(button(lang.switchTo)))
	}
}
