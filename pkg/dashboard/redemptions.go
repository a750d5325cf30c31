package dashboard

import (
	"context"
	"iter"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/ids"
	"github.com/convida/convida/pkg/member"
	"github.com/convida/convida/pkg/money"
	"github.com/convida/convida/pkg/redemption"
	"github.com/convida/convida/pkg/report"
)

// Redemptions: the merchant's redemptions newest first, with status tabs
// and their counts, filters (status, member, dates), each with what the
// platform answered (the coupon code, the subscription, the failure
// reason), and the CSV export of the filter.

// RedemptionReads lists and exports redemptions (postgres.RedemptionReads).
type RedemptionReads interface {
	RedemptionsPage(ctx context.Context, merchantID uuid.UUID, f redemption.Filter) ([]redemption.Listed, report.Tabs, error)
	RedemptionRows(ctx context.Context, merchantID uuid.UUID, f redemption.Filter) iter.Seq2[redemption.Listed, error]
}

// RedemptionFinder reads one redemption of the merchant, apperr.NotFound
// for another merchant's (postgres.OutcomeStore).
type RedemptionFinder interface {
	FindRedemption(ctx context.Context, merchantID, id uuid.UUID) (*redemption.Redemption, error)
}

const redemptionsPerPage = 50

type redemptionsData struct {
	Redemptions []redemption.Listed
	Tabs        []Tab
	Pagination  Pagination
	// The filter as the form shows it.
	Status, Member, From, To string
	// MemberName is the filtered member's, when the filter names one.
	MemberName string
	// Alert is a catalogue key: the filter names no member of the merchant.
	Alert    string
	CSVURL   string
	Statuses []string
}

type redemptionData struct {
	Redemption *redemption.Redemption
	Member     *member.Member
}

func (d *Dashboard) redemptionRoutes() {
	d.page("GET "+Prefix+"/redemptions", d.redemptions)
	d.page("GET "+Prefix+"/redemptions/{id}", d.redemption)
}

// redemption is one redemption's page: its member, amount, type, status,
// the ledger's transactions and everything the platform answered.
func (d *Dashboard) redemption(w http.ResponseWriter, r *http.Request, c *Ctx) {
	id, ok := ids.Parse(ids.Redemption, r.PathValue("id"))
	if !ok {
		d.notFound(w, r, c)
		return
	}
	red, err := d.cfg.Stores.Outcomes.FindRedemption(r.Context(), c.MerchantID(), id)
	if err != nil {
		d.fail(w, r, c, err)
		return
	}
	m, err := d.cfg.Stores.Members.FindMemberByID(r.Context(), c.MerchantID(), red.MemberID)
	if err != nil {
		d.fail(w, r, c, err)
		return
	}
	d.render(w, r, c, Page{Template: "redemption", Title: "redemption.title", Nav: "redemptions",
		Data: redemptionData{Redemption: red, Member: m}})
}

// redemptionFilter reads ?status=, ?member= (a member's id, as mem_… or a
// UUID, or email),
// ?from= and ?to= (YYYY-MM-DD days in loc, both included). A malformed
// value is apperr.Invalid; a member id of no member of the merchant is
// apperr.NotFound (another merchant's ids are not found); an email of no
// member leaves found false.
func (d *Dashboard) redemptionFilter(ctx context.Context, c *Ctx, q url.Values) (f redemption.Filter, name string, found bool, err error) {
	f.Status = q.Get("status")
	switch f.Status {
	case "", redemption.StatusPending, redemption.StatusCompleted, redemption.StatusFailed:
	default:
		return f, "", false, apperr.Invalidf("status", apperr.RuleNotAllowed, "pending, completed or failed")
	}
	if s := q.Get("from"); s != "" {
		day, err := time.ParseInLocation(time.DateOnly, s, c.Loc)
		if err != nil {
			return f, "", false, apperr.Invalidf("from", apperr.RuleFormat, "a date as YYYY-MM-DD")
		}
		f.CreatedAfter = day
	}
	if s := q.Get("to"); s != "" {
		day, err := time.ParseInLocation(time.DateOnly, s, c.Loc)
		if err != nil {
			return f, "", false, apperr.Invalidf("to", apperr.RuleFormat, "a date as YYYY-MM-DD")
		}
		f.CreatedBefore = day.AddDate(0, 0, 1)
	}
	who := strings.TrimSpace(q.Get("member"))
	if who == "" {
		return f, "", true, nil
	}
	var m *member.Member
	if id, ok := ids.Parse(ids.Member, who); ok {
		m, err = d.cfg.Stores.Members.FindMemberByID(ctx, c.MerchantID(), id)
	} else {
		m, err = d.cfg.Stores.Members.FindMemberByEmailOrExternalID(ctx, c.MerchantID(), who, "")
		if apperr.Is(err, apperr.NotFound) {
			return f, "", false, nil
		}
	}
	if err != nil {
		return f, "", false, err
	}
	f.MemberID = m.ID
	return f, m.Name, true, nil
}

