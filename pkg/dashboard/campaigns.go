package dashboard

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/campaign"
	"github.com/convida/convida/pkg/creator"
	"github.com/convida/convida/pkg/ids"
	"github.com/convida/convida/pkg/money"
)

// Campaigns: the list with stats, creation, the edit page (reward type
// locked, default, fraud thresholds, referee discount: one campaign.Update
// through campaign.Edit, as PATCH /api/v1/campaigns/{id}), and the
// commission tiers (replaced whole, as PUT …/tiers).

// CampaignStore creates, lists, reads and updates campaigns
// (postgres.CampaignStore): the contracts the API shares, and the choices
// the members' forms and filters offer.
type CampaignStore interface {
	campaign.Store
	campaign.Catalog
	CampaignChoices
}

const campaignsPerPage = 50

// campaignRow is a campaign as the pages show it.
type campaignRow struct {
	campaign.Campaign
	Stats campaign.Stats
	Ref   string // cmp_…
}

// IsFixed reports whether the reward is an amount (else a percent).
func (c campaignRow) IsFixed() bool { return c.RewardType == campaign.RewardFixed }

type campaignsData struct {
	Campaigns  []campaignRow
	Pagination Pagination
}

// campaignForm is the creation and edit form as typed: amounts in reais
// as the person wrote them, so that a refused form shows them again.
type campaignForm struct {
	Name, RewardType, RewardValue, WarrantyDays, MinRedemption string
	IsActive, IsDefault, AutoRegister                          bool
	MaxReferralsPerHour, MaxCreatorReferralsPerHour            string
	MaxRewardPerMonth                                          string
	BlockDisposableEmails                                      bool
	RefereeDiscountType, RefereeDiscountValue                  string
}

// tierForm is one row of the tiers editor as typed; Num is its number
// on the page (1, 2, …), for the inputs' accessible names.
type tierForm struct {
	Name, MinSales, Percent string
	Num                     int
}

type campaignData struct {
	Campaign  campaignRow // the edit page's campaign; zero on the new page
	Form      campaignForm
	Tiers     []tierForm
	Alert     string // a catalogue key
	Detail    string // the validation's message
	TierAlert string
}

func (d *Dashboard) campaignRoutes() {
	d.page("GET "+Prefix+"/campaigns", d.campaigns)
	d.page("GET "+Prefix+"/campaigns/new", d.newCampaign)
	d.action("POST "+Prefix+"/campaigns", d.createCampaign)
	d.page("GET "+Prefix+"/campaigns/{id}", d.campaign)
	d.action("POST "+Prefix+"/campaigns/{id}", d.updateCampaign)
	d.action("POST "+Prefix+"/campaigns/{id}/default", d.makeDefault)
	d.action("POST "+Prefix+"/campaigns/{id}/tiers", d.replaceTiers)
}

func (d *Dashboard) campaigns(w http.ResponseWriter, r *http.Request, c *Ctx) {
	pageNum := requestedPage(r, campaignsPerPage)
	list, total, err := d.cfg.Stores.Campaigns.ListCampaigns(r.Context(), c.MerchantID(),
		campaign.Filter{Offset: (pageNum - 1) * campaignsPerPage, Limit: campaignsPerPage})
	if err != nil {
		d.fail(w, r, c, err)
		return
	}
	data := campaignsData{Pagination: NewPagination(r, campaignsPerPage, total)}
	for _, l := range list {
		data.Campaigns = append(data.Campaigns, campaignRow{Campaign: l.Campaign, Stats: l.Stats, Ref: ids.Format(ids.Campaign, l.ID)})
	}
	d.render(w, r, c, Page{Template: "campaigns", Title: "campaigns.title", Nav: "campaigns", Data: data})
}

