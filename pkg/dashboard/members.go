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
	"github.com/convida/convida/pkg/creator"
	"github.com/convida/convida/pkg/ids"
	"github.com/convida/convida/pkg/ledger"
	"github.com/convida/convida/pkg/member"
	"github.com/convida/convida/pkg/merchant"
	"github.com/convida/convida/pkg/money"
	"github.com/convida/convida/pkg/redemption"
	"github.com/convida/convida/pkg/referral"
	"github.com/convida/convida/pkg/report"
)

// Members: the list (prefix search, status tabs, campaign filter, CSV),
// a member's page (wallet, transactions, ledger entries, referrals,
// redemptions, creator profile, coupons at the platforms), and the
// owners' actions: create, edit, block, redeem on the member's behalf
// (the ledger command every edge runs, ledger.Redeemer), provision the
// member's coupons, erase the member's personal data (after a
// confirmation page; docs/privacy.md).

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
	list, tabs, err := d.cfg.Members.MembersPage(r.Context(), c.MerchantID(), f)
	if err != nil {
		d.fail(w, r, c, err)
		return
	}
	campaigns, err := d.cfg.MemberCampaigns.CampaignChoices(r.Context(), c.MerchantID())
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

// membersCSV answers every member matching f, read in batches.
func (d *Dashboard) membersCSV(w http.ResponseWriter, r *http.Request, c *Ctx, f member.Filter) {
	var rows [][]string
	for l, err := range d.cfg.Members.MemberRows(r.Context(), c.MerchantID(), f) {
		if err != nil {
			d.fail(w, r, c, err)
			return
		}
		rows = append(rows, []string{ids.Format(ids.Member, l.ID), l.Name, l.Email, l.CouponCode, l.Status,
			ids.Format(ids.Campaign, l.CampaignID), money.FormatReais(l.Pending), money.FormatReais(l.Available),
			money.FormatReais(l.TotalEarned), strconv.FormatInt(l.Stats.TotalReferrals, 10),
			l.CreatedAt.UTC().Format(time.RFC3339)})
	}
	_ = WriteCSV(w, "members.csv", []string{"id", "name", "email", "coupon_code", "status", "campaign_id",
		"pending", "available", "total_earned", "referrals", "created_at"}, rows)
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
	m, err := d.cfg.Members.FindMemberByID(r.Context(), c.MerchantID(), id)
	if err != nil {
		d.fail(w, r, c, err)
		return nil, false
	}
	return m, true
}

// couponRow is one platform's coupon state on a member's page.
type couponRow struct {
	Platform string
	redemption.CouponState
}

type memberData struct {
	Member       *member.Member
	MemberID     string // mem_…
	CampaignName string
	Wallet       ledger.Wallet
	Transactions []ledger.Transaction
	Entries      []ledger.Entry
	EntriesTotal int
	Referrals    []referral.Listed
	Redemptions  []redemption.Listed
	Creator      *creator.Profile
	Coupons      []couponRow
	// KiwifyLink is the member's referral link at Kiwify (her code in the
	// checkout link's sck); "" while Kiwify has no checkout link.
	KiwifyLink string
	// The redeem form: its one-time key (the redemption's name, so a form
	// sent twice redeems once; kept when the ledger did not answer in
	// time, so the retry is the same redemption), what was typed, and why
	// it was refused.
	RedeemKey, Amount, Type, SubscriptionID, Alert, AlertDetail string
}

func (d *Dashboard) memberPage(w http.ResponseWriter, r *http.Request, c *Ctx) {
	m, ok := d.memberByPath(w, r, c)
	if ok {
		d.showMember(w, r, c, m, http.StatusOK, memberData{Type: redemption.TypeStoreCredit})
	}
}

