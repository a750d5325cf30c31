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
	"github.com/convida/convida/pkg/jsontime"
	"github.com/convida/convida/pkg/ledger"
	"github.com/convida/convida/pkg/money"
	"github.com/convida/convida/pkg/referral"
	"github.com/convida/convida/pkg/report"
)

// Referrals: the list (status tabs with counts, the review queue, filters
// by member and dates, CSV export), a referral's page, and approve or
// reject, carried out by the ledger through ledger.Decider as the API's
// approve and reject are.

// ReferralReads lists and reads referrals (postgres.ReferralReads).
type ReferralReads interface {
	referral.Finder
	ReferralsPage(ctx context.Context, merchantID uuid.UUID, f referral.Filter) ([]referral.Listed, report.Tabs, error)
	ReferralRows(ctx context.Context, merchantID uuid.UUID, f referral.Filter) iter.Seq2[referral.Listed, error]
}

// decider approves and rejects referrals as the API does.
func (d *Dashboard) decider() ledger.Decider {
	a := d.cfg.Actions
	return ledger.Decider{Commands: a.Commands, Waiter: a.Waiter, Referrals: d.cfg.Stores.Referrals, Timeout: a.timeout()}
}

// referralsPerPage is the length of a page of the list.
const referralsPerPage = 50

// referralStatuses are the list's status tabs after "All", in order.
var referralStatuses = []string{referral.StatusPending, referral.StatusApproved, referral.StatusRejected, referral.StatusCancelled}

type referralsData struct {
	Referrals  []referralRow
	Tabs       []Tab
	Review     bool   // the review queue
	Status     string // the current status tab
	ReviewURL  string
	AllURL     string
	Filter     referralsFilter
	Pagination Pagination
	CSVURL     string
}

// referralsFilter is the filter form as typed (kept in the query string).
type referralsFilter struct{ Member, From, To string }

// referralRow is a referral as the pages show it.
type referralRow struct {
	referral.Listed
	Ref, Member string // ref_…, mem_…
}

func newReferralRow(l referral.Listed) referralRow {
	return referralRow{Listed: l, Ref: ids.Format(ids.Referral, l.ID), Member: ids.Format(ids.Member, l.MemberID)}
}

// CanApprove and CanReject say which decisions the referral's status
// allows (referral.Next has the last word, in the ledger).
func (r referralRow) CanApprove() bool { return r.Status == referral.StatusPending }
func (r referralRow) CanReject() bool {
	return r.Status == referral.StatusPending || r.Status == referral.StatusApproved
}

type referralData struct {
	Referral referralRow
	Alert    string // a catalogue key
	Detail   string // the ledger's message beside the alert
}

type rejectData struct {
	Referral referralRow
	Reasons  []string
	Reason   string
	Notes    string
	Alert    string
}

func (d *Dashboard) referralRoutes() {
	d.page("GET "+Prefix+"/referrals", d.referrals)
	d.page("GET "+Prefix+"/referrals/{id}", d.referral)
	d.page("GET "+Prefix+"/referrals/{id}/reject", d.confirmReject)
	d.action("POST "+Prefix+"/referrals/{id}/approve", d.decideReferral(ledger.CmdApprove))
	d.action("POST "+Prefix+"/referrals/{id}/reject", d.decideReferral(ledger.CmdReject))
}

// referralFilter reads the list's filters: status, review_required, member
// (mem_… or a UUID), from and to (days in the merchant's zone, both
// included).
func referralFilter(r *http.Request, loc *time.Location) (referral.Filter, referralsFilter, error) {
	q := r.URL.Query()
	typed := referralsFilter{Member: strings.TrimSpace(q.Get("member")), From: q.Get("from"), To: q.Get("to")}
	f := referral.Filter{Status: q.Get("status")}
	if f.Status != "" && !referral.ValidStatus(f.Status) {
		return f, typed, apperr.Invalidf("status", apperr.RuleNotAllowed, "must be pending, approved, rejected or cancelled")
	}
	switch q.Get("review_required") {
	case "":
	case "true", "false":
		held := q.Get("review_required") == "true"
		f.ReviewRequired = &held
	default:
		return f, typed, apperr.Invalidf("review_required", apperr.RuleNotAllowed, "must be true or false")
	}
	if typed.Member != "" {
		id, ok := ids.Parse(ids.Member, typed.Member)
		if !ok {
			return f, typed, apperr.Invalidf("member", apperr.RuleFormat, "must be a member id (mem_…)")
		}
		f.MemberID = id
	}
	var err error
	if f.CreatedAfter, err = day("from", typed.From, loc, 0); err != nil {
		return f, typed, err
	}
	if f.CreatedBefore, err = day("to", typed.To, loc, 1); err != nil {
		return f, typed, err
	}
	return f, typed, nil
}

