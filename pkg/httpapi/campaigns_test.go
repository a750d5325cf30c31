package httpapi_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/ledger"
)

var campaignKeys = []string{"id", "name", "reward_type", "reward_value", "warranty_days", "min_redemption",
	"is_active", "is_default", "auto_register", "stats", "created_at", "updated_at"}

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