// showMember renders the member's page with what form holds of the
// redeem form.
func (d *Dashboard) showMember(w http.ResponseWriter, r *http.Request, c *Ctx, m *member.Member, status int, form memberData) {
	ctx := r.Context()
	data := form
	data.Member, data.MemberID = m, ids.Format(ids.Member, m.ID)
	if data.RedeemKey == "" {
		data.RedeemKey = uuid.NewString()
	}
	var err error
	if data.Wallet, err = d.cfg.Wallets.FindWallet(ctx, m.MerchantID, m.ID); err != nil {
		d.fail(w, r, c, err)
		return
	}
	if data.Transactions, err = d.cfg.Wallets.ListTransactions(ctx, m.MerchantID, m.ID); err != nil {
		d.fail(w, r, c, err)
		return
	}
	data.Transactions = data.Transactions[:min(len(data.Transactions), memberDetailRows)]
	if data.Entries, data.EntriesTotal, err = d.cfg.Wallets.ListEntries(ctx, m.MerchantID, m.ID,
		ledger.EntryFilter{Limit: memberDetailRows}); err != nil {
		d.fail(w, r, c, err)
		return
	}
	if data.Referrals, _, err = d.cfg.Referrals.ReferralsPage(ctx, m.MerchantID,
		referral.Filter{MemberID: m.ID, Limit: memberDetailRows}); err != nil {
		d.fail(w, r, c, err)
		return
	}
	if data.Redemptions, _, err = d.cfg.Redemptions.RedemptionsPage(ctx, m.MerchantID,
		redemption.Filter{MemberID: m.ID, Limit: memberDetailRows}); err != nil {
		d.fail(w, r, c, err)
		return
	}
	switch p, err := d.cfg.Creators.FindCreator(ctx, m.MerchantID, m.ID); {
	case err == nil:
		data.Creator = p
	case !apperr.Is(err, apperr.NotFound):
		d.fail(w, r, c, err)
		return
	}
	states, err := d.cfg.Coupons.CouponStates(ctx, m.MerchantID, []uuid.UUID{m.ID})
	if err != nil {
		d.fail(w, r, c, err)
		return
	}
	for _, p := range redemption.CouponPlatforms {
		st, ok := states[m.ID][p]
		if !ok {
			st = redemption.CouponState{Status: redemption.CouponNotConfigured}
		}
		data.Coupons = append(data.Coupons, couponRow{Platform: p, CouponState: st})
	}
	switch kiwify, err := d.cfg.Integrations.FindIntegration(ctx, m.MerchantID, merchant.ProviderKiwify); {
	case err == nil:
		data.KiwifyLink = member.KiwifyLink(kiwify.CheckoutURL, m.CouponCode)
	case !apperr.Is(err, apperr.NotFound):
		d.fail(w, r, c, err)
		return
	}
	campaigns, err := d.cfg.MemberCampaigns.CampaignChoices(ctx, m.MerchantID)
	if err != nil {
		d.fail(w, r, c, err)
		return
	}
	for _, camp := range campaigns {
		if camp.ID == m.CampaignID {
			data.CampaignName = camp.Name
		}
	}
	d.render(w, r, c, Page{Template: "member", Title: "members.member_title", Nav: "members", Status: status, Data: data})
}

// entriesPerPage is the length of a member's ledger pages.
const entriesPerPage = 50

type memberLedgerData struct {
	Member     *member.Member
	Entries    []ledger.Entry
	Pagination Pagination
}

// memberLedger is every ledger entry of the member, newest first, paginated.
func (d *Dashboard) memberLedger(w http.ResponseWriter, r *http.Request, c *Ctx) {
	m, ok := d.memberByPath(w, r, c)
	if !ok {
		return
	}
	page, offset := requestPage(r, entriesPerPage)
	entries, total, err := d.cfg.Wallets.ListEntries(r.Context(), m.MerchantID, m.ID, ledger.EntryFilter{Offset: offset, Limit: entriesPerPage})
	if err != nil {
		d.fail(w, r, c, err)
		return
	}
	p := NewPagination(r, entriesPerPage, total)
	p.Page = page
	d.render(w, r, c, Page{Template: "member_ledger", Title: "members.ledger", Nav: "members",
		Data: memberLedgerData{Member: m, Entries: entries, Pagination: p}})
}

