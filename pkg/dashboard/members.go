package dashboard

import (
	"context"
	"iter"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/campaign"
	"github.com/convida/convida/pkg/ids"
	"github.com/convida/convida/pkg/member"
	"github.com/convida/convida/pkg/money"
	"github.com/convida/convida/pkg/report"
)

// Members: the list (prefix search, status tabs, campaign filter, CSV)
// here; a member's page (member_page.go: wallet, transactions, ledger
// entries, referrals, redemptions, creator profile, coupons at the
// platforms); the create and edit forms (member_form.go); and the owners'
// actions: block, provision the member's coupons, erase the member's
// personal data (member_actions.go), redeem on the member's behalf
// (member_redeem.go).

// MemberStore lists, reads, creates and changes members
// (postgres.MemberStore): the contracts the API shares, and the pages
// and rows of the list.
type MemberStore interface {
	member.Store
	member.Updater
	member.Eraser
	MembersPage(ctx context.Context, merchantID uuid.UUID, f member.Filter) ([]member.Listed, report.Tabs, error)
	MemberRows(ctx context.Context, merchantID uuid.UUID, f member.Filter) iter.Seq2[member.Listed, error]
}

// CampaignChoices reads the campaigns a form or filter offers
// (postgres.CampaignStore).
type CampaignChoices interface {
	CampaignChoices(ctx context.Context, merchantID uuid.UUID) ([]campaign.Campaign, error)
}

// membersPerPage is the length of the members list's pages; maxPage bounds
// ?page= (a page past the last is empty, but its OFFSET costs a scan).
const (
	membersPerPage = 50
	maxPage        = 10_000
	// memberDetailRows is how many rows each table of a member's page shows.
	memberDetailRows = 20
	maxSearch        = 255
)

func (d *Dashboard) memberRoutes() {
	d.page("GET "+Prefix+"/members", d.members)
	d.page("GET "+Prefix+"/members/new", d.newMemberPage)
	d.action("POST "+Prefix+"/members", d.createMember)
	d.page("GET "+Prefix+"/members/{id}", d.memberPage)
	d.page("GET "+Prefix+"/members/{id}/edit", d.editMemberPage)
	d.page("GET "+Prefix+"/members/{id}/ledger", d.memberLedger)
	d.action("POST "+Prefix+"/members/{id}", d.updateMember)
	d.action("POST "+Prefix+"/members/{id}/block", d.setMemberStatus(member.StatusBlocked, "members.blocked_flash"))
	d.action("POST "+Prefix+"/members/{id}/unblock", d.setMemberStatus(member.StatusActive, "members.unblocked_flash"))
	d.action("POST "+Prefix+"/members/{id}/redeem", d.redeemForMember)
	d.action("POST "+Prefix+"/members/{id}/provision-coupon", d.provisionCoupon)
	d.action("GET "+Prefix+"/members/{id}/erase", d.confirmErase)
	d.action("POST "+Prefix+"/members/{id}/erase", d.eraseMember)
}

// requestPage is the request's ?page= (1 when missing or invalid), bounded
// by maxPage, and the SQL offset of that page.
func requestPage(r *http.Request, perPage int) (page, offset int) {
	page, err := strconv.Atoi(r.URL.Query().Get("page"))
	if err != nil || page < 1 {
		page = 1
	}
	page = min(page, maxPage)
	return page, (page - 1) * perPage
}

type membersData struct {
	Members    []member.Listed
	Tabs       []Tab
	Pagination Pagination
	Campaigns  []campaign.Campaign
	Query      string
	Campaign   string // the campaign filter, as given
	Status     string
	CSVURL     string
}