func (d *Dashboard) redemptions(w http.ResponseWriter, r *http.Request, c *Ctx) {
	q := r.URL.Query()
	f, name, found, err := d.redemptionFilter(r.Context(), c, q)
	if err != nil {
		d.fail(w, r, c, err)
		return
	}
	data := redemptionsData{Statuses: []string{redemption.StatusPending, redemption.StatusCompleted, redemption.StatusFailed},
		Status: f.Status, Member: q.Get("member"), From: q.Get("from"), To: q.Get("to"), MemberName: name}
	csv := url.Values{}
	for _, k := range []string{"status", "member", "from", "to"} {
		if v := q.Get(k); v != "" {
			csv.Set(k, v)
		}
	}
	csv.Set("format", "csv")
	data.CSVURL = Prefix + "/redemptions?" + csv.Encode()
	if q.Get("format") == "csv" {
		if !found {
			f.MemberID = uuid.New() // an email of no member: an empty export
		}
		d.redemptionsCSV(w, r, c, f)
		return
	}
	tabs := report.Tabs{}
	if found {
		// The page number is checked against the total the read returns; a
		// page past the last is read again as the last.
		page, perr := strconv.Atoi(q.Get("page"))
		if perr != nil || page < 1 {
			page = 1
		}
		f.Limit, f.Offset = redemptionsPerPage, (page-1)*redemptionsPerPage
		data.Redemptions, tabs, err = d.cfg.Stores.Redemptions.RedemptionsPage(r.Context(), c.MerchantID(), f)
		if p := NewPagination(r, redemptionsPerPage, tabs.Total(f.Status)); err == nil && p.Offset() != f.Offset {
			f.Offset = p.Offset() // past the last page: show the last
			data.Redemptions, tabs, err = d.cfg.Stores.Redemptions.RedemptionsPage(r.Context(), c.MerchantID(), f)
		}
		if err != nil {
			d.fail(w, r, c, err)
			return
		}
	} else {
		data.Alert = "redemptions.no_member"
	}
	data.Pagination = NewPagination(r, redemptionsPerPage, tabs.Total(f.Status))
	data.Tabs = StatusTabs(r, "status", []Tab{
		{Label: "redemptions.all", Count: tabs.Total("")},
		{Label: "redemptions.status.pending", Value: redemption.StatusPending, Count: tabs[redemption.StatusPending]},
		{Label: "redemptions.status.completed", Value: redemption.StatusCompleted, Count: tabs[redemption.StatusCompleted]},
		{Label: "redemptions.status.failed", Value: redemption.StatusFailed, Count: tabs[redemption.StatusFailed]},
	})
	d.render(w, r, c, Page{Template: "redemptions", Title: "redemptions.title", Nav: "redemptions", Data: data})
}

// redemptionsCSV answers the filter's redemptions as a CSV download:
// amounts in reais with a decimal point, times in RFC 3339 in the
// merchant's zone, whatever the page's language (a file for programs),
// streamed from the batches the store reads.
func (d *Dashboard) redemptionsCSV(w http.ResponseWriter, r *http.Request, c *Ctx, f redemption.Filter) {
	out := NewCSV(w, "redemptions.csv", []string{"id", "created_at", "member_id", "member_name", "member_email", "type",
		"amount_brl", "status", "coupon_code", "coupon_expires_at", "subscription_id", "applied_cycles",
		"failure_reason", "updated_at"})
	exportCSV(d, w, r, c, out, d.cfg.Stores.Redemptions.RedemptionRows(r.Context(), c.MerchantID(), f), func(l redemption.Listed) []string {
		return []string{l.ID.String(), l.CreatedAt.In(c.Loc).Format(time.RFC3339),
			l.MemberID.String(), l.MemberName, l.MemberEmail, l.Type, money.FormatReais(l.Amount), l.Status,
			l.Result.CouponCode, csvTime(l.Result.ExpiresAt, c.Loc), l.SubscriptionID, csvCycles(l.Result.AppliedCycles),
			l.FailureReason, l.UpdatedAt.In(c.Loc).Format(time.RFC3339)}
	})
}

func csvTime(t time.Time, loc *time.Location) string {
	if t.IsZero() {
		return ""
	}
	return t.In(loc).Format(time.RFC3339)
}

func csvCycles(n int) string {
	if n == 0 {
		return ""
	}
	return strconv.Itoa(n)
}
