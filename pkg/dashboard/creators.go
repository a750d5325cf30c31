package dashboard

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/creator"
	"github.com/convida/convida/pkg/ids"
	"github.com/convida/convida/pkg/member"
	"github.com/convida/convida/pkg/referral"
)

// Creators: the merchant's creator profiles with their tier and month's
// sales; a profile's page with its token (copy, rotate after a
// confirmation), tier and sales (buyer e-mails masked as the public API
// shows them); create and edit a member's profile. Tiers are edited on
// the campaign's page.

// CreatorStore keeps creator profiles (postgres.CreatorStore): the
// contracts the API shares, and the list of creators.
type CreatorStore interface {
	creator.Store
	referral.CreatorSales
	ListCreators(ctx context.Context, merchantID uuid.UUID, monthStart time.Time, offset, limit int) ([]creator.Listed, int, error)
}

const (
	creatorsPerPage = 50
	salesPerPage    = 25
)

func (d *Dashboard) creatorRoutes() {
	d.page("GET "+Prefix+"/creators", d.creators)
	d.page("GET "+Prefix+"/creators/new", d.newCreatorPage)
	d.action("POST "+Prefix+"/creators", d.createCreator)
	d.page("GET "+Prefix+"/creators/{id}", d.creatorPage)
	d.page("GET "+Prefix+"/creators/{id}/edit", d.editCreatorPage)
	d.action("POST "+Prefix+"/creators/{id}", d.updateCreator)
	d.page("GET "+Prefix+"/creators/{id}/rotate", d.confirmRotate)
	d.action("POST "+Prefix+"/creators/{id}/rotate", d.rotateToken)
}

// creatorRow is a listed creator with the tier its month's sales reach.
type creatorRow struct {
	creator.Listed
	Tier    creator.Tier
	HasTier bool
}

type creatorsData struct {
	Creators   []creatorRow
	Pagination Pagination
}

// tiersOf reads campaigns' tiers once per campaign.
type tiersOf struct {
	d          *Dashboard
	merchantID uuid.UUID
	seen       map[uuid.UUID]creator.Tiers
}

func (t *tiersOf) get(ctx context.Context, campaignID uuid.UUID) (creator.Tiers, error) {
	if ts, ok := t.seen[campaignID]; ok {
		return ts, nil
	}
	ts, err := t.d.cfg.Stores.Tiers.FindTiers(ctx, t.merchantID, campaignID)
	if err == nil {
		t.seen[campaignID] = ts
	}
	return ts, err
}

func (d *Dashboard) creators(w http.ResponseWriter, r *http.Request, c *Ctx) {
	page, offset := requestPage(r, creatorsPerPage)
	list, total, err := d.cfg.Stores.Creators.ListCreators(r.Context(), c.MerchantID(), creator.MonthStart(d.now()), offset, creatorsPerPage)
	if err != nil {
		d.fail(w, r, c, err)
		return
	}
	tiers := &tiersOf{d: d, merchantID: c.MerchantID(), seen: map[uuid.UUID]creator.Tiers{}}
	rows := make([]creatorRow, len(list))
	for i, l := range list {
		ts, err := tiers.get(r.Context(), l.CampaignID)
		if err != nil {
			d.fail(w, r, c, err)
			return
		}
		rows[i] = creatorRow{Listed: l}
		rows[i].Tier, rows[i].HasTier = ts.For(l.MonthSales)
	}
	p := NewPagination(r, creatorsPerPage, total)
	p.Page = page
	d.render(w, r, c, Page{Template: "creators", Title: "creators.title", Nav: "creators",
		Data: creatorsData{Creators: rows, Pagination: p}})
}

// sale is a creator's sale as its page shows it: the buyer's e-mail
// masked, as the public sales operation shows it.
type sale struct {
	referral.Referral
	MaskedEmail string
}

