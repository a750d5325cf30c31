package dashboard_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/campaign"
	"github.com/convida/convida/pkg/ids"
	"github.com/convida/convida/pkg/postgres"
	"github.com/convida/convida/pkg/testenv"
)

// apiJSON calls the admin API with the demo merchant's key.
func (e *env) apiJSON(method, path string, out any) int {
	e.t.Helper()
	req, _ := http.NewRequest(method, e.url+"/api/v1"+path, nil)
	req.Header.Set("X-API-Key", e.demo.APIKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		e.t.Fatalf("%s %s: %v", method, path, err)
	}
	return resp.StatusCode
}

type apiCampaign struct {
	ID                         string  `json:"id"`
	Name                       string  `json:"name"`
	RewardType                 string  `json:"reward_type"`
	RewardValue                int64   `json:"reward_value"`
	WarrantyDays               int     `json:"warranty_days"`
	MinRedemption              int64   `json:"min_redemption"`
	IsDefault                  bool    `json:"is_default"`
	MaxReferralsPerHour        *int    `json:"max_referrals_per_hour"`
	MaxCreatorReferralsPerHour *int    `json:"max_creator_referrals_per_hour"`
	MaxRewardPerMonth          *int64  `json:"max_reward_per_month"`
	BlockDisposableEmails      bool    `json:"block_disposable_emails"`
	RefereeDiscountType        *string `json:"referee_discount_type"`
	RefereeDiscountValue       int64   `json:"referee_discount_value"`
}

// campaignNamed reads the demo merchant's campaign name from the API.
func (e *env) campaignNamed(name string) apiCampaign {
	e.t.Helper()
	var list struct{ Data []apiCampaign }
	if status := e.apiJSON(http.MethodGet, "/campaigns?per_page=100", &list); status != http.StatusOK {
		e.t.Fatalf("GET /campaigns: %d", status)
	}
	for _, c := range list.Data {
		if c.Name == name {
			return c
		}
	}
	e.t.Fatalf("no campaign %q in the API's list", name)
	return apiCampaign{}
}

