package dashboard

import (
	"net/http"
	"strings"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/campaign"
	"github.com/convida/convida/pkg/member"
)

// The create and edit forms of a member.

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
	campaigns, err := d.cfg.Stores.Campaigns.CampaignChoices(r.Context(), c.MerchantID())
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
	m, _, err := member.Create(r.Context(), d.cfg.Stores.Members, d.cfg.Stores.Campaigns, member.Input{MerchantID: c.MerchantID(),
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
			camp, err = campaign.Resolve(r.Context(), d.cfg.Stores.Campaigns, c.MerchantID(), campaignField, form.Campaign)
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
	if _, err := d.cfg.Stores.Members.UpdateMember(r.Context(), c.MerchantID(), m.ID, upd); err != nil {
		d.fail(w, r, c, err)
		return
	}
	d.flash(r, "members.updated_flash")
	http.Redirect(w, r, Prefix+"/members/"+m.ID.String(), http.StatusSeeOther)
}