type creatorData struct {
	Profile  *creator.Profile
	Member   *member.Member
	MemberID string // mem_…
	// Standing is what the public creator operations show: figures,
	// tiers, the tier reached and the next.
	*creator.Standing
	Sales      []sale
	Pagination Pagination
}

// creatorByPath loads the member of the path's {id} and its creator
// profile; false, with the 404 page written, when either is missing or
// another merchant's.
func (d *Dashboard) creatorByPath(w http.ResponseWriter, r *http.Request, c *Ctx) (*member.Member, *creator.Profile, bool) {
	m, ok := d.memberByPath(w, r, c)
	if !ok {
		return nil, nil, false
	}
	p, err := d.cfg.Stores.Creators.FindCreator(r.Context(), c.MerchantID(), m.ID)
	if err != nil {
		d.fail(w, r, c, err)
		return nil, nil, false
	}
	return m, p, true
}

func (d *Dashboard) creatorPage(w http.ResponseWriter, r *http.Request, c *Ctx) {
	m, p, ok := d.creatorByPath(w, r, c)
	if !ok {
		return
	}
	ctx := r.Context()
	data := creatorData{Profile: p, Member: m, MemberID: ids.Format(ids.Member, m.ID)}
	var err error
	if data.Standing, err = creator.StandingOf(ctx, d.cfg.Stores.Creators, d.cfg.Stores.Tiers,
		creator.Who{MerchantID: c.MerchantID(), MemberID: m.ID, CampaignID: m.CampaignID}, d.now()); err != nil {
		d.fail(w, r, c, err)
		return
	}
	page, offset := requestPage(r, salesPerPage)
	sales, total, err := d.cfg.Stores.Creators.ListCreatorSales(ctx, c.MerchantID(), m.ID, offset, salesPerPage)
	if err != nil {
		d.fail(w, r, c, err)
		return
	}
	for _, s := range sales {
		data.Sales = append(data.Sales, sale{Referral: s, MaskedEmail: creator.MaskEmail(s.RefereeEmail)})
	}
	data.Pagination = NewPagination(r, salesPerPage, total)
	data.Pagination.Page = page
	d.render(w, r, c, Page{Template: "creator", Title: "creators.creator_title", Nav: "creators", Data: data})
}

// creatorFormData is the create and edit form of a profile.
type creatorFormData struct {
	Member      *member.Member // nil on the create form until a member is named
	MemberEmail string
	DisplayName string
	Niche       string
	Instagram   string
	Edit        bool
	Alert       string
	Detail      string
}

func (d *Dashboard) showCreatorForm(w http.ResponseWriter, r *http.Request, c *Ctx, status int, data creatorFormData) {
	title := "creators.new_title"
	if data.Edit {
		title = "creators.edit_title"
	}
	d.render(w, r, c, Page{Template: "creator_form", Title: title, Nav: "creators", Status: status, Data: data})
}

// newCreatorPage is the create form; ?member= (a member's id) fills in
// the member, as the member's page links it.
func (d *Dashboard) newCreatorPage(w http.ResponseWriter, r *http.Request, c *Ctx) {
	data := creatorFormData{}
	if id, ok := ids.Parse(ids.Member, r.URL.Query().Get("member")); ok {
		if m, err := d.cfg.Stores.Members.FindMemberByID(r.Context(), c.MerchantID(), id); err == nil {
			data.Member, data.MemberEmail, data.DisplayName = m, m.Email, m.Name
		}
	}
	d.showCreatorForm(w, r, c, http.StatusOK, data)
}

// profileForm reads the profile's fields as a profile keeps them
// (creator.Profile.Clean), so that a refused form shows them so.
func profileForm(r *http.Request, form *creatorFormData) {
	p := creator.Profile{DisplayName: r.PostFormValue("display_name"), Niche: r.PostFormValue("niche"),
		InstagramUsername: r.PostFormValue("instagram")}.Clean()
	form.DisplayName, form.Niche, form.Instagram = p.DisplayName, p.Niche, p.InstagramUsername
}

