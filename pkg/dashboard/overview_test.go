package dashboard_test

import (
	"context"
	"encoding/csv"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/dashboard"
	"github.com/convida/convida/pkg/ids"
	"github.com/convida/convida/pkg/report"
	"github.com/convida/convida/pkg/testenv"
)

// reportsEnv is newEnv with a small history (testenv.MustSeedScale: 40
// members, 600 referrals over 100 days, their redemptions) for a second
// merchant, and a client signed in as that merchant's owner.
type reportsEnv struct {
	*env
	seeded testenv.ScaleSeeded
	owner  *http.Client
	zone   *time.Location
}

func newReportsEnv(t *testing.T) *reportsEnv {
	t.Helper()
	e := newEnv(t)
	seeded := testenv.MustSeedScale(t, e.deps.Pool, testenv.Scale{Members: 40, Referrals: 600, Days: 100, Now: e.clock.Now(), Box: e.deps.Box})
	c := e.client()
	e.signIn(c, testenv.DashboardEmail, "pw")
	zone, err := report.LoadZone("")
	if err != nil {
		t.Fatal(err)
	}
	return &reportsEnv{env: e, seeded: seeded, owner: c, zone: zone}
}

func (e *reportsEnv) count(query string, args ...any) int64 {
	e.t.Helper()
	var n int64
	if err := e.deps.Pool.QueryRow(context.Background(), query, args...).Scan(&n); err != nil {
		e.t.Fatal(err)
	}
	return n
}

// chartRow is one row of the overview's data table.
var chartRow = regexp.MustCompile(`<tr data-t="(\d+)" data-v="(-?\d+)"><th scope="row">([^<]+)</th><td>([^<]+)</td></tr>`)

type dayValue struct {
	day          time.Time
	value        int64
	label, shown string
}

func chartRows(t *testing.T, body string, zone *time.Location) []dayValue {
	t.Helper()
	var out []dayValue
	for _, m := range chartRow.FindAllStringSubmatch(body, -1) {
		sec, _ := strconv.ParseInt(m[1], 10, 64)
		v, _ := strconv.ParseInt(m[2], 10, 64)
		out = append(out, dayValue{time.Unix(sec, 0).In(zone), v, m[3], m[4]})
	}
	return out
}