func (d *Dashboard) newCampaign(w http.ResponseWriter, r *http.Request, c *Ctx) {
	form := campaignForm{RewardType: campaign.RewardPercentage, WarrantyDays: strconv.Itoa(campaign.DefaultWarrantyDays),
		MinRedemption: "0", IsActive: true}
	d.render(w, r, c, Page{Template: "campaign_new", Title: "campaigns.new", Nav: "campaigns", Data: campaignData{Form: form}})
}

// readCampaignForm reads the posted form.
func readCampaignForm(r *http.Request) campaignForm {
	v := func(k string) string { return strings.TrimSpace(r.PostFormValue(k)) }
	on := func(k string) bool { return r.PostFormValue(k) == "on" }
	return campaignForm{Name: v("name"), RewardType: v("reward_type"), RewardValue: v("reward_value"),
		WarrantyDays: v("warranty_days"), MinRedemption: v("min_redemption"), IsActive: on("is_active"),
		IsDefault: on("is_default"), AutoRegister: on("auto_register"),
		MaxReferralsPerHour: v("max_referrals_per_hour"), MaxCreatorReferralsPerHour: v("max_creator_referrals_per_hour"),
		MaxRewardPerMonth:     v("max_reward_per_month"),
		BlockDisposableEmails: on("block_disposable_emails"),
		RefereeDiscountType:   v("referee_discount_type"), RefereeDiscountValue: v("referee_discount_value")}
}

// formError is a form field the person must correct: it names the field
// the API would, and the rule it breaks.
func formError(field string, rule apperr.Rule, problem string) error {
	return apperr.Invalidf(field, rule, "%s", problem)
}

// rewardCents reads a reward or discount value of typ: a whole percent
// for a percentage, reais (15,00 or 15.00) for a fixed amount, as cents.
func rewardCents(field, typ, text string) (int64, error) {
	if typ == campaign.RewardFixed {
		cents, err := money.ParseTypedReais(text)
		if err != nil {
			return 0, formError(field, apperr.RuleFormat, "must be an amount in reais, like 15,00")
		}
		return cents, nil
	}
	n, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(text, "%")), 10, 64)
	if err != nil {
		return 0, formError(field, apperr.RulePercent, "must be a whole percent, like 10")
	}
	return n, nil
}

func reais(field, text string) (int64, error) {
	cents, err := money.ParseTypedReais(text)
	if err != nil {
		return 0, formError(field, apperr.RuleFormat, "must be an amount in reais, like 15,00")
	}
	return cents, nil
}

func wholeNumber(field, text string) (int, error) {
	n, err := strconv.Atoi(text)
	if err != nil {
		return 0, formError(field, apperr.RuleFormat, "must be a whole number")
	}
	return n, nil
}

// perHour reads a velocity limit as typed: blank clears it (no limit).
func perHour(field, text string) (*campaign.Change[int], error) {
	c := &campaign.Change[int]{}
	if text == "" {
		return c, nil
	}
	n, err := wholeNumber(field, text)
	if err != nil {
		return nil, err
	}
	c.To = &n
	return c, nil
}

