package httpapi_test

import (
	"net/http"
	"testing"
)

// The fraud thresholds and the referee discount (issue 11): defaulted on
// creation, patchable, cleared by null, validated with the field named.
func TestCampaignRules(t *testing.T) {
	t.Parallel()
	env := mustCatalogEnv(t)
	tn := env.mustTenant(t)

	r := tn.do(t, http.MethodPost, "/api/v1/campaigns", map[string]any{"name": "Padrão", "reward_type": "fixed", "reward_value": 1500})
	wantStatus(t, r, http.StatusCreated)
	wantFields(t, r, map[string]any{
		"data.max_referrals_per_hour": 20, "data.max_creator_referrals_per_hour": nil, "data.max_reward_per_month": nil,
		"data.block_disposable_emails": true, "data.referee_discount_type": nil, "data.referee_discount_value": 0,
	})
	id := str(t, r, "data.id")

	r = tn.do(t, http.MethodPost, "/api/v1/campaigns", map[string]any{"name": "Amigos", "reward_type": "percentage",
		"reward_value": 10, "max_referrals_per_hour": 5, "max_creator_referrals_per_hour": 600, "max_reward_per_month": 50000,
		"block_disposable_emails": false, "referee_discount_type": "percentage", "referee_discount_value": 15})
	wantStatus(t, r, http.StatusCreated)
	wantFields(t, r, map[string]any{
		"data.max_referrals_per_hour": 5, "data.max_creator_referrals_per_hour": 600, "data.max_reward_per_month": 50000, "data.block_disposable_emails": false,
		"data.referee_discount_type": "percentage", "data.referee_discount_value": 15,
	})

	r = tn.do(t, http.MethodPatch, "/api/v1/campaigns/"+id, map[string]any{"max_referrals_per_hour": nil,
		"max_creator_referrals_per_hour": 500, "max_reward_per_month": 10000, "referee_discount_type": "fixed", "referee_discount_value": 990})
	wantStatus(t, r, http.StatusOK)
	wantFields(t, r, map[string]any{
		"data.max_referrals_per_hour": nil, "data.max_creator_referrals_per_hour": 500, "data.max_reward_per_month": 10000, "data.block_disposable_emails": true,
		"data.referee_discount_type": "fixed", "data.referee_discount_value": 990,
	})
	// A patch of one field leaves the others; null clears the discount.
	r = tn.do(t, http.MethodPatch, "/api/v1/campaigns/"+id, map[string]any{"referee_discount_type": nil, "block_disposable_emails": false})
	wantStatus(t, r, http.StatusOK)
	wantFields(t, r, map[string]any{
		"data.max_referrals_per_hour": nil, "data.max_creator_referrals_per_hour": 500, "data.max_reward_per_month": 10000,
		"data.block_disposable_emails": false, "data.referee_discount_type": nil, "data.referee_discount_value": 0,
	})
	// Null takes the creator limit off again: creators are exempt.
	r = tn.do(t, http.MethodPatch, "/api/v1/campaigns/"+id, map[string]any{"max_creator_referrals_per_hour": nil})
	wantStatus(t, r, http.StatusOK)
	wantFields(t, r, map[string]any{"data.max_creator_referrals_per_hour": nil, "data.max_reward_per_month": 10000})
	r = tn.do(t, http.MethodGet, "/api/v1/campaigns/"+id, nil)
	wantStatus(t, r, http.StatusOK)
	wantFields(t, r, map[string]any{"data.max_creator_referrals_per_hour": nil})

	for _, tt := range []struct {
		body     map[string]any
		mentions string
	}{
		{map[string]any{"max_referrals_per_hour": 0}, "max_referrals_per_hour"},
		{map[string]any{"max_referrals_per_hour": 1 << 40}, "max_referrals_per_hour"},
		{map[string]any{"max_creator_referrals_per_hour": 0}, "max_creator_referrals_per_hour"},
		{map[string]any{"max_creator_referrals_per_hour": 1 << 40}, "max_creator_referrals_per_hour"},
		{map[string]any{"max_creator_referrals_per_hour": "many"}, "max_creator_referrals_per_hour"},
		{map[string]any{"max_reward_per_month": -1}, "max_reward_per_month"},
		{map[string]any{"referee_discount_type": "bogus"}, "referee_discount_type"},
		{map[string]any{"referee_discount_type": 3}, "referee_discount_type"},
		{map[string]any{"referee_discount_value": 10}, "referee_discount_value"},
		{map[string]any{"referee_discount_type": "percentage", "referee_discount_value": 101}, "referee_discount_value"},
		{map[string]any{"referee_discount_type": "fixed", "referee_discount_value": 0}, "referee_discount_value"},
		{map[string]any{"block_disposable_emails": "yes"}, "block_disposable_emails"},
	} {
		wantError(t, tn.do(t, http.MethodPatch, "/api/v1/campaigns/"+id, tt.body), http.StatusBadRequest, "validation_error", tt.mentions)
	}
}