// Create a fixed campaign in reais, refuse bad figures with an alert, edit
// its rules and discount (the reward type locked), make it the default,
// and edit its tiers: each change as the API then shows it.
func TestCampaignsCreateEditTiers(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	owner := e.owner()

	base := url.Values{"name": {"Base"}, "reward_type": {"percentage"}, "reward_value": {"10"}, "warranty_days": {"7"}, "is_default": {"on"}}
	if r := e.do(owner, http.MethodPost, "/dashboard/campaigns", base); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("create the default campaign: %d: %s", r.StatusCode, r.body)
	}
	if c := e.campaignNamed("Base"); !c.IsDefault || c.RewardValue != 10 || c.MinRedemption != 0 {
		t.Errorf("the default campaign as the API shows it: %+v", c)
	}
	form := url.Values{"name": {"Amigos"}, "reward_type": {"fixed"}, "reward_value": {"15,00"}, "warranty_days": {"7"},
		"min_redemption": {"20"}, "is_active": {"on"}}
	r := e.do(owner, http.MethodPost, "/dashboard/campaigns", form)
	if r.StatusCode != http.StatusSeeOther || r.Header.Get("Location") != "/dashboard/campaigns" {
		t.Fatalf("create: %d %q: %s", r.StatusCode, r.Header.Get("Location"), r.body)
	}
	c := e.campaignNamed("Amigos")
	if c.RewardType != "fixed" || c.RewardValue != 1500 || c.WarrantyDays != 7 || c.MinRedemption != 2000 || c.IsDefault ||
		c.MaxReferralsPerHour == nil || *c.MaxReferralsPerHour != campaign.DefaultMaxReferralsPerHour || c.MaxCreatorReferralsPerHour != nil ||
		!c.BlockDisposableEmails {
		t.Errorf("the created campaign as the API shows it: %+v", c)
	}
	list := e.do(owner, http.MethodGet, "/dashboard/campaigns", nil)
	if !strings.Contains(list.body, "Amigos") || !strings.Contains(list.body, "R$15.00") || !strings.Contains(list.body, "The campaign was created.") {
		t.Errorf("the list after creating does not show it with R$15.00: %s", list.body)
	}

	for _, bad := range []url.Values{
		{"name": {"X"}, "reward_type": {"fixed"}, "reward_value": {"15,001"}, "warranty_days": {"7"}},
		{"name": {"X"}, "reward_type": {"percentage"}, "reward_value": {"101"}, "warranty_days": {"7"}},
		{"name": {" "}, "reward_type": {"percentage"}, "reward_value": {"10"}, "warranty_days": {"7"}},
		{"name": {"X"}, "reward_type": {"bonus"}, "reward_value": {"10"}, "warranty_days": {"7"}},
		{"name": {"X"}, "reward_type": {"percentage"}, "reward_value": {"10"}, "warranty_days": {"-1"}},
	} {
		r := e.do(owner, http.MethodPost, "/dashboard/campaigns", bad)
		if r.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(r.body, `role="alert"`) {
			t.Errorf("create %v: %d, want 422 with an alert", bad, r.StatusCode)
		}
	}

	path := "/dashboard/campaigns/" + c.ID
	edit := url.Values{"name": {"Amigos VIP"}, "reward_type": {"percentage"}, "reward_value": {"20.50"}, "warranty_days": {"10"},
		"min_redemption": {"0"}, "is_active": {"on"}, "max_referrals_per_hour": {"5"}, "max_creator_referrals_per_hour": {"600"},
		"max_reward_per_month":  {"R$ 1.000,00"},
		"referee_discount_type": {"percentage"}, "referee_discount_value": {"10"}}
	if r := e.do(owner, http.MethodPost, path, edit); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("edit: %d: %s", r.StatusCode, r.body)
	}
	c = e.campaignNamed("Amigos VIP")
	if c.RewardType != "fixed" || c.RewardValue != 2050 || c.WarrantyDays != 10 || *c.MaxReferralsPerHour != 5 ||
		c.MaxCreatorReferralsPerHour == nil || *c.MaxCreatorReferralsPerHour != 600 ||
		c.MaxRewardPerMonth == nil || *c.MaxRewardPerMonth != 100000 || c.BlockDisposableEmails ||
		c.RefereeDiscountType == nil || *c.RefereeDiscountType != "percentage" || c.RefereeDiscountValue != 10 {
		t.Errorf("the edited campaign as the API shows it: %+v", c)
	}
	page := e.do(owner, http.MethodGet, path, nil)
	for _, want := range []string{`name="max_creator_referrals_per_hour" inputmode="numeric" value="600"`,
		"It does not apply to creators.", "Blank, the default: none of a creator&#39;s sales is held"} {
		if !strings.Contains(page.body, want) {
			t.Errorf("the edit page does not show %q", want)
		}
	}
	// Blank takes the creator limit off again.
	edit.Set("max_creator_referrals_per_hour", "")
	if r := e.do(owner, http.MethodPost, path, edit); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("edit: %d: %s", r.StatusCode, r.body)
	}
	if c = e.campaignNamed("Amigos VIP"); c.MaxCreatorReferralsPerHour != nil || *c.MaxReferralsPerHour != 5 {
		t.Errorf("a blank creator limit: the API shows max_creator_referrals_per_hour %v, max_referrals_per_hour %v; want null, 5",
			c.MaxCreatorReferralsPerHour, *c.MaxReferralsPerHour)
	}
	edit.Set("max_creator_referrals_per_hour", "0")
	if r := e.do(owner, http.MethodPost, path, edit); r.StatusCode != http.StatusUnprocessableEntity ||
		!strings.Contains(r.body, `role="alert"`) || !strings.Contains(r.body, "max_creator_referrals_per_hour") {
		t.Errorf("a creator limit of 0: %d, want 422 naming the field", r.StatusCode)
	}
	edit.Set("max_creator_referrals_per_hour", "")
	edit.Set("max_referrals_per_hour", "")
	edit.Set("referee_discount_value", "101")
	if r := e.do(owner, http.MethodPost, path, edit); r.StatusCode != http.StatusUnprocessableEntity ||
		!strings.Contains(r.body, `role="alert"`) || !strings.Contains(r.body, "referee_discount_value") {
		t.Errorf("a 101 %% discount: %d, want 422 naming the field", r.StatusCode)
	}

	if r := e.do(owner, http.MethodPost, path+"/default", url.Values{}); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("make default: %d: %s", r.StatusCode, r.body)
	}
	if c = e.campaignNamed("Amigos VIP"); !c.IsDefault {
		t.Errorf("after Make default the campaign is not the default")
	}

	bad := url.Values{"name_0": {"Bronze"}, "min_sales_0": {"5"}, "percent_0": {"10"}, "name_1": {"Silver"}, "min_sales_1": {"3"}, "percent_1": {"15"}}
	if r := e.do(owner, http.MethodPost, path+"/tiers", bad); r.StatusCode != http.StatusUnprocessableEntity ||
		!strings.Contains(r.body, `role="alert"`) || !strings.Contains(r.body, `value="Silver"`) {
		t.Errorf("decreasing min sales: %d, want 422 with an alert and the rows kept", r.StatusCode)
	}
	tiers := url.Values{"name_0": {"Bronze"}, "min_sales_0": {"0"}, "percent_0": {"10"}, "name_1": {"Silver"}, "min_sales_1": {"3"},
		"percent_1": {"15,5"}, "name_3": {"Gold"}, "min_sales_3": {"10"}, "percent_3": {"20"}}
	if r := e.do(owner, http.MethodPost, path+"/tiers", tiers); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("save tiers: %d: %s", r.StatusCode, r.body)
	}
	var got struct {
		Data struct {
			Tiers []struct {
				Name              string  `json:"name"`
				MinSales          int     `json:"min_sales"`
				CommissionPercent float64 `json:"commission_percent"`
			}
		}
	}
	e.apiJSON(http.MethodGet, "/campaigns/"+c.ID+"/tiers", &got)
	if len(got.Data.Tiers) != 3 || got.Data.Tiers[1].Name != "Silver" || got.Data.Tiers[1].CommissionPercent != 15.5 || got.Data.Tiers[2].MinSales != 10 {
		t.Errorf("tiers as the API shows them: %+v", got.Data.Tiers)
	}
	page = e.do(owner, http.MethodGet, path, nil)
	if !strings.Contains(page.body, `value="Gold"`) || !strings.Contains(page.body, `value="15.5"`) || !strings.Contains(page.body, "The tiers were saved.") {
		t.Errorf("the campaign page does not show the saved tiers")
	}
}

