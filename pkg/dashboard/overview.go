package dashboard

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/referral"
	"github.com/convida/convida/pkg/report"
)

// Overview: the KPI figures of a range of days, one daily series chosen by
// a metric selector (a uPlot chart drawn from the page's own table), the
// top members and creators, the recent referrals and the to-do box.

// OverviewReads answers the overview (postgres.OverviewReads).
type OverviewReads interface {
	Overview(ctx context.Context, merchantID uuid.UUID, r report.Range, metric report.Metric) (*report.Overview, error)
	Series(ctx context.Context, merchantID uuid.UUID, r report.Range, metric report.Metric) ([]report.Point, error)
	Current(ctx context.Context, merchantID uuid.UUID) ([]referral.Listed, report.ToDo, error)
}

// The overview's ranges: the last n days, or custom dates.
var overviewRanges = []int{7, 30, 90}

const (
	defaultOverviewDays = 30
	rangeCustom         = "custom"
)

type overviewData struct {
	*report.Overview
	// RangeKey is "7", "30", "90" or "custom"; RangeLinks the range
	// choices, each keeping the metric.
	RangeKey   string
	RangeLinks []rangeLink
	// From and To are the range's first and last days as the custom
	// inputs show them (YYYY-MM-DD).
	From, To string
	// FirstDay and LastDay are the same days as the reader reads them.
	FirstDay, LastDay string
	Metrics           []metricOption
	Rows              []seriesRow
	// Total is the sum of the series.
	Total int64
	// Zone names the merchant's zone, for the chart's time axis.
	Zone string
	// Counts are the referral counts of the figures ("total" and each
	// status) as the language writes numbers.
	Counts map[string]string
	// Steps are the guided start's checklist, nil once its required
	// steps are done.
	Steps []startStep
}

// startStep is one item of the guided start: its text's key
// ("overview.start.<Key>"), where it is done and whether it is.
type startStep struct {
	Key      string
	Href     string
	Done     bool
	Optional bool
}

// startSteps is the checklist of s, in the order a merchant does them,
// each linking to the page where it is done (a viewer, who cannot create,
// to the list instead); nil when every required step is done.
func startSteps(s report.Start, owner bool) []startStep {
	if s.Done() {
		return nil
	}
	create := func(list, form string) string {
		if owner {
			return form
		}
		return list
	}
	return []startStep{
		{Key: "platform", Href: Prefix + "/integrations", Done: s.PlatformConnected},
		{Key: "campaign", Href: create(Prefix+"/campaigns", Prefix+"/campaigns/new"), Done: s.CampaignCreated},
		{Key: "member", Href: create(Prefix+"/members", Prefix+"/members/new"), Done: s.FirstMember},
		{Key: "sale", Href: Prefix + "/referrals", Done: s.FirstSaleCredited},
		{Key: "webhook", Href: Prefix + "/webhooks", Done: s.WebhookEndpoint, Optional: true},
	}
}

type rangeLink struct {
	Days    int
	URL     string
	Current bool
}

type metricOption struct {
	Value    string
	Selected bool
}

// seriesRow is one day of the chart's table: the day as the reader sees it,
// and for the chart its midnight (Unix seconds) and raw value.
type seriesRow struct {
	Label string
	Unix  int64
	Value int64
}

// FormatCount writes n with the language's thousands separator ("24,843"
// or "24.843").
func FormatCount(lang string, n int64) string {
	sep := ","
	if lang == Portuguese {
		sep = "."
	}
	digits := strconv.FormatInt(n, 10)
	sign := ""
	if n < 0 {
		sign, digits = "-", digits[1:]
	}
	var b strings.Builder
	for i := range len(digits) {
		if i > 0 && (len(digits)-i)%3 == 0 {
			b.WriteString(sep)
		}
		b.WriteByte(digits[i])
	}
	return sign + b.String()
}

// FormatDay writes a calendar day the way lang writes one ("25/11/2026" or
// "11/25/2026"); day is already in the zone it belongs to.
func FormatDay(lang string, day time.Time) string { return day.Format(dayLayout(lang)) }

func (d *Dashboard) overviewRoutes() {
	d.page("GET "+Prefix+"/{$}", d.overview)
	d.page("GET "+Prefix, d.overview)
}

// overviewQuery is the range and metric a request asks for: ?range=7|30|90
// (30 by default), or ?range=custom (implied by from/to) with ?from= and
// ?to= as YYYY-MM-DD days in the merchant's zone; ?metric= one of
// report.Metrics. Anything else is apperr.Invalid (a 400 page).
func overviewQuery(q url.Values, now time.Time, zone *time.Location) (report.Range, string, report.Metric, error) {
	metric, err := report.ParseMetric(q.Get("metric"))
	if err != nil {
		return report.Range{}, "", "", err
	}
	key := q.Get("range")
	if key == "" && (q.Get("from") != "" || q.Get("to") != "") {
		key = rangeCustom
	}
	if key == "" {
		key = strconv.Itoa(defaultOverviewDays)
	}
	if key == rangeCustom {
		r, err := report.Days(q.Get("from"), q.Get("to"), zone)
		return r, key, metric, err
	}
	for _, n := range overviewRanges {
		if key == strconv.Itoa(n) {
			r, err := report.LastDays(now, n, zone)
			return r, key, metric, err
		}
	}
	return report.Range{}, "", "", apperr.Invalidf("range", apperr.RuleNotAllowed, "7, 30, 90 or custom")
}