// day is the start of the date s (2026-11-20) in loc, plus add days; the
// zero time when s is empty.
func day(field, s string, loc *time.Location, add int) (time.Time, error) {
	if s = strings.TrimSpace(s); s == "" {
		return time.Time{}, nil
	}
	t, err := time.ParseInLocation(time.DateOnly, s, loc)
	if err != nil {
		return time.Time{}, apperr.Invalidf(field, apperr.RuleFormat, "must be a date (2026-11-20)")
	}
	return t.AddDate(0, 0, add), nil
}

// requestedPage is ?page=, 1 when missing or invalid, at most the last
// page the capped tab counts can reach.
func requestedPage(r *http.Request, perPage int) int {
	p, err := strconv.Atoi(r.URL.Query().Get("page"))
	if err != nil || p < 1 {
		return 1
	}
	return min(p, report.TabCap/perPage+1)
}

func (d *Dashboard) referrals(w http.ResponseWriter, r *http.Request, c *Ctx) {
	f, typed, err := referralFilter(r, c.Loc)
	if err != nil {
		d.fail(w, r, c, err)
		return
	}
	if r.URL.Query().Get("format") == "csv" {
		d.referralsCSV(w, r, c, f)
		return
	}
	pageNum := requestedPage(r, referralsPerPage)
	f.Offset, f.Limit = (pageNum-1)*referralsPerPage, referralsPerPage
	list, tabs, err := d.cfg.Stores.Referrals.ReferralsPage(r.Context(), c.MerchantID(), f)
	if err != nil {
		d.fail(w, r, c, err)
		return
	}
	p := NewPagination(r, referralsPerPage, tabs.Total(f.Status))
	if p.Page != pageNum { // past the last page: show the last one
		f.Offset = p.Offset()
		if list, tabs, err = d.cfg.Stores.Referrals.ReferralsPage(r.Context(), c.MerchantID(), f); err != nil {
			d.fail(w, r, c, err)
			return
		}
	}
	data := referralsData{Pagination: p, Filter: typed, Status: f.Status, Review: f.ReviewRequired != nil && *f.ReviewRequired}
	all := []Tab{{Label: "referrals.all", Count: tabs.Total("")}}
	for _, s := range referralStatuses {
		all = append(all, Tab{Label: "referral.status." + s, Value: s, Count: tabs[s]})
	}
	data.Tabs = StatusTabs(r, "status", all)
	data.ReviewURL = withQuery(r, map[string]string{"review_required": "true", "status": "", "page": ""})
	data.AllURL = withQuery(r, map[string]string{"review_required": "", "status": "", "page": ""})
	data.CSVURL = withQuery(r, map[string]string{"format": "csv", "page": ""})
	for _, l := range list {
		data.Referrals = append(data.Referrals, newReferralRow(l))
	}
	title := "referrals.title"
	if data.Review {
		title = "referrals.review_queue"
	}
	d.render(w, r, c, Page{Template: "referrals", Title: title, Nav: "referrals", Data: data})
}

// withQuery is the request's path and query with set's parameters set
// ("" deletes one).
func withQuery(r *http.Request, set map[string]string) string {
	q := r.URL.Query()
	for k, v := range set {
		if v == "" {
			q.Del(k)
		} else {
			q.Set(k, v)
		}
	}
	if enc := q.Encode(); enc != "" {
		return r.URL.Path + "?" + enc
	}
	return r.URL.Path
}

// referralsCSV answers every referral of the filter as CSV, money as
// reais with a point, times in RFC 3339 UTC, streamed from the batches the
// store reads.
func (d *Dashboard) referralsCSV(w http.ResponseWriter, r *http.Request, c *Ctx, f referral.Filter) {
	out := NewCSV(w, "referrals.csv", []string{"id", "created_at", "member_id", "member_name", "member_email", "source",
		"order_id", "buyer_name", "buyer_email", "coupon", "order_value", "reward_amount", "status", "rejection_reason",
		"review_required", "review_reasons", "warranty_expires_at", "unrecovered_amount", "notes"})
	exportCSV(d, w, r, c, out, d.cfg.Stores.Referrals.ReferralRows(r.Context(), c.MerchantID(), f), func(l referral.Listed) []string {
		return []string{ids.Format(ids.Referral, l.ID), jsontime.Format(l.CreatedAt), ids.Format(ids.Member, l.MemberID),
			l.MemberName, l.MemberEmail, l.Source, l.OrderID, l.RefereeName, l.RefereeEmail, l.CouponUsed,
			money.FormatReais(l.OrderValue), money.FormatReais(l.RewardAmount), l.Status, l.RejectionReason,
			strconv.FormatBool(l.ReviewRequired), strings.Join(l.ReviewReasons, " "), jsontime.Format(l.WarrantyExpiresAt),
			money.FormatReais(l.UnrecoveredAmount), l.Notes}
	})
}