// memberFormData is the create and edit form.
type memberFormData struct {
	Member    *member.Member // nil: a new member
	Name      string
	Email     string
	Document  string
	External  string
	Campaign  string // campaign UUID
	Campaigns []campaign.Campaign
	Alert     string // catalogue key
	Detail    string // the rule broken, as the domain says it
}

func (d *Dashboard) showMemberForm(w http.ResponseWriter, r *http.Request, c *Ctx, status int, data memberFormData) {
	campaigns, err := d.cfg.MemberCampaigns.CampaignChoices(r.Context(), c.MerchantID())
	if err != nil {
		d.fail(w, r, c, err)
		return
	}
	data.Campaigns = campaigns
	title := "members.new_title"
	if data.Member != nil {
		title = "members.edit_title"
	}
	d.render(w, r, c, Page{Template: "member_form", Title: title, Nav: "members", Status: status, Data: data})
}

func (d *Dashboard) newMemberPage(w http.ResponseWriter, r *http.Request, c *Ctx) {
	d.showMemberForm(w, r, c, http.StatusOK, memberFormData{})
}

// campaignField is the member form's campaign, as member.Create's errors
// name it.
const campaignField = "campaign"

// createMember creates the member through member.Create, as POST
// /api/v1/members does: the form's campaign, or the default one.
func (d *Dashboard) createMember(w http.ResponseWriter, r *http.Request, c *Ctx) {
	form := memberFormData{Name: strings.TrimSpace(r.PostFormValue("name")), Email: strings.TrimSpace(r.PostFormValue("email")),
		Document: strings.TrimSpace(r.PostFormValue("document")), External: strings.TrimSpace(r.PostFormValue("external_id")),
		Campaign: r.PostFormValue("campaign")}
	m, _, err := member.Create(r.Context(), d.cfg.Members, d.cfg.Campaigns, member.Input{MerchantID: c.MerchantID(),
		CodePrefix: c.Merchant.CodePrefix, Name: form.Name, Email: form.Email, Document: form.Document,
		ExternalID: form.External, Campaign: form.Campaign, CampaignField: campaignField})
	switch v, _ := apperr.ViolationOf(err); {
	case v.Field == campaignField:
		form.Alert = "members.no_campaign"
		d.showMemberForm(w, r, c, http.StatusUnprocessableEntity, form)
		return
	case apperr.Is(err, apperr.Invalid):
		form.Alert, form.Detail = "members.invalid", problem(c.Lang, err)
		d.showMemberForm(w, r, c, http.StatusUnprocessableEntity, form)
		return
	case apperr.Is(err, apperr.EmailExists) || apperr.Is(err, apperr.Conflict):
		form.Alert, form.Detail = "members.exists", problem(c.Lang, err)
		d.showMemberForm(w, r, c, http.StatusConflict, form)
		return
	case err != nil:
		d.fail(w, r, c, err)
		return
	}
	d.flash(r, "members.created_flash")
	http.Redirect(w, r, Prefix+"/members/"+m.ID.String(), http.StatusSeeOther)
}

func (d *Dashboard) editMemberPage(w http.ResponseWriter, r *http.Request, c *Ctx) {
	if m, ok := d.memberByPath(w, r, c); ok {
		d.showMemberForm(w, r, c, http.StatusOK, memberFormData{Member: m, Name: m.Name, Email: m.Email,
			External: m.ExternalID, Campaign: m.CampaignID.String()})
	}
}

