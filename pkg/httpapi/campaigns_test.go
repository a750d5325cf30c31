package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/ledger"
)

var campaignKeys = []string{"id", "name", "reward_type", "reward_value", "warranty_days", "min_redemption",
	"is_active", "is_default", "auto_register", "max_referrals_per_hour", "max_creator_referrals_per_hour", "max_reward_per_month",
	"block_disposable_emails", "referee_discount_type", "referee_discount_value", "stats", "created_at", "updated_at"}

func TestCreateCampaign(t *testing.T) {
	t.Parallel()
	env := mustEnv(t)
	tn := env.mustTenant(t)

	// The first campaign, with every default.
	r := tn.do(t, http.MethodPost, "/api/v1/campaigns", map[string]any{"name": "Padrão", "reward_type": "fixed", "reward_value": 1500})
	wantStatus(t, r, http.StatusCreated)
	wantKeys(t, r, "", "data")
	wantKeys(t, r, "data", campaignKeys...)
	wantKeys(t, r, "data.stats", "total_members", "total_referrals", "total_rewards_paid")
	wantFields(t, r, map[string]any{
		"data.id": reCampID, "data.name": "Padrão", "data.reward_type": "fixed", "data.reward_value": 1500,
		"data.warranty_days": 7, "data.min_redemption": 0, "data.is_active": true, "data.is_default": true,
		"data.auto_register": false, "data.stats.total_members": 0, "data.stats.total_referrals": 0,
		"data.stats.total_rewards_paid": 0, "data.created_at": reTimestamp, "data.updated_at": reTimestamp,
	})
	first := str(t, r, "data.id")

	// The second one, every field given: not the default.
	r = tn.do(t, http.MethodPost, "/api/v1/campaigns", map[string]any{"name": "Influencers", "reward_type": "percentage",
		"reward_value": 10, "warranty_days": 14, "min_redemption": 500, "is_active": false, "auto_register": true,
		"unknown_field": "ignored"})
	wantStatus(t, r, http.StatusCreated)
	wantFields(t, r, map[string]any{
		"data.id": reCampID, "data.name": "Influencers", "data.reward_type": "percentage", "data.reward_value": 10,
		"data.warranty_days": 14, "data.min_redemption": 500, "data.is_active": false, "data.is_default": false,
		"data.auto_register": true,
	})
	second := str(t, r, "data.id")
	if first == second {
		t.Fatalf("two campaigns share the id %s", first)
	}
	for id, isDefault := range map[string]bool{first: true, second: false} {
		r := tn.get(t, "/api/v1/campaigns/"+id)
		wantStatus(t, r, http.StatusOK)
		wantKeys(t, r, "data", campaignKeys...)
		wantFields(t, r, map[string]any{"data.id": id, "data.is_default": isDefault})
	}

	big := `{"name": "` + strings.Repeat("a", 1<<20) + `", "reward_type": "fixed", "reward_value": 1}`
	tests := []struct {
		name     string
		body     any
		status   int
		code     string
		mentions string
	}{
		{"percentage 1", `{"name": "p1", "reward_type": "percentage", "reward_value": 1}`, http.StatusCreated, "", ""},
		{"percentage 100", `{"name": "p100", "reward_type": "percentage", "reward_value": 100}`, http.StatusCreated, "", ""},
		{"warranty_days 0", `{"name": "w0", "reward_type": "fixed", "reward_value": 1, "warranty_days": 0}`, http.StatusCreated, "", ""},
		{"reward_type unknown", `{"name": "x", "reward_type": "points", "reward_value": 10}`, 400, "validation_error", "reward_type"},
		{"reward_type missing", `{"name": "x", "reward_value": 10}`, 400, "validation_error", "reward_type"},
		{"reward_type upper case", `{"name": "x", "reward_type": "FIXED", "reward_value": 10}`, 400, "validation_error", "reward_type"},
		{"percentage 0", `{"name": "x", "reward_type": "percentage", "reward_value": 0}`, 400, "validation_error", "reward_value"},
		{"percentage 101", `{"name": "x", "reward_type": "percentage", "reward_value": 101}`, 400, "validation_error", "reward_value"},
		{"percentage negative", `{"name": "x", "reward_type": "percentage", "reward_value": -5}`, 400, "validation_error", "reward_value"},
		{"fixed 0", `{"name": "x", "reward_type": "fixed", "reward_value": 0}`, 400, "validation_error", "reward_value"},
		{"reward_value missing", `{"name": "x", "reward_type": "fixed"}`, 400, "validation_error", "reward_value"},
		{"reward_value null", `{"name": "x", "reward_type": "fixed", "reward_value": null}`, 400, "validation_error", "reward_value"},
		{"reward_value 10.5", `{"name": "x", "reward_type": "fixed", "reward_value": 10.5}`, 400, "validation_error", "reward_value"},
		{"reward_value as text", `{"name": "x", "reward_type": "fixed", "reward_value": "10"}`, 400, "validation_error", "reward_value"},
		{"reward_value huge", `{"name": "x", "reward_type": "fixed", "reward_value": 99999999999999999999}`, 400, "validation_error", "reward_value"},
		{"name missing", `{"reward_type": "fixed", "reward_value": 10}`, 400, "validation_error", "name"},
		{"name blank", `{"name": "  ", "reward_type": "fixed", "reward_value": 10}`, 400, "validation_error", "name"},
		{"name not text", `{"name": 5, "reward_type": "fixed", "reward_value": 10}`, 400, "validation_error", "name"},
		{"reward_type not text", `{"name": "x", "reward_type": true, "reward_value": 10}`, 400, "validation_error", "reward_type"},
		{"is_active not boolean", `{"name": "x", "reward_type": "fixed", "reward_value": 10, "is_active": "yes"}`, 400, "validation_error", "is_active"},
		{"auto_register not boolean", `{"name": "x", "reward_type": "fixed", "reward_value": 10, "auto_register": 1}`, 400, "validation_error", "auto_register"},
		{"warranty_days fraction", `{"name": "x", "reward_type": "fixed", "reward_value": 10, "warranty_days": 1.5}`, 400, "validation_error", "warranty_days"},
		{"warranty_days negative", `{"name": "x", "reward_type": "fixed", "reward_value": 10, "warranty_days": -1}`, 400, "validation_error", "warranty_days"},
		{"min_redemption negative", `{"name": "x", "reward_type": "fixed", "reward_value": 10, "min_redemption": -1}`, 400, "validation_error", "min_redemption"},
		{"min_redemption not a number", `{"name": "x", "reward_type": "fixed", "reward_value": 10, "min_redemption": "500"}`, 400, "validation_error", "min_redemption"},
		{"malformed JSON", `{"name": "x", "reward_type": "fixed", "reward_value": 10`, 400, "validation_error", ""},
		{"not JSON", `name=x`, 400, "validation_error", ""},
		{"array body", `[]`, 400, "validation_error", ""},
		{"string body", `"campaign"`, 400, "validation_error", ""},
		{"two objects", `{"name": "x", "reward_type": "fixed", "reward_value": 10} {}`, 400, "validation_error", ""},
		{"empty body", ``, 400, "validation_error", ""},
		{"body over 1 MiB", big, http.StatusRequestEntityTooLarge, "payload_too_large", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := tn.do(t, http.MethodPost, "/api/v1/campaigns", tt.body)
			if tt.status == http.StatusCreated {
				wantStatus(t, r, http.StatusCreated)
				wantFields(t, r, map[string]any{"data.id": reCampID, "data.is_default": false})
				return
			}
			wantError(t, r, tt.status, tt.code, tt.mentions)
		})
	}
}