// TestOverviewRanges: the default range is the last 30 days, each day of
// the merchant's zone one row of the chart's table whose value is what the
// database holds for that day (sales bucketed by the time Convida received
// them); 7, 90 and custom ranges; the metric selector; the figures.
func TestOverviewRanges(t *testing.T) {
	t.Parallel()
	e := newReportsEnv(t)
	id := e.seeded.Merchant.ID
	countIn := func(from, to time.Time) int64 {
		return e.count(`SELECT count(*) FROM referrals WHERE merchant_id = $1 AND created_at >= $2 AND created_at < $3`, id, from, to)
	}

	r := e.do(e.owner, http.MethodGet, "/dashboard", nil)
	if r.StatusCode != http.StatusOK {
		t.Fatalf("GET /dashboard: %d: %s", r.StatusCode, r.body)
	}
	rows := chartRows(t, r.body, e.zone)
	if len(rows) != 30 {
		t.Fatalf("the default range shows %d days, want 30", len(rows))
	}
	y, m, d := e.clock.Now().In(e.zone).Date()
	today := time.Date(y, m, d, 0, 0, 0, 0, e.zone)
	if !rows[29].day.Equal(today) || !rows[0].day.Equal(today.AddDate(0, 0, -29)) {
		t.Errorf("the default range runs %v – %v, want the 30 days up to today %v", rows[0].day, rows[29].day, today)
	}
	var total int64
	for _, row := range rows {
		want := countIn(row.day, row.day.AddDate(0, 0, 1))
		if row.value != want || row.shown != strconv.FormatInt(want, 10) {
			t.Errorf("%s: the table shows %s (%d), the database holds %d referrals", row.label, row.shown, row.value, want)
		}
		total += row.value
	}
	if total == 0 || !strings.Contains(r.body, "<dt>Referrals</dt><dd>"+dashboard.FormatCount(dashboard.English, total)+"</dd>") {
		t.Errorf("the Referrals card does not show the %d referrals of the 30 days", total)
	}
	if !strings.Contains(r.body, `<figure class="chart" aria-label="Referrals per day, `) || !strings.Contains(r.body, "<caption>Referrals per day") {
		t.Errorf("no labelled figure with a captioned table")
	}
	if !strings.Contains(r.body, `href="/dashboard/members/`+e.seeded.Members[0].String()+`"`) {
		t.Errorf("the top member (the seed's first) is not linked among the top members")
	}

	for _, n := range []int{7, 90} {
		r := e.do(e.owner, http.MethodGet, "/dashboard?range="+strconv.Itoa(n), nil)
		rows := chartRows(t, r.body, e.zone)
		if r.StatusCode != http.StatusOK || len(rows) != n || !rows[n-1].day.Equal(today) {
			t.Errorf("range=%d: %d, %d days", n, r.StatusCode, len(rows))
		}
		if !strings.Contains(r.body, `aria-current="page">`+strconv.Itoa(n)+` days<`) {
			t.Errorf("range=%d: its link is not marked current", n)
		}
	}

	// A custom range of three days, with the referred revenue: money.
	from := today.AddDate(0, 0, -12)
	q := url.Values{"from": {from.Format(time.DateOnly)}, "to": {from.AddDate(0, 0, 2).Format(time.DateOnly)}, "metric": {"referred_revenue"}}
	r = e.do(e.owner, http.MethodGet, "/dashboard?"+q.Encode(), nil)
	rows = chartRows(t, r.body, e.zone)
	if r.StatusCode != http.StatusOK || len(rows) != 3 || !rows[0].day.Equal(from) {
		t.Fatalf("custom range: %d, %d days from %v", r.StatusCode, len(rows), rows)
	}
	for _, row := range rows {
		want := e.count(`SELECT COALESCE(sum(order_value), 0) FROM referrals WHERE merchant_id = $1 AND created_at >= $2 AND created_at < $3
  AND status IN ('pending', 'approved')`, id, row.day, row.day.AddDate(0, 0, 1))
		if row.value != want || !strings.HasPrefix(row.shown, "R$") {
			t.Errorf("%s: revenue shown %s (%d), the database sums %d", row.label, row.shown, row.value, want)
		}
	}
	if !strings.Contains(r.body, `value="`+from.Format(time.DateOnly)+`"`) || !strings.Contains(r.body, `<option value="referred_revenue" selected>`) {
		t.Errorf("the custom range's inputs or the metric selector do not keep the request's values")
	}

	// Portuguese: the same page in the chosen language's money format.
	pt := e.do(e.owner, http.MethodGet, "/dashboard?"+q.Encode(), nil, "Accept-Language", "pt-BR")
	if !strings.Contains(pt.body, "Receita indicada por dia") || !regexp.MustCompile(`<td>R\$ \d{1,3}(\.\d{3})*,\d\d</td>`).MatchString(pt.body) {
		t.Errorf("the Portuguese overview does not show money as R$ 1.234,56")
	}

	for _, bad := range []string{"range=12", "metric=revenue", "from=2026-13-01&to=2026-12-01", "from=2026-11-10&to=2026-11-01",
		"range=custom", "from=2024-01-01&to=2026-01-01"} {
		if r := e.do(e.owner, http.MethodGet, "/dashboard?"+bad, nil); r.StatusCode != http.StatusBadRequest || !strings.Contains(r.body, `role="alert"`) {
			t.Errorf("GET /dashboard?%s: %d, want 400 with an alert", bad, r.StatusCode)
		}
	}
}

// TestOverviewToDo: the to-do box of the scale seed's merchant (Kiwify
// saved without its webhook token, one failing webhook endpoint,
// referrals held for review) links to where each is dealt with, and is
// current even while the overview's figures are served from its cache. A
// platform the merchant does not use is never called refusing sales.
func TestOverviewToDo(t *testing.T) {
	t.Parallel()
	e := newReportsEnv(t)
	id := e.seeded.Merchant.ID
	// A first view fills the overview's cache: the to-do must not come
	// from it, so the referrals flagged after it show at once.
	before := e.do(e.owner, http.MethodGet, "/dashboard?range=7", nil)
	if strings.Contains(before.body, "waiting for review:") {
		t.Fatalf("referrals waiting for review before any was flagged")
	}
	if _, err := e.deps.Pool.Exec(context.Background(), `UPDATE referrals SET review_required = true
  WHERE id IN (SELECT id FROM referrals WHERE merchant_id = $1 AND status = 'pending' LIMIT 3)`, id); err != nil {
		t.Fatal(err)
	}
	// Kiwify's checkout link saved, its webhook token not: its sales are
	// refused.
	if _, err := e.deps.Pool.Exec(context.Background(), `INSERT INTO integration_settings (merchant_id, provider, checkout_url)
VALUES ($1, 'kiwify', 'https://pay.kiwify.com.br/AbC123x')`, id); err != nil {
		t.Fatal(err)
	}
	r := e.do(e.owner, http.MethodGet, "/dashboard?range=7", nil)
	failing := e.count(`SELECT count(*) FROM webhook_endpoints WHERE merchant_id = $1 AND is_active AND failing_since IS NOT NULL`, id)
	for _, want := range []string{
		`<a href="/dashboard/integrations">Kiwify: its webhook credential is not saved, so its sales are refused.`,
		`<a href="/dashboard/webhooks">Webhook endpoints failing: ` + strconv.FormatInt(failing, 10) + `</a>`,
		`<a href="/dashboard/referrals?review_required=true">Referrals waiting for review: 3</a>`,
	} {
		if !strings.Contains(r.body, want) {
			t.Errorf("the to-do box lacks %s", want)
		}
	}
	for _, unused := range []string{"Guru:", "Yampi:", "Hotmart:"} {
		if strings.Contains(r.body, `<a href="/dashboard/integrations">`+unused) {
			t.Errorf("the to-do box names %s: configured or not used by this merchant", unused)
		}
	}
	// The demo merchant has nothing configured and nothing to review: no
	// platform is said to refuse its sales; the guided start asks for one.
	demo := e.do(e.env.owner(), http.MethodGet, "/dashboard", nil)
	if strings.Contains(demo.body, "sales are refused") || strings.Contains(demo.body, "waiting for review:") ||
		!strings.Contains(demo.body, "No referrals yet.") || len(chartRows(t, demo.body, e.zone)) != 30 {
		t.Errorf("the demo merchant's overview: want no platform refusing, no review, no referrals, 30 empty days")
	}
}