// updateMember changes the member's name, external id and campaign.
func (d *Dashboard) updateMember(w http.ResponseWriter, r *http.Request, c *Ctx) {
	m, ok := d.memberByPath(w, r, c)
	if !ok {
		return
	}
	form := memberFormData{Member: m, Name: strings.TrimSpace(r.PostFormValue("name")), Email: m.Email,
		External: strings.TrimSpace(r.PostFormValue("external_id")), Campaign: r.PostFormValue("campaign")}
	upd := member.Update{Name: &form.Name, ExternalID: &form.External}
	if err := upd.Validate(); err != nil {
		form.Alert, form.Detail = "members.invalid", problem(c.Lang, err)
		d.showMemberForm(w, r, c, http.StatusUnprocessableEntity, form)
		return
	}
	if form.Campaign != m.CampaignID.String() {
		var camp *campaign.Campaign
		var err error = apperr.Invalidf(campaignField, apperr.RuleUnknown, "no such campaign")
		if form.Campaign != "" { // "" would be the default: a member leaves her campaign only for another
			camp, err = campaign.Resolve(r.Context(), d.cfg.Campaigns, c.MerchantID(), campaignField, form.Campaign)
		}
		if apperr.Is(err, apperr.Invalid) {
			form.Alert = "members.no_campaign"
			d.showMemberForm(w, r, c, http.StatusUnprocessableEntity, form)
			return
		}
		if err != nil {
			d.fail(w, r, c, err)
			return
		}
		upd.CampaignID = &camp.ID
	}
	if _, err := d.cfg.Members.UpdateMember(r.Context(), c.MerchantID(), m.ID, upd); err != nil {
		d.fail(w, r, c, err)
		return
	}
	d.flash(r, "members.updated_flash")
	http.Redirect(w, r, Prefix+"/members/"+m.ID.String(), http.StatusSeeOther)
}

// setMemberStatus blocks or unblocks the member.
func (d *Dashboard) setMemberStatus(status, flash string) handler {
	return func(w http.ResponseWriter, r *http.Request, c *Ctx) {
		m, ok := d.memberByPath(w, r, c)
		if !ok {
			return
		}
		if _, err := d.cfg.Members.UpdateMember(r.Context(), c.MerchantID(), m.ID, member.Update{Status: &status}); err != nil {
			d.fail(w, r, c, err)
			return
		}
		d.flash(r, flash)
		http.Redirect(w, r, Prefix+"/members/"+m.ID.String(), http.StatusSeeOther)
	}
}

// provisionCoupon asks for the member's coupons at every platform, as the
// API's POST /members/{id}/provision-coupon does; the dispatcher carries
// it out.
func (d *Dashboard) provisionCoupon(w http.ResponseWriter, r *http.Request, c *Ctx) {
	m, ok := d.memberByPath(w, r, c)
	if !ok {
		return
	}
	if err := d.cfg.Coupons.RequestCoupons(r.Context(), c.MerchantID(), m.ID); err != nil {
		d.fail(w, r, c, err)
		return
	}
	d.flash(r, "members.provision_flash")
	http.Redirect(w, r, Prefix+"/members/"+m.ID.String(), http.StatusSeeOther)
}

// confirmErase asks an owner to confirm the erasure of the member's
// personal data, saying what goes and that it cannot be undone.
func (d *Dashboard) confirmErase(w http.ResponseWriter, r *http.Request, c *Ctx) {
	if m, ok := d.memberByPath(w, r, c); ok {
		d.render(w, r, c, Page{Template: "member_erase", Title: "members.erase_title", Nav: "members", Data: m})
	}
}

// eraseMember erases the member's personal data (the store's EraseMember,
// as POST /api/v1/members/{id}/erase does) and shows the member's page
// with a flash; erasing an erased member changes nothing.
func (d *Dashboard) eraseMember(w http.ResponseWriter, r *http.Request, c *Ctx) {
	m, ok := d.memberByPath(w, r, c)
	if !ok {
		return
	}
	if _, _, err := d.cfg.Members.EraseMember(r.Context(), c.MerchantID(), m.ID); err != nil {
		d.fail(w, r, c, err)
		return
	}
	d.flash(r, "members.erased_flash")
	http.Redirect(w, r, Prefix+"/members/"+m.ID.String(), http.StatusSeeOther)
}