// memberFilter reads the list's filters: q (a prefix of the name, the
// email or the code), status and campaign (camp_… or its UUID). An
// invalid one is apperr.Invalid.
func memberFilter(r *http.Request) (member.Filter, error) {
	q := r.URL.Query()
	f := member.Filter{Status: q.Get("status"), Prefix: strings.TrimSpace(q.Get("q"))}
	if f.Status != "" && !member.ValidStatus(f.Status) {
		return f, apperr.Invalidf("status", apperr.RuleNotAllowed, "must be active, inactive or blocked")
	}
	if len(f.Prefix) > maxSearch {
		return f, apperr.Invalidf("q", apperr.RuleTooLong, "at most %d characters", maxSearch).WithLimit(maxSearch)
	}
	if v := strings.TrimSpace(q.Get("campaign")); v != "" {
		id, ok := ids.Parse(ids.Campaign, v)
		if !ok {
			return f, apperr.Invalidf("campaign", apperr.RuleUnknown, "no such campaign")
		}
		f.CampaignID = id
	}
	return f, nil
}

func (d *Dashboard) members(w http.ResponseWriter, r *http.Request, c *Ctx) {
	f, err := memberFilter(r)
	if err != nil {
		d.fail(w, r, c, err)
		return
	}
	if r.URL.Query().Get("format") == "csv" {
		d.membersCSV(w, r, c, f)
		return
	}
	page, offset := requestPage(r, membersPerPage)
	f.Offset, f.Limit = offset, membersPerPage
	list, tabs, err := d.cfg.Stores.Members.MembersPage(r.Context(), c.MerchantID(), f)
	if err != nil {
		d.fail(w, r, c, err)
		return
	}
	campaigns, err := d.cfg.Stores.Campaigns.CampaignChoices(r.Context(), c.MerchantID())
	if err != nil {
		d.fail(w, r, c, err)
		return
	}
	p := NewPagination(r, membersPerPage, tabs.Total(f.Status))
	p.Page = page
	csv := r.URL.Query()
	csv.Del("page")
	csv.Set("format", "csv")
	d.render(w, r, c, Page{Template: "members", Title: "members.title", Nav: "members", Data: membersData{
		Members: list, Pagination: p, Campaigns: campaigns, Query: f.Prefix, Status: f.Status,
		Campaign: r.URL.Query().Get("campaign"), CSVURL: Prefix + "/members?" + csv.Encode(),
		Tabs: StatusTabs(r, "status", []Tab{
			{Label: "members.tab_all", Count: tabs.Total("")},
			{Label: "members.status.active", Value: member.StatusActive, Count: tabs[member.StatusActive]},
			{Label: "members.status.inactive", Value: member.StatusInactive, Count: tabs[member.StatusInactive]},
			{Label: "members.status.blocked", Value: member.StatusBlocked, Count: tabs[member.StatusBlocked]},
		}),
	}})
}

// membersCSV answers every member matching f, streamed from the batches
// the store reads.
func (d *Dashboard) membersCSV(w http.ResponseWriter, r *http.Request, c *Ctx, f member.Filter) {
	out := NewCSV(w, "members.csv", []string{"id", "name", "email", "coupon_code", "status", "campaign_id",
		"pending", "available", "total_earned", "referrals", "created_at"})
	exportCSV(d, w, r, c, out, d.cfg.Stores.Members.MemberRows(r.Context(), c.MerchantID(), f), func(l member.Listed) []string {
		return []string{ids.Format(ids.Member, l.ID), l.Name, l.Email, l.CouponCode, l.Status,
			ids.Format(ids.Campaign, l.CampaignID), money.FormatReais(l.Pending), money.FormatReais(l.Available),
			money.FormatReais(l.TotalEarned), strconv.FormatInt(l.Stats.TotalReferrals, 10),
			l.CreatedAt.UTC().Format(time.RFC3339)}
	})
}

// memberByPath loads the signed-in merchant's member of the path's {id}
// (its UUID or mem_…); false, with the 404 page written, for a malformed
// id, another merchant's member or a missing one.
func (d *Dashboard) memberByPath(w http.ResponseWriter, r *http.Request, c *Ctx) (*member.Member, bool) {
	id, ok := ids.Parse(ids.Member, r.PathValue("id"))
	if !ok {
		d.notFound(w, r, c)
		return nil, false
	}
	m, err := d.cfg.Stores.Members.FindMemberByID(r.Context(), c.MerchantID(), id)
	if err != nil {
		d.fail(w, r, c, err)
		return nil, false
	}
	return m, true
}