// toUpdate reads the form's figures as a campaign.Update, all fields set
// (the edit form shows them all); blank thresholds clear them.
func (f campaignForm) toUpdate(rewardType string) (campaign.Update, error) {
	upd := campaign.Update{Name: &f.Name, IsActive: &f.IsActive, AutoRegister: &f.AutoRegister,
		BlockDisposableEmails: &f.BlockDisposableEmails}
	value, err := rewardCents("reward_value", rewardType, f.RewardValue)
	if err != nil {
		return upd, err
	}
	days, err := wholeNumber("warranty_days", f.WarrantyDays)
	if err != nil {
		return upd, err
	}
	var minRedemption int64 // blank: none
	if f.MinRedemption != "" {
		if minRedemption, err = reais("min_redemption", f.MinRedemption); err != nil {
			return upd, err
		}
	}
	upd.RewardValue, upd.WarrantyDays, upd.MinRedemption = &value, &days, &minRedemption
	if upd.MaxReferralsPerHour, err = perHour("max_referrals_per_hour", f.MaxReferralsPerHour); err != nil {
		return upd, err
	}
	if upd.MaxCreatorReferralsPerHour, err = perHour("max_creator_referrals_per_hour", f.MaxCreatorReferralsPerHour); err != nil {
		return upd, err
	}
	upd.MaxRewardPerMonth = &campaign.Change[int64]{}
	if f.MaxRewardPerMonth != "" {
		cents, err := reais("max_reward_per_month", f.MaxRewardPerMonth)
		if err != nil {
			return upd, err
		}
		upd.MaxRewardPerMonth.To = &cents
	}
	upd.RefereeDiscountType = &f.RefereeDiscountType
	var discount int64
	if f.RefereeDiscountType != "" {
		if discount, err = rewardCents("referee_discount_value", f.RefereeDiscountType, f.RefereeDiscountValue); err != nil {
			return upd, err
		}
	}
	upd.RefereeDiscountValue = &discount
	return upd, nil
}

func (d *Dashboard) createCampaign(w http.ResponseWriter, r *http.Request, c *Ctx) {
	form := readCampaignForm(r)
	refuse := func(err error) {
		d.render(w, r, c, Page{Template: "campaign_new", Title: "campaigns.new", Nav: "campaigns", Status: http.StatusUnprocessableEntity,
			Data: campaignData{Form: form, Alert: "campaigns.invalid", Detail: problem(c.Lang, err)}})
	}
	if form.RewardType != campaign.RewardFixed && form.RewardType != campaign.RewardPercentage {
		refuse(formError("reward_type", apperr.RuleNotAllowed, "must be percentage or fixed"))
		return
	}
	// A new campaign starts from the API's defaults (campaign.DefaultRules);
	// the form's figures are applied to it as an edit would be.
	next := campaign.Campaign{MerchantID: c.MerchantID(), RewardType: form.RewardType, Rules: campaign.DefaultRules()}
	form.MaxReferralsPerHour = strconv.Itoa(*next.MaxReferralsPerHour)
	form.BlockDisposableEmails = next.BlockDisposableEmails
	upd, err := form.toUpdate(form.RewardType)
	if err != nil {
		refuse(err)
		return
	}
	next = upd.Apply(next)
	next.IsDefault = form.IsDefault
	if err := next.Validate(); err != nil {
		refuse(err)
		return
	}
	if err := d.cfg.Stores.Campaigns.CreateCampaign(r.Context(), &next); err != nil {
		if apperr.Is(err, apperr.Invalid) {
			refuse(err)
			return
		}
		d.fail(w, r, c, err)
		return
	}
	d.flash(r, "campaigns.created_flash")
	http.Redirect(w, r, Prefix+"/campaigns", http.StatusSeeOther)
}

// findCampaign reads the path's campaign of the signed-in merchant; false
// (and the 404 page written) for a bad id or another merchant's.
func (d *Dashboard) findCampaign(w http.ResponseWriter, r *http.Request, c *Ctx) (*campaign.Campaign, bool) {
	id, ok := ids.Parse(ids.Campaign, r.PathValue("id"))
	if !ok {
		d.notFound(w, r, c)
		return nil, false
	}
	cp, err := d.cfg.Stores.Campaigns.FindCampaignByID(r.Context(), c.MerchantID(), id)
	if err != nil {
		d.fail(w, r, c, err)
		return nil, false
	}
	return cp, true
}