func TestGetCampaign(t *testing.T) {
	t.Parallel()
	env := mustEnv(t)
	tn := env.mustTenant(t)
	id := tn.mustCampaign(t, map[string]any{"name": "Padrão", "reward_type": "percentage", "reward_value": 10})
	other := tn.mustCampaign(t, map[string]any{"name": "Outra", "reward_type": "fixed", "reward_value": 700})
	ana := tn.mustMember(t, "ana@example.com", "Ana Souza")
	tn.mustMember(t, "bia@example.com", "Bia Lima")
	// Ana refers two sales: one approved (released), one still pending.
	tn.mustLedger(t, tn.sale(ledger.CmdCreditSale, ana, "o1", 9790), tn.sale(ledger.CmdCreditSale, ana, "o2", 5000))
	tn.mustLedger(t, tn.release(t, ana, "o1"))

	r := tn.get(t, "/api/v1/campaigns/"+id)
	wantStatus(t, r, http.StatusOK)
	wantKeys(t, r, "", "data")
	wantKeys(t, r, "data", campaignKeys...)
	wantFields(t, r, map[string]any{
		"data.id": id, "data.name": "Padrão", "data.reward_type": "percentage", "data.reward_value": 10,
		"data.warranty_days": 7, "data.is_default": true,
		"data.stats.total_members": 2, "data.stats.total_referrals": 2, "data.stats.total_rewards_paid": 979,
		"data.created_at": reTimestamp, "data.updated_at": reTimestamp,
	})
	r = tn.get(t, "/api/v1/campaigns/"+other)
	wantFields(t, r, map[string]any{"data.stats.total_members": 0, "data.stats.total_referrals": 0, "data.stats.total_rewards_paid": 0})

	bare := strings.TrimPrefix(id, "camp_")
	for _, bad := range []string{
		"camp_" + strings.ReplaceAll(uuid.NewString(), "-", ""), // unknown
		uuid.NewString(), // unknown, bare form
		"camp_123",
		"camp_" + strings.Repeat("g", 32),
		"mem_" + bare, // another resource's prefix
		bare,          // 32 hex without the prefix
		"camp_" + bare + "0",
		"%20",
		"null",
	} {
		r := tn.get(t, "/api/v1/campaigns/"+bad)
		wantError(t, r, http.StatusNotFound, "not_found", "")
	}
}

