package httpapi_test

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// TestCampaignTierOperations: PUT replaces a campaign's tiers, exactly as
// sent (percents read from their text), GET reads them; refused lists leave
// them as they were.
func TestCampaignTierOperations(t *testing.T) {
	t.Parallel()
	env := mustCreatorEnv(t, creatorEnvOptions{})
	tn := env.mustTenant(t)
	camp := tn.mustCampaign(t, map[string]any{"name": "Padrão", "reward_type": "fixed", "reward_value": 1000})
	path := "/api/v1/campaigns/" + camp + "/tiers"

	r := tn.get(t, path)
	wantStatus(t, r, http.StatusOK)
	wantLen(t, r, "data.tiers", 0)

	r = tn.do(t, http.MethodPut, path, `{"tiers": [{"name": "Bronze", "min_sales": 0, "commission_percent": 10},
		{"name": "Silver", "min_sales": 3, "commission_percent": 15.5}, {"name": " Gold ", "min_sales": 10, "commission_percent": 20.250}]}`)
	wantStatus(t, r, http.StatusOK)
	wantKeys(t, r, "data", "tiers")
	wantLen(t, r, "data.tiers", 3)
	wantKeys(t, r, "data.tiers.0", "name", "min_sales", "commission_percent")
	for i, want := range []struct {
		name     string
		minSales int
		percent  string
	}{{"Bronze", 0, "10"}, {"Silver", 3, "15.5"}, {"Gold", 10, "20.25"}} {
		p := "data.tiers." + strconv.Itoa(i)
		wantFields(t, r, map[string]any{p + ".name": want.name, p + ".min_sales": want.minSales})
		if got, _ := at(r.json, p+".commission_percent"); fmt.Sprint(got) != want.percent {
			t.Errorf("%s.commission_percent = %v, want %s", p, got, want.percent)
		}
	}
	if got := tn.get(t, path); !jsonEqual(got.json, r.json) {
		t.Errorf("GET = %s, want the PUT's answer %s", got.raw, r.raw)
	}

	// A refused list leaves the stored one as it was.
	for _, c := range []struct{ body, mentions string }{
		{`{}`, "tiers"},
		{`{"tiers": null}`, "tiers"},
		{`[{"name": "Bronze", "min_sales": 0, "commission_percent": 10}]`, ""},
		{`{"tiers": [{"name": "A", "min_sales": 0, "commission_percent": 10}, {"name": "a", "min_sales": 1, "commission_percent": 10}]}`, "tiers[1].name"},
		{`{"tiers": [{"name": "A", "min_sales": 2, "commission_percent": 10}, {"name": "B", "min_sales": 2, "commission_percent": 10}]}`, "tiers[1].min_sales"},
		{`{"tiers": [{"name": "", "min_sales": 0, "commission_percent": 10}]}`, "tiers[0].name"},
		{`{"tiers": [{"name": "A", "commission_percent": 10}]}`, "tiers[0].min_sales"},
		{`{"tiers": [{"name": "A", "min_sales": -1, "commission_percent": 10}]}`, "tiers[0].min_sales"},
		{`{"tiers": [{"name": "A", "min_sales": 1.5, "commission_percent": 10}]}`, "min_sales"},
		{`{"tiers": [{"name": "A", "min_sales": 0}]}`, "tiers[0].commission_percent"},
		{`{"tiers": [{"name": "A", "min_sales": 0, "commission_percent": 100.01}]}`, "tiers[0].commission_percent"},
		{`{"tiers": [{"name": "A", "min_sales": 0, "commission_percent": 1000}]}`, "tiers[0].commission_percent"},
		{`{"tiers": [{"name": "A", "min_sales": 0, "commission_percent": 15.555}]}`, "tiers[0].commission_percent"},
		{`{"tiers": [{"name": "A", "min_sales": 0, "commission_percent": -1}]}`, "tiers[0].commission_percent"},
		{`{"tiers": [{"name": "A", "min_sales": 0, "commission_percent": 1e1}]}`, "tiers[0].commission_percent"},
		{`{"tiers": [{"name": "A", "min_sales": 0, "commission_percent": "15"}]}`, "tiers[0].commission_percent"},
		{`{"tiers": [{"name": "A", "min_sales": 0, "commission_percent": null}]}`, "tiers[0].commission_percent"},
		{`{"tiers": "Bronze"}`, "tiers"},
	} {
		wantError(t, tn.do(t, http.MethodPut, path, c.body), http.StatusBadRequest, "validation_error", c.mentions)
	}
	var many []map[string]any
	for i := range 51 {
		many = append(many, map[string]any{"name": "T" + strconv.Itoa(i), "min_sales": i, "commission_percent": 1})
	}
	wantError(t, tn.do(t, http.MethodPut, path, map[string]any{"tiers": many}), http.StatusBadRequest, "validation_error", "tiers")
	wantError(t, tn.get(t, path+"?x=%00"), http.StatusBadRequest, "validation_error", "x")
	wantError(t, tn.do(t, http.MethodPut, path, map[string]any{"tiers": []any{}, "pad": strings.Repeat("p", 1<<20)}),
		http.StatusRequestEntityTooLarge, "payload_too_large", "")
	if got := tn.get(t, path); !jsonEqual(got.json, r.json) {
		t.Errorf("after refused PUTs: GET = %s, want %s", got.raw, r.raw)
	}

	// Unknown campaigns and no key.
	for _, p := range []string{"/api/v1/campaigns/camp_" + strings.Repeat("0", 32) + "/tiers", "/api/v1/campaigns/x/tiers"} {
		wantError(t, tn.get(t, p), http.StatusNotFound, "not_found", "")
		wantError(t, tn.do(t, http.MethodPut, p, bronzeSilverGold), http.StatusNotFound, "not_found", "")
	}
	wantError(t, env.call(t, request{method: http.MethodGet, path: path}), http.StatusUnauthorized, "unauthorized", "")
	wantError(t, env.call(t, request{method: http.MethodPut, path: path, body: bronzeSilverGold}), http.StatusUnauthorized, "unauthorized", "")

	// 0 and 100 are the ends; an empty list removes every tier.
	r = tn.do(t, http.MethodPut, path, `{"tiers": [{"name": "Zero", "min_sales": 0, "commission_percent": 0}, {"name": "All", "min_sales": 1, "commission_percent": 100.00}]}`)
	wantStatus(t, r, http.StatusOK)
	wantFields(t, r, map[string]any{"data.tiers.0.commission_percent": 0, "data.tiers.1.commission_percent": 100})
	wantLen(t, tn.do(t, http.MethodPut, path, `{"tiers": []}`), "data.tiers", 0)
	wantLen(t, tn.get(t, path), "data.tiers", 0)

	env.v.WantExercised(t, ex("putCampaignTiers", 200), ex("putCampaignTiers", 400), ex("putCampaignTiers", 401),
		ex("putCampaignTiers", 404), ex("putCampaignTiers", 413),
		ex("getCampaignTiers", 200), ex("getCampaignTiers", 400), ex("getCampaignTiers", 401), ex("getCampaignTiers", 404))
}