// formOf is the edit form of cp as stored, its figures written for lang.
func formOf(lang string, cp *campaign.Campaign) campaignForm {
	value := strconv.FormatInt(cp.RewardValue, 10)
	if cp.RewardType == campaign.RewardFixed {
		value = TypedReais(lang, cp.RewardValue)
	}
	f := campaignForm{Name: cp.Name, RewardType: cp.RewardType, RewardValue: value, WarrantyDays: strconv.Itoa(cp.WarrantyDays),
		MinRedemption: TypedReais(lang, cp.MinRedemption), IsActive: cp.IsActive, IsDefault: cp.IsDefault,
		AutoRegister: cp.AutoRegister, BlockDisposableEmails: cp.BlockDisposableEmails, RefereeDiscountType: cp.RefereeDiscountType}
	if cp.MaxReferralsPerHour != nil {
		f.MaxReferralsPerHour = strconv.Itoa(*cp.MaxReferralsPerHour)
	}
	if cp.MaxCreatorReferralsPerHour != nil {
		f.MaxCreatorReferralsPerHour = strconv.Itoa(*cp.MaxCreatorReferralsPerHour)
	}
	if cp.MaxRewardPerMonth != nil {
		f.MaxRewardPerMonth = TypedReais(lang, *cp.MaxRewardPerMonth)
	}
	switch cp.RefereeDiscountType {
	case campaign.RewardFixed:
		f.RefereeDiscountValue = TypedReais(lang, cp.RefereeDiscountValue)
	case campaign.RewardPercentage:
		f.RefereeDiscountValue = strconv.FormatInt(cp.RefereeDiscountValue, 10)
	}
	return f
}

func tierRows(lang string, ts creator.Tiers) []tierForm {
	rows := make([]tierForm, 0, len(ts)+3)
	for _, t := range ts {
		rows = append(rows, tierForm{Name: t.Name, MinSales: strconv.Itoa(t.MinSales),
			Percent: FormatDecimal(lang, t.Percent())})
	}
	// Three empty rows to add tiers without JavaScript.
	return append(rows, tierForm{}, tierForm{}, tierForm{})
}

// showCampaign renders the edit page of cp with data's form, tiers and
// alerts (the stored ones when data has none).
func (d *Dashboard) showCampaign(w http.ResponseWriter, r *http.Request, c *Ctx, status int, cp *campaign.Campaign, data campaignData) {
	data.Campaign = campaignRow{Campaign: *cp, Ref: ids.Format(ids.Campaign, cp.ID)}
	if data.Form == (campaignForm{}) {
		data.Form = formOf(c.Lang, cp)
	}
	if data.Tiers == nil {
		ts, err := d.cfg.Stores.Tiers.FindTiers(r.Context(), c.MerchantID(), cp.ID)
		if err != nil {
			d.fail(w, r, c, err)
			return
		}
		data.Tiers = tierRows(c.Lang, ts)
	}
	for i := range data.Tiers {
		data.Tiers[i].Num = i + 1
	}
	d.render(w, r, c, Page{Template: "campaign", Title: "campaigns.edit", Nav: "campaigns", Status: status, Data: data})
}

func (d *Dashboard) campaign(w http.ResponseWriter, r *http.Request, c *Ctx) {
	if cp, ok := d.findCampaign(w, r, c); ok {
		d.showCampaign(w, r, c, http.StatusOK, cp, campaignData{})
	}
}

// updateCampaign saves the edit form through campaign.Edit, the path of
// PATCH /api/v1/campaigns/{id}. The reward type is not read: it is locked.
func (d *Dashboard) updateCampaign(w http.ResponseWriter, r *http.Request, c *Ctx) {
	cp, ok := d.findCampaign(w, r, c)
	if !ok {
		return
	}
	form := readCampaignForm(r)
	form.RewardType, form.IsDefault = cp.RewardType, cp.IsDefault
	upd, err := form.toUpdate(cp.RewardType)
	if err == nil {
		_, err = campaign.Edit(r.Context(), d.cfg.Stores.Campaigns, c.MerchantID(), cp.ID, upd)
	}
	switch {
	case apperr.Is(err, apperr.Invalid):
		d.showCampaign(w, r, c, http.StatusUnprocessableEntity, cp, campaignData{Form: form, Alert: "campaigns.invalid", Detail: problem(c.Lang, err)})
		return
	case err != nil:
		d.fail(w, r, c, err)
		return
	}
	d.flash(r, "campaigns.saved_flash")
	http.Redirect(w, r, Prefix+"/campaigns/"+url.PathEscape(ids.Format(ids.Campaign, cp.ID)), http.StatusSeeOther)
}