// redeemAlerts are the catalogue keys of the refusals a redemption can
// meet; another refusal shows the generic alert with its message.
var redeemAlerts = map[apperr.Code]string{
	apperr.InsufficientBalance:      "members.redeem_insufficient",
	apperr.BelowMinRedemption:       "members.redeem_below_min",
	apperr.IntegrationNotConfigured: "members.redeem_not_configured",
	apperr.RedemptionFailed:         "members.redeem_failed",
	apperr.InvalidState:             "members.redeem_not_active",
}

// redeemForMember redeems on the member's behalf: the amount in reais
// (either language's notation), the type, and a subscription id for a
// subscription discount. It runs the ledger command the API runs and
// waits for the platform's result; the form's one-time key names the
// redemption, so sending the form twice redeems once.
func (d *Dashboard) redeemForMember(w http.ResponseWriter, r *http.Request, c *Ctx) {
	m, ok := d.memberByPath(w, r, c)
	if !ok {
		return
	}
	form := memberData{Amount: strings.TrimSpace(r.PostFormValue("amount")), Type: r.PostFormValue("type"),
		SubscriptionID: strings.TrimSpace(r.PostFormValue("subscription_id"))}
	refuse := func(alert, detail string) {
		form.Alert, form.AlertDetail = alert, detail
		d.showMember(w, r, c, m, http.StatusUnprocessableEntity, form)
	}
	amount, err := money.ParseTypedReais(form.Amount)
	if err != nil || amount < 1 {
		refuse("members.redeem_bad_amount", "")
		return
	}
	typ, ok := redemption.TypeOf(form.Type)
	if !ok {
		refuse("members.redeem_bad_type", "")
		return
	}
	if redemption.CheckSubscriptionID("subscription_id", typ, form.SubscriptionID) != nil {
		refuse("members.redeem_need_subscription", "")
		return
	}
	key := strings.TrimSpace(r.PostFormValue("key"))
	if key == "" {
		key = uuid.NewString()
	}
	red, pending, err := d.cfg.Redeemer.Redeem(r.Context(), ledger.RedeemRequest{Member: m,
		RedemptionID: ledger.RedemptionIDFor(c.MerchantID(), "dashboard:"+key), Amount: amount, Type: typ,
		SubscriptionID: form.SubscriptionID, IssuedAt: d.now()}, time.Now().Add(d.redeemTimeout()))
	if err != nil {
		if alert, ok := redeemAlerts[apperr.CodeOf(err)]; ok {
			detail := problem(c.Lang, err)
			if red != nil && apperr.Is(err, apperr.RedemptionFailed) {
				detail = red.FailureReason // the platform's own words
			}
			refuse(alert, detail)
			return
		}
		if apperr.Is(err, apperr.Unavailable) {
			// The command may still be applied: sending the form again
			// must name the same redemption, not make a second one.
			form.RedeemKey = key
		}
		if apperr.Is(err, apperr.Unavailable) || apperr.Is(err, apperr.Invalid) || apperr.Is(err, apperr.IdempotencyReused) {
			refuse("members.redeem_refused", problem(c.Lang, err))
			return
		}
		d.fail(w, r, c, err)
		return
	}
	switch {
	case pending:
		d.flash(r, "members.redeem_pending_flash")
	case red.Status == redemption.StatusCompleted:
		d.flash(r, "members.redeem_done_flash")
	}
	http.Redirect(w, r, Prefix+"/members/"+m.ID.String(), http.StatusSeeOther)
}

func (d *Dashboard) redeemTimeout() time.Duration {
	if d.cfg.ActionTimeout > 0 {
		return d.cfg.ActionTimeout
	}
	return 10 * time.Second
}