// saveCreator stores the profile of form.Member through creator.Put, as
// the API's PUT does, or re-renders the form saying why not.
func (d *Dashboard) saveCreator(w http.ResponseWriter, r *http.Request, c *Ctx, form creatorFormData) {
	_, err := creator.Put(r.Context(), d.cfg.Stores.Creators, creator.Profile{MerchantID: c.MerchantID(), MemberID: form.Member.ID,
		DisplayName: form.DisplayName, Niche: form.Niche, InstagramUsername: form.Instagram})
	if apperr.Is(err, apperr.Invalid) {
		form.Alert, form.Detail = "creators.invalid", problem(c.Lang, err)
		d.showCreatorForm(w, r, c, http.StatusUnprocessableEntity, form)
		return
	}
	if err != nil {
		d.fail(w, r, c, err)
		return
	}
	d.flash(r, "creators.saved_flash")
	http.Redirect(w, r, Prefix+"/creators/"+form.Member.ID.String(), http.StatusSeeOther)
}

// createCreator makes the profile of the member named by its e-mail; a
// member that already has one keeps its token and gets the new fields.
func (d *Dashboard) createCreator(w http.ResponseWriter, r *http.Request, c *Ctx) {
	form := creatorFormData{MemberEmail: strings.TrimSpace(r.PostFormValue("member_email"))}
	profileForm(r, &form)
	m, err := d.cfg.Stores.Members.FindMemberByEmailOrExternalID(r.Context(), c.MerchantID(), form.MemberEmail, "")
	if apperr.Is(err, apperr.NotFound) || form.MemberEmail == "" {
		form.Alert = "creators.no_member"
		d.showCreatorForm(w, r, c, http.StatusUnprocessableEntity, form)
		return
	}
	if err != nil {
		d.fail(w, r, c, err)
		return
	}
	form.Member = m
	d.saveCreator(w, r, c, form)
}

func (d *Dashboard) editCreatorPage(w http.ResponseWriter, r *http.Request, c *Ctx) {
	if m, p, ok := d.creatorByPath(w, r, c); ok {
		d.showCreatorForm(w, r, c, http.StatusOK, creatorFormData{Member: m, MemberEmail: m.Email, Edit: true,
			DisplayName: p.DisplayName, Niche: p.Niche, Instagram: p.InstagramUsername})
	}
}

func (d *Dashboard) updateCreator(w http.ResponseWriter, r *http.Request, c *Ctx) {
	m, _, ok := d.creatorByPath(w, r, c)
	if !ok {
		return
	}
	form := creatorFormData{Member: m, MemberEmail: m.Email, Edit: true}
	profileForm(r, &form)
	d.saveCreator(w, r, c, form)
}

type rotateData struct {
	Profile *creator.Profile
	Member  *member.Member
}

func (d *Dashboard) confirmRotate(w http.ResponseWriter, r *http.Request, c *Ctx) {
	if m, p, ok := d.creatorByPath(w, r, c); ok {
		d.render(w, r, c, Page{Template: "creator_rotate", Title: "creators.rotate_title", Nav: "creators",
			Data: rotateData{Profile: p, Member: m}})
	}
}

// rotateToken gives the profile a new token: the old one stops working at
// once on the public operations.
func (d *Dashboard) rotateToken(w http.ResponseWriter, r *http.Request, c *Ctx) {
	m, _, ok := d.creatorByPath(w, r, c)
	if !ok {
		return
	}
	if _, err := d.cfg.Stores.Creators.RotateCreatorToken(r.Context(), c.MerchantID(), m.ID); err != nil {
		d.fail(w, r, c, err)
		return
	}
	d.flash(r, "creators.rotated_flash")
	http.Redirect(w, r, Prefix+"/creators/"+m.ID.String(), http.StatusSeeOther)
}