func (d *Dashboard) makeDefault(w http.ResponseWriter, r *http.Request, c *Ctx) {
	cp, ok := d.findCampaign(w, r, c)
	if !ok {
		return
	}
	yes := true
	if _, err := campaign.Edit(r.Context(), d.cfg.Stores.Campaigns, c.MerchantID(), cp.ID, campaign.Update{IsDefault: &yes}); err != nil {
		d.fail(w, r, c, err)
		return
	}
	d.flash(r, "campaigns.default_flash")
	http.Redirect(w, r, Prefix+"/campaigns/"+url.PathEscape(ids.Format(ids.Campaign, cp.ID)), http.StatusSeeOther)
}

// maxTierRows bounds the rows the tiers form is read for.
const maxTierRows = creator.MaxTiers + 3

// readTiers reads the tiers form's rows (name_0, min_sales_0,
// percent_0, …); a row left wholly blank is skipped. The rows as typed
// come back for showing again.
func readTiers(r *http.Request) (creator.Tiers, []tierForm, error) {
	var rows []tierForm
	for i := range maxTierRows {
		n := strconv.Itoa(i)
		row := tierForm{Name: strings.TrimSpace(r.PostFormValue("name_" + n)), MinSales: strings.TrimSpace(r.PostFormValue("min_sales_" + n)),
			Percent: strings.TrimSpace(r.PostFormValue("percent_" + n))}
		if row != (tierForm{}) {
			rows = append(rows, row)
		}
	}
	tiers := make(creator.Tiers, 0, len(rows))
	for i, row := range rows {
		minSales, err := strconv.Atoi(row.MinSales)
		if err != nil || minSales < 0 || minSales > creator.MaxMinSales {
			return nil, rows, apperr.Invalidf(fmt.Sprintf("tiers[%d].min_sales", i), apperr.RuleOutOfRange, "is required, an integer from 0 to %d", creator.MaxMinSales).WithLimit(creator.MaxMinSales)
		}
		bp, err := creator.ParsePercent(strings.Replace(strings.TrimSuffix(row.Percent, "%"), ",", ".", 1))
		if err != nil {
			return nil, rows, apperr.Invalidf(fmt.Sprintf("tiers[%d].commission_percent", i), apperr.RuleOutOfRange, "%v", err).WithLimit(100)
		}
		tiers = append(tiers, creator.Tier{Name: row.Name, MinSales: minSales, CommissionBP: bp})
	}
	return tiers, rows, tiers.Validate()
}

// replaceTiers replaces the campaign's tiers with the form's rows, as PUT
// /api/v1/campaigns/{id}/tiers does.
func (d *Dashboard) replaceTiers(w http.ResponseWriter, r *http.Request, c *Ctx) {
	cp, ok := d.findCampaign(w, r, c)
	if !ok {
		return
	}
	tiers, rows, err := readTiers(r)
	if err == nil {
		err = d.cfg.Stores.Tiers.ReplaceTiers(r.Context(), c.MerchantID(), cp.ID, tiers)
	}
	switch {
	case apperr.Is(err, apperr.Invalid):
		d.showCampaign(w, r, c, http.StatusUnprocessableEntity, cp, campaignData{Tiers: append(rows, tierForm{}),
			TierAlert: problem(c.Lang, err)})
		return
	case err != nil:
		d.fail(w, r, c, err)
		return
	}
	d.flash(r, "campaigns.tiers_flash")
	http.Redirect(w, r, Prefix+"/campaigns/"+url.PathEscape(ids.Format(ids.Campaign, cp.ID)), http.StatusSeeOther)
}