// findReferral reads the path's referral of the signed-in merchant; false
// (and the 404 page written) for a bad id or another merchant's.
func (d *Dashboard) findReferral(w http.ResponseWriter, r *http.Request, c *Ctx) (referralRow, bool) {
	id, ok := ids.Parse(ids.Referral, r.PathValue("id"))
	if !ok {
		d.notFound(w, r, c)
		return referralRow{}, false
	}
	l, err := d.cfg.Stores.Referrals.FindReferralByID(r.Context(), c.MerchantID(), id)
	if err != nil {
		d.fail(w, r, c, err)
		return referralRow{}, false
	}
	return newReferralRow(*l), true
}

func (d *Dashboard) referral(w http.ResponseWriter, r *http.Request, c *Ctx) {
	if ref, ok := d.findReferral(w, r, c); ok {
		d.render(w, r, c, Page{Template: "referral", Title: "referral.title", Nav: "referrals", Data: referralData{Referral: ref}})
	}
}

func (d *Dashboard) confirmReject(w http.ResponseWriter, r *http.Request, c *Ctx) {
	if ref, ok := d.findReferral(w, r, c); ok {
		d.render(w, r, c, Page{Template: "referral_reject", Title: "referral.reject_title", Nav: "referrals",
			Data: rejectData{Referral: ref, Reasons: referral.RejectionReasons, Notes: r.URL.Query().Get("notes")}})
	}
}

// decideReferral approves or rejects the path's referral through the
// ledger, as POST /api/v1/referrals/{id}/approve|reject does. A decision
// the referral's status does not allow (409 invalid_state) shows its page
// again with an alert; an invalid reason or notes, the reject form again.
func (d *Dashboard) decideReferral(typ string) handler {
	return func(w http.ResponseWriter, r *http.Request, c *Ctx) {
		ref, ok := d.findReferral(w, r, c)
		if !ok {
			return
		}
		dec := ledger.Decision{Type: typ, MerchantID: c.MerchantID(), ReferralID: ref.ID,
			Notes: strings.TrimSpace(r.PostFormValue("notes")), Reason: r.PostFormValue("reason"),
			Key: uuid.NewString(), At: d.now()}
		if err := dec.Validate(); err != nil {
			alert := "referral.bad_notes"
			if typ == ledger.CmdApprove {
				d.render(w, r, c, Page{Template: "referral", Title: "referral.title", Nav: "referrals",
					Status: http.StatusUnprocessableEntity, Data: referralData{Referral: ref, Alert: alert}})
				return
			}
			if !referral.ValidReason(dec.Reason) {
				alert = "referral.bad_reason"
			}
			d.render(w, r, c, Page{Template: "referral_reject", Title: "referral.reject_title", Nav: "referrals",
				Status: http.StatusUnprocessableEntity, Data: rejectData{Referral: ref, Reasons: referral.RejectionReasons,
					Reason: dec.Reason, Notes: dec.Notes, Alert: alert}})
			return
		}
		_, settled, err := d.decider().Decide(r.Context(), dec)
		switch {
		case apperr.Is(err, apperr.InvalidState):
			if l, ferr := d.cfg.Stores.Referrals.FindReferralByID(r.Context(), c.MerchantID(), ref.ID); ferr == nil {
				ref = newReferralRow(*l)
			}
			d.render(w, r, c, Page{Template: "referral", Title: "referral.title", Nav: "referrals", Status: http.StatusConflict,
				Data: referralData{Referral: ref, Alert: "referral.invalid_state", Detail: problem(c.Lang, err)}})
			return
		case err != nil:
			d.fail(w, r, c, err)
			return
		case !settled:
			d.flash(r, "referral.queued_flash")
		case typ == ledger.CmdApprove:
			d.flash(r, "referral.approved_flash")
		default:
			d.flash(r, "referral.rejected_flash")
		}
		http.Redirect(w, r, Prefix+"/referrals/"+url.PathEscape(ref.Ref), http.StatusSeeOther)
	}
}