// TestListCampaigns covers GET /campaigns: order, stats batched for the
// page, pagination and tenant isolation.
func TestListCampaigns(t *testing.T) {
	t.Parallel()
	env := mustCatalogEnv(t)
	a, b := env.mustTenant(t), env.mustTenant(t)

	r := a.get(t, "/api/v1/campaigns")
	wantOnePage(t, r, nil)

	var created []string
	for _, body := range []map[string]any{
		{"name": "Padrão", "reward_type": "fixed", "reward_value": 1000},
		{"name": "VIP", "reward_type": "percentage", "reward_value": 10, "warranty_days": 30, "min_redemption": 500},
		{"name": "Inativa", "reward_type": "fixed", "reward_value": 1, "is_active": false, "auto_register": true},
		{"name": "Quarta", "reward_type": "fixed", "reward_value": 2},
		{"name": "Quinta", "reward_type": "percentage", "reward_value": 100},
	} {
		created = append(created, a.mustCampaign(t, body))
	}
	newest := reversed(created)
	bCamp := b.mustCampaign(t, map[string]any{"name": "De B", "reward_type": "fixed", "reward_value": 7})

	// Members in the first two campaigns, referrals in the first.
	ana := a.mustMember(t, "ana@example.com", "Ana")
	a.mustMember(t, "bia@example.com", "Bia")
	r = a.do(t, http.MethodPost, "/api/v1/members", map[string]any{"email": "caio@example.com", "name": "Caio", "campaign_id": created[1]})
	wantStatus(t, r, http.StatusCreated)
	a.mustLedger(t, a.sale(ledger.CmdCreditSale, ana, "o1", 9790), a.sale(ledger.CmdCreditSale, ana, "o2", 5000))
	a.mustLedger(t, a.release(t, ana, "o1"))

	r = a.get(t, "/api/v1/campaigns")
	wantStatus(t, r, http.StatusOK)
	if got := listIDs(t, r); !slices.Equal(got, newest) {
		t.Fatalf("ids = %v, want newest first %v", got, newest)
	}
	wantPage(t, r, 1, 20, 5, 1)
	wantKeys(t, r, "data.0", campaignKeys...)
	wantKeys(t, r, "data.0.stats", "total_members", "total_referrals", "total_rewards_paid")
	wantFields(t, r, map[string]any{
		"data.4.name": "Padrão", "data.4.is_default": true, "data.4.reward_type": "fixed", "data.4.reward_value": 1000,
		"data.4.stats.total_members": 2, "data.4.stats.total_referrals": 2, "data.4.stats.total_rewards_paid": 1000,
		"data.3.name": "VIP", "data.3.is_default": false, "data.3.warranty_days": 30, "data.3.min_redemption": 500,
		"data.3.stats.total_members": 1, "data.3.stats.total_referrals": 0, "data.3.stats.total_rewards_paid": 0,
		"data.2.is_active": false, "data.2.auto_register": true, "data.2.stats.total_members": 0,
		"data.0.created_at": reTimestamp, "data.0.updated_at": reTimestamp,
	})
	// Each item is exactly GET /campaigns/{id}.
	for i, id := range newest {
		one := a.get(t, "/api/v1/campaigns/"+id)
		item, _ := at(r.json, "data."+strconv.Itoa(i))
		if !jsonEqual(item, one.json.(map[string]any)["data"]) {
			t.Errorf("list item %d = %v, want GET = %s", i, item, one.raw)
		}
	}

	for _, tt := range []struct {
		query                string
		page, perPage, pages int
		want                 []string
	}{
		{q("per_page", "2"), 1, 2, 3, newest[0:2]},
		{q("per_page", "2", "page", "2"), 2, 2, 3, newest[2:4]},
		{q("per_page", "2", "page", "3"), 3, 2, 3, newest[4:]},
		{q("per_page", "2", "page", "4"), 4, 2, 3, []string{}},
		{q("per_page", "3", "page", "2"), 2, 3, 2, newest[3:]},
		{q("per_page", "100"), 1, 100, 1, newest},
	} {
		r := a.get(t, "/api/v1/campaigns"+tt.query)
		wantStatus(t, r, http.StatusOK)
		if got := listIDs(t, r); !slices.Equal(got, tt.want) {
			t.Errorf("%s: ids = %v, want %v", tt.query, got, tt.want)
		}
		wantPage(t, r, tt.page, tt.perPage, 5, tt.pages)
	}
	for _, query := range []string{q("page", "0"), q("page", "x"), q("per_page", "0"), q("per_page", "101"), q("per_page", "-5")} {
		wantError(t, a.get(t, "/api/v1/campaigns"+query), http.StatusBadRequest, "validation_error", "page")
	}

	r = b.get(t, "/api/v1/campaigns")
	if got := listIDs(t, r); !slices.Equal(got, []string{bCamp}) {
		t.Errorf("merchant B sees %v, want only %s", got, bCamp)
	}
	wantPage(t, r, 1, 20, 1, 1)
}