// TestRedemptionsPage: the tabs count every status, a tab and the filters
// (member by email or id, dates) select what the database holds, the
// export has the filter's rows, another merchant's member is not found.
func TestRedemptionsPage(t *testing.T) {
	t.Parallel()
	e := newReportsEnv(t)
	id := e.seeded.Merchant.ID
	r := e.do(e.owner, http.MethodGet, "/dashboard/redemptions", nil)
	if r.StatusCode != http.StatusOK {
		t.Fatalf("GET /dashboard/redemptions: %d: %s", r.StatusCode, r.body)
	}
	for status, label := range map[string]string{"pending": "Pending", "completed": "Completed", "failed": "Failed"} {
		n := e.count(`SELECT count(*) FROM redemptions WHERE merchant_id = $1 AND status = $2`, id, status)
		if !strings.Contains(r.body, `>`+label+` <span class="count">`+strconv.FormatInt(n, 10)+`</span>`) {
			t.Errorf("the %s tab does not count %d", status, n)
		}
	}
	all := e.count(`SELECT count(*) FROM redemptions WHERE merchant_id = $1`, id)
	if all == 0 || !strings.Contains(r.body, `>All <span class="count">`+strconv.FormatInt(all, 10)+`</span>`) {
		t.Errorf("the All tab does not count the %d redemptions", all)
	}
	rowsOf := func(body string) int { return strings.Count(body, `<td><span class="status status-`) }
	if got, want := rowsOf(r.body), min(int(all), 50); got != want {
		t.Errorf("the first page shows %d redemptions, want %d", got, want)
	}

	failed := e.do(e.owner, http.MethodGet, "/dashboard/redemptions?status=failed", nil)
	nFailed := e.count(`SELECT count(*) FROM redemptions WHERE merchant_id = $1 AND status = 'failed'`, id)
	if got := strings.Count(failed.body, `<span class="status status-failed">`); nFailed == 0 || got != min(int(nFailed), 50) ||
		rowsOf(failed.body) != got || !strings.Contains(failed.body, "Failed: ") {
		t.Errorf("the failed tab shows %d failed of %d rows, want %d with their reason", got, rowsOf(failed.body), nFailed)
	}

	// The member filter, by email and by id, and the dates.
	var email, name string
	var memberID string
	var day time.Time
	if err := e.deps.Pool.QueryRow(context.Background(), `SELECT m.email, m.name, m.id::text, d.created_at FROM redemptions d
  JOIN members m ON m.id = d.member_id WHERE d.merchant_id = $1 ORDER BY d.created_at DESC LIMIT 1`, id).Scan(&email, &name, &memberID, &day); err != nil {
		t.Fatal(err)
	}
	nOfMember := e.count(`SELECT count(*) FROM redemptions WHERE merchant_id = $1 AND member_id = $2`, id, memberID)
	for _, who := range []string{email, strings.ToUpper(email), memberID, ids.Format(ids.Member, uuid.MustParse(memberID))} {
		r := e.do(e.owner, http.MethodGet, "/dashboard/redemptions?member="+url.QueryEscape(who), nil)
		if r.StatusCode != http.StatusOK || rowsOf(r.body) != int(nOfMember) || strings.Count(r.body, ">"+name+"</a>") != int(nOfMember) ||
			!strings.Contains(r.body, "Redemptions of "+name) {
			t.Errorf("member=%s: %d, %d rows, want the member's %d", who, r.StatusCode, rowsOf(r.body), nOfMember)
		}
	}
	d := day.In(e.zone).Format(time.DateOnly)
	dayStart, _ := time.ParseInLocation(time.DateOnly, d, e.zone)
	nOfDay := e.count(`SELECT count(*) FROM redemptions WHERE merchant_id = $1 AND created_at >= $2 AND created_at < $3`, id, dayStart, dayStart.AddDate(0, 0, 1))
	if r := e.do(e.owner, http.MethodGet, "/dashboard/redemptions?from="+d+"&to="+d, nil); rowsOf(r.body) != min(int(nOfDay), 50) || nOfDay == 0 {
		t.Errorf("from=to=%s: %d rows, want %d", d, rowsOf(r.body), nOfDay)
	}
	unknown := e.do(e.owner, http.MethodGet, "/dashboard/redemptions?member=nobody@example.com", nil)
	if unknown.StatusCode != http.StatusOK || !strings.Contains(unknown.body, `role="alert" class="alert">No member has this email.`) || rowsOf(unknown.body) != 0 {
		t.Errorf("an unknown email: %d, want the page with an alert and no rows", unknown.StatusCode)
	}
	for _, bad := range []string{"status=done", "from=yesterday", "to=2026-02-30"} {
		if r := e.do(e.owner, http.MethodGet, "/dashboard/redemptions?"+bad, nil); r.StatusCode != http.StatusBadRequest {
			t.Errorf("?%s: %d, want 400", bad, r.StatusCode)
		}
	}
	// Another merchant's member: not found, as a missing one.
	if r := e.do(e.env.owner(), http.MethodGet, "/dashboard/redemptions?member="+memberID, nil); r.StatusCode != http.StatusNotFound {
		t.Errorf("the demo merchant filtering by the seeded merchant's member: %d, want 404", r.StatusCode)
	}
	if r := e.do(e.env.owner(), http.MethodGet, "/dashboard/redemptions", nil); rowsOf(r.body) != 0 || !strings.Contains(r.body, "No redemptions match.") {
		t.Errorf("the demo merchant sees another merchant's redemptions")
	}

	// The export: the failed tab of the filter, every row, a header.
	exp := e.do(e.owner, http.MethodGet, "/dashboard/redemptions?status=failed&format=csv", nil)
	if exp.StatusCode != http.StatusOK || !strings.HasPrefix(exp.Header.Get("Content-Type"), "text/csv") {
		t.Fatalf("export: %d %s", exp.StatusCode, exp.Header.Get("Content-Type"))
	}
	records, err := csv.NewReader(strings.NewReader(exp.body)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(records) != int(nFailed)+1 || records[0][0] != "id" || records[1][7] != "failed" || records[1][12] == "" {
		t.Errorf("export of the failed: %d lines, first %v; want a header and %d failed rows with their reason", len(records), records[:min(2, len(records))], nFailed)
	}
	if !strings.Contains(failed.body, `href="/dashboard/redemptions?format=csv&amp;status=failed"`) {
		t.Errorf("the failed tab's export link does not keep the filter")
	}

	// A failed redemption's page, linked from the list: what the platform
	// said; another merchant's user and a malformed id find nothing.
	var redID, reason, owner string
	if err := e.deps.Pool.QueryRow(context.Background(), `SELECT d.id::text, d.failure_reason, m.name FROM redemptions d
  JOIN members m ON m.id = d.member_id WHERE d.merchant_id = $1 AND d.status = 'failed' ORDER BY d.created_at DESC, d.id DESC LIMIT 1`, id).
		Scan(&redID, &reason, &owner); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(failed.body, `href="/dashboard/redemptions/`+redID+`"`) {
		t.Errorf("the failed tab does not link to the newest failed redemption's page")
	}
	for _, path := range []string{"/dashboard/redemptions/" + redID, "/dashboard/redemptions/" + ids.Format(ids.Redemption, uuid.MustParse(redID))} {
		one := e.do(e.owner, http.MethodGet, path, nil)
		if one.StatusCode != http.StatusOK || reason == "" || !strings.Contains(one.body, html.EscapeString(reason)) || !strings.Contains(one.body, ">"+owner+"</a>") {
			t.Errorf("the failed redemption's page %s: %d, want its reason %q and member %s", path, one.StatusCode, reason, owner)
		}
	}
	// A viewer sees both pages (nothing here changes anything).
	viewer := e.env.viewer()
	for _, path := range []string{"/dashboard", "/dashboard/redemptions"} {
		if r := e.do(viewer, http.MethodGet, path, nil); r.StatusCode != http.StatusOK {
			t.Errorf("a viewer's GET %s: %d, want 200", path, r.StatusCode)
		}
	}
	for _, path := range []string{"/dashboard/redemptions/" + redID, "/dashboard/redemptions/not-an-id"} {
		if r := e.do(e.env.owner(), http.MethodGet, path, nil); r.StatusCode != http.StatusNotFound {
			t.Errorf("the demo merchant's GET %s: %d, want 404", path, r.StatusCode)
		}
	}
}