func (d *Dashboard) overview(w http.ResponseWriter, r *http.Request, c *Ctx) {
	rng, key, metric, err := overviewQuery(r.URL.Query(), d.now(), c.Loc)
	if err != nil {
		d.fail(w, r, c, err)
		return
	}
	o, err := d.overviews.get(r.Context(), d.cfg.Stores.Overview, c.MerchantID(), rng, metric, d.now())
	if err != nil {
		d.fail(w, r, c, err)
		return
	}
	data := overviewData{Overview: o, RangeKey: key, Zone: c.Loc.String(),
		From:     rng.From.In(rng.Zone).Format(time.DateOnly),
		To:       rng.To.In(rng.Zone).AddDate(0, 0, -1).Format(time.DateOnly),
		FirstDay: FormatDay(c.Lang, rng.From.In(rng.Zone)),
		LastDay:  FormatDay(c.Lang, rng.To.In(rng.Zone).AddDate(0, 0, -1))}
	for _, n := range overviewRanges {
		q := url.Values{"range": {strconv.Itoa(n)}}
		if metric != report.MetricReferrals {
			q.Set("metric", string(metric))
		}
		data.RangeLinks = append(data.RangeLinks, rangeLink{Days: n, URL: Prefix + "?" + q.Encode(), Current: key == strconv.Itoa(n)})
	}
	data.Steps = startSteps(o.ToDo.Start, c.IsOwner())
	data.Counts = map[string]string{"total": FormatCount(c.Lang, o.Figures.ReferralsTotal)}
	for status, n := range o.Figures.Referrals {
		data.Counts[status] = FormatCount(c.Lang, n)
	}
	for _, m := range report.Metrics {
		data.Metrics = append(data.Metrics, metricOption{Value: string(m), Selected: m == metric})
	}
	for _, p := range o.Series {
		data.Rows = append(data.Rows, seriesRow{Label: FormatDay(c.Lang, p.Day), Unix: p.Day.Unix(), Value: p.Value})
		data.Total += p.Value
	}
	d.render(w, r, c, Page{Template: "overview", Title: "overview.title", Nav: "overview", Data: data})
}

// overviewCache keeps each merchant's overview of a range for a short
// while, and the series of each metric asked for beside it: the 90-day
// overview reads ~75,000 referrals at 10,000 members (50–190 ms depending
// on the machine's load, docs/benchmarks.md), and a merchant switching the
// chart's metric or coming back to the page within overviewTTL should not
// pay it again. A switch of metric on a cached range costs only its
// series. The figures, series and top lists are at most overviewTTL old
// (the overview is a report, not a balance); the recent referrals and the
// to-do are read afresh each time (OverviewReads.Current, a few ms), so a
// referral just reviewed leaves the to-do at once.
type overviewCache struct {
	mu      sync.Mutex
	entries map[overviewKey]*overviewEntry
}

type overviewKey struct {
	merchant uuid.UUID
	from, to int64
}

type overviewEntry struct {
	at       time.Time
	overview report.Overview // the metric-independent parts
	series   map[report.Metric][]report.Point
}

const (
	overviewTTL = 30 * time.Second
	// overviewCacheMax bounds the cache: past it, expired entries are
	// dropped, then everything (a custom range per request cannot grow
	// the process).
	overviewCacheMax = 1000
)

// get returns the overview of merchant, rng and metric, from the cache
// when it is younger than overviewTTL.
func (oc *overviewCache) get(ctx context.Context, reads OverviewReads, merchant uuid.UUID, rng report.Range,
	metric report.Metric, now time.Time) (*report.Overview, error) {
	key := overviewKey{merchant, rng.From.Unix(), rng.To.Unix()}
	oc.mu.Lock()
	e, ok := oc.entries[key]
	var series []report.Point
	if ok && now.Sub(e.at) < overviewTTL {
		series, ok = e.series[metric]
		o := e.overview
		oc.mu.Unlock()
		if !ok {
			var err error
			if series, err = reads.Series(ctx, merchant, rng, metric); err != nil {
				return nil, err
			}
			oc.mu.Lock()
			e.series[metric] = series
			oc.mu.Unlock()
		}
		recent, todo, err := reads.Current(ctx, merchant)
		if err != nil {
			return nil, err
		}
		o.Range, o.Metric, o.Series, o.Recent, o.ToDo = rng, metric, series, recent, todo
		return &o, nil
	}
	oc.mu.Unlock()
	o, err := reads.Overview(ctx, merchant, rng, metric)
	if err != nil {
		return nil, err
	}
	oc.mu.Lock()
	defer oc.mu.Unlock()
	if oc.entries == nil || len(oc.entries) >= overviewCacheMax {
		oc.prune(now)
	}
	oc.entries[key] = &overviewEntry{at: now, overview: *o, series: map[report.Metric][]report.Point{o.Metric: o.Series}}
	return o, nil
}

// prune drops the expired entries, or every entry if none had expired.
func (oc *overviewCache) prune(now time.Time) {
	if oc.entries == nil {
		oc.entries = map[overviewKey]*overviewEntry{}
		return
	}
	for k, e := range oc.entries {
		if now.Sub(e.at) >= overviewTTL {
			delete(oc.entries, k)
		}
	}
	if len(oc.entries) >= overviewCacheMax {
		clear(oc.entries)
	}
}