// TestPatchCampaign applies PATCH /campaigns/{id} step by step.
func TestPatchCampaign(t *testing.T) {
	t.Parallel()
	env := mustCatalogEnv(t)
	a, b := env.mustTenant(t), env.mustTenant(t)
	def := a.mustCampaign(t, map[string]any{"name": "Padrão", "reward_type": "fixed", "reward_value": 1000})
	pct := a.mustCampaign(t, map[string]any{"name": "VIP", "reward_type": "percentage", "reward_value": 10})
	bCamp := b.mustCampaign(t, map[string]any{"name": "De B", "reward_type": "fixed", "reward_value": 7})
	a.mustMember(t, "ana@example.com", "Ana")

	path := "/api/v1/campaigns/" + pct
	first := a.get(t, path)
	state := map[string]any{
		"data.id": pct, "data.name": "VIP", "data.reward_type": "percentage", "data.reward_value": 10,
		"data.warranty_days": 7, "data.min_redemption": 0, "data.is_active": true, "data.is_default": false,
		"data.auto_register": false, "data.created_at": str(t, first, "data.created_at"),
	}
	prevUpdated := ts(str(t, first, "data.updated_at"))
	steps := []patchStep{
		{"empty body", ``, nil},
		{"nulls change nothing", `{"name": null, "reward_value": null, "warranty_days": null, "min_redemption": null, "is_active": null, "auto_register": null, "is_default": null}`, nil},
		{"name", `{"name": "  VIP 2 "}`, map[string]any{"data.name": "VIP 2"}},
		{"reward_value 1", `{"reward_value": 1}`, map[string]any{"data.reward_value": 1}},
		{"reward_value 100", `{"reward_value": 100}`, map[string]any{"data.reward_value": 100}},
		{"warranty_days 0", `{"warranty_days": 0}`, map[string]any{"data.warranty_days": 0}},
		{"warranty_days 3650", `{"warranty_days": 3650}`, map[string]any{"data.warranty_days": 3650}},
		{"min_redemption", `{"min_redemption": 2500}`, map[string]any{"data.min_redemption": 2500}},
		{"min_redemption 0", `{"min_redemption": 0}`, map[string]any{"data.min_redemption": 0}},
		{"is_active false", `{"is_active": false}`, map[string]any{"data.is_active": false}},
		{"auto_register true", `{"auto_register": true}`, map[string]any{"data.auto_register": true}},
		{"is_default false on a non-default", `{"is_default": false}`, nil},
		{"several", `{"name": "VIP", "reward_value": 15, "is_active": true, "auto_register": false, "unknown": [1]}`,
			map[string]any{"data.name": "VIP", "data.reward_value": 15, "data.is_active": true, "data.auto_register": false}},
	}
	a.applyPatchSteps(t, path, campaignKeys, state, prevUpdated, steps, nil)

	before := a.get(t, path)
	fixedBefore := a.get(t, "/api/v1/campaigns/"+def)
	t.Run("refused", func(t *testing.T) {
		for _, tt := range []struct {
			name, path, body, field string
		}{
			{"reward_type", path, `{"reward_type": "fixed"}`, "reward_type"},
			{"same reward_type", path, `{"reward_type": "percentage"}`, "reward_type"},
			{"reward_type null", path, `{"reward_type": null}`, "reward_type"},
			{"percentage 0", path, `{"reward_value": 0}`, "reward_value"},
			{"percentage 101", path, `{"reward_value": 101}`, "reward_value"},
			{"percentage 1000 (fine for fixed)", path, `{"reward_value": 1000}`, "reward_value"},
			{"fixed 0", "/api/v1/campaigns/" + def, `{"reward_value": 0}`, "reward_value"},
			{"fixed over the cap", "/api/v1/campaigns/" + def, `{"reward_value": 1000000001}`, "reward_value"},
			{"reward_value fraction", path, `{"reward_value": 10.5}`, "reward_value"},
			{"reward_value text", path, `{"reward_value": "10"}`, "reward_value"},
			{"reward_value huge", path, `{"reward_value": 99999999999999999999}`, "reward_value"},
			{"warranty_days -1", path, `{"warranty_days": -1}`, "warranty_days"},
			{"warranty_days 3651", path, `{"warranty_days": 3651}`, "warranty_days"},
			{"warranty_days huge", path, `{"warranty_days": 9223372036854775807}`, "warranty_days"},
			{"warranty_days fraction", path, `{"warranty_days": 1.5}`, "warranty_days"},
			{"min_redemption negative", path, `{"min_redemption": -1}`, "min_redemption"},
			{"min_redemption over the cap", path, `{"min_redemption": 1000000001}`, "min_redemption"},
			{"name empty", path, `{"name": ""}`, "name"},
			{"name blank", path, `{"name": " "}`, "name"},
			{"name not text", path, `{"name": ["x"]}`, "name"},
			{"is_active text", path, `{"is_active": "yes"}`, "is_active"},
			{"auto_register number", path, `{"auto_register": 1}`, "auto_register"},
			{"is_default text", path, `{"is_default": "true"}`, "is_default"},
			{"is_default false on the default", "/api/v1/campaigns/" + def, `{"is_default": false}`, "default"},
			{"valid field with a refused one", path, `{"name": "Z", "warranty_days": -2}`, "warranty_days"},
			{"array body", path, `[{}]`, ""},
			{"malformed", path, `{"name"`, ""},
		} {
			r := a.do(t, http.MethodPatch, tt.path, tt.body)
			wantError(t, r, http.StatusBadRequest, "validation_error", tt.field)
		}
		if after := a.get(t, path); !jsonEqual(after.json, before.json) {
			t.Errorf("refused PATCHes changed the campaign: %s, was %s", after.raw, before.raw)
		}
		if after := a.get(t, "/api/v1/campaigns/"+def); !jsonEqual(after.json, fixedBefore.json) {
			t.Errorf("refused PATCHes changed the default campaign: %s, was %s", after.raw, fixedBefore.raw)
		}
	})

	t.Run("not found", func(t *testing.T) {
		for _, p := range []string{"camp_" + hex32(), uuid.NewString(), "camp_1", "nope", "mem_" + strings.TrimPrefix(pct, "camp_"), bCamp} {
			wantError(t, a.do(t, http.MethodPatch, "/api/v1/campaigns/"+p, `{"name": "X"}`), http.StatusNotFound, "not_found", "")
		}
		wantError(t, b.do(t, http.MethodPatch, path, `{"is_default": true}`), http.StatusNotFound, "not_found", "")
		wantFields(t, b.get(t, "/api/v1/campaigns/"+bCamp), map[string]any{"data.name": "De B", "data.is_default": true})
	})

	t.Run("bare uuid path", func(t *testing.T) {
		r := a.do(t, http.MethodPatch, "/api/v1/campaigns/"+bareUUID(t, pct), `{"name": "VIP 3"}`)
		wantStatus(t, r, http.StatusOK)
		wantFields(t, r, map[string]any{"data.id": pct, "data.name": "VIP 3"})
	})
}