// A viewer sees the campaigns and changes none; another merchant's
// campaign is not found, to look at or to change.
func TestCampaignsViewerAndOtherMerchant(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	other := e.register("Outra Loja", "https://outra.example.com", "OUTRA")
	theirs := testenv.MustCampaign(t, e.deps.Pool, uuid.MustParse(other.MerchantID), testenv.FixedCampaign(500, 7))
	owner, viewer := e.owner(), e.viewer()
	theirPath := "/dashboard/campaigns/" + ids.Format(ids.Campaign, theirs.ID)
	for _, p := range []string{theirPath, "/dashboard/campaigns/cmp_nope", "/dashboard/campaigns/" + uuid.NewString()} {
		if r := e.do(owner, http.MethodGet, p, nil); r.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", p, r.StatusCode)
		}
	}
	for _, p := range []string{theirPath, theirPath + "/default", theirPath + "/tiers"} {
		if r := e.do(owner, http.MethodPost, p, url.Values{"name": {"Mine"}, "reward_value": {"1"}, "warranty_days": {"1"}, "min_redemption": {"0"}}); r.StatusCode != http.StatusNotFound {
			t.Errorf("POST %s: %d, want 404", p, r.StatusCode)
		}
	}
	if c, err := e.campaignStore().FindCampaignByID(context.Background(), theirs.MerchantID, theirs.ID); err != nil || c.Name != "Fixo" || c.IsDefault != theirs.IsDefault {
		t.Errorf("the other merchant's campaign changed: %+v %v", c, err)
	}
	if r := e.do(viewer, http.MethodGet, "/dashboard/campaigns", nil); r.StatusCode != http.StatusOK || strings.Contains(r.body, "New campaign") {
		t.Errorf("a viewer's campaigns: %d (a viewer has no New campaign link)", r.StatusCode)
	}
	r := e.do(viewer, http.MethodPost, "/dashboard/campaigns", url.Values{"name": {"V"}, "reward_type": {"fixed"}, "reward_value": {"1"}, "warranty_days": {"1"}})
	if r.StatusCode != http.StatusForbidden || !strings.Contains(r.body, "viewer") {
		t.Errorf("a viewer's creation: %d, want 403", r.StatusCode)
	}
}

func (e *env) campaignStore() *postgres.CampaignStore { return postgres.NewCampaignStore(e.deps.Pool) }