// TestPatchCampaignDefault: is_default true moves the default, and exactly
// one default remains, even under concurrent moves (decision 20).
func TestPatchCampaignDefault(t *testing.T) {
	t.Parallel()
	env := mustCatalogEnv(t)
	a, b := env.mustTenant(t), env.mustTenant(t)
	var camps []string
	for i := 0; i < 6; i++ {
		camps = append(camps, a.mustCampaign(t, map[string]any{"name": "C" + strconv.Itoa(i), "reward_type": "fixed", "reward_value": 100}))
	}
	bCamp := b.mustCampaign(t, map[string]any{"name": "De B", "reward_type": "fixed", "reward_value": 7})

	wantDefault := func(t *testing.T, want string) {
		t.Helper()
		r := a.get(t, "/api/v1/campaigns")
		var defaults []string
		for i, id := range listIDs(t, r) {
			if v, _ := at(r.json, "data."+strconv.Itoa(i)+".is_default"); v == true {
				defaults = append(defaults, id)
			}
		}
		if len(defaults) != 1 || (want != "" && defaults[0] != want) {
			t.Fatalf("defaults = %v, want exactly [%s]", defaults, want)
		}
		var n int
		if err := env.pool.QueryRow(context.Background(), `SELECT count(*) FROM campaigns WHERE merchant_id = $1 AND is_default`,
			a.merchant.ID).Scan(&n); err != nil || n != 1 {
			t.Fatalf("default campaigns in the database = %d, %v; want 1", n, err)
		}
		wantFields(t, b.get(t, "/api/v1/campaigns/"+bCamp), map[string]any{"data.is_default": true})
	}
	wantDefault(t, camps[0])

	oldBefore := ts(str(t, a.get(t, "/api/v1/campaigns/"+camps[0]), "data.updated_at"))
	r := a.do(t, http.MethodPatch, "/api/v1/campaigns/"+camps[2], map[string]any{"is_default": true})
	wantStatus(t, r, http.StatusOK)
	wantFields(t, r, map[string]any{"data.id": camps[2], "data.is_default": true})
	wantDefault(t, camps[2])
	old := a.get(t, "/api/v1/campaigns/"+camps[0])
	wantFields(t, old, map[string]any{"data.is_default": false})
	if got := ts(str(t, old, "data.updated_at")); !got.After(oldBefore) {
		t.Errorf("old default's updated_at = %s, want after %s", got, oldBefore)
	}
	// Members created without campaign_id now join the new default.
	r = a.do(t, http.MethodPost, "/api/v1/members", map[string]any{"email": "ana@example.com", "name": "Ana"})
	wantFields(t, r, map[string]any{"data.campaign_id": camps[2]})

	// Setting it again is a no-op; unsetting it is refused.
	wantStatus(t, a.do(t, http.MethodPatch, "/api/v1/campaigns/"+camps[2], map[string]any{"is_default": true}), http.StatusOK)
	wantError(t, a.do(t, http.MethodPatch, "/api/v1/campaigns/"+camps[2], map[string]any{"is_default": false}),
		http.StatusBadRequest, "validation_error", "one default campaign")
	wantDefault(t, camps[2])

	// Concurrent moves: whichever commits last wins, never two, never none.
	var wg sync.WaitGroup
	errs := make(chan error, len(camps)*3)
	for round := 0; round < 3; round++ {
		for _, id := range camps {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r, err := env.try(request{method: http.MethodPatch, path: "/api/v1/campaigns/" + id,
					header: map[string]string{"X-API-Key": a.key}, body: `{"is_default": true, "name": "moved"}`})
				if err == nil && r.status != http.StatusOK {
					err = fmt.Errorf("PATCH %s: %s", id, r)
				}
				if err != nil {
					errs <- err
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	wantDefault(t, "")
}
