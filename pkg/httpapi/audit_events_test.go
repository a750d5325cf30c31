package httpapi_test

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/convida/convida/pkg/httpapi"
	"github.com/convida/convida/pkg/openapi/openapitest"
	"github.com/convida/convida/pkg/postgres"
	"github.com/convida/convida/pkg/secretbox"
)

// TestAuditEventsAPI: what a key changes is in its merchant's trail, by
// that key (its id and first 8 characters) from the client's address,
// readable through GET /api/v1/audit-events newest first, by action,
// paginated, and never with a secret; another merchant reads none of it;
// the bounds are 400 and a missing key 401, as the document says.
func TestAuditEventsAPI(t *testing.T) {
	t.Parallel()
	v := openapitest.New(t)
	env := mustEnvWith(t, envOptions{
		wire: func(pool *pgxpool.Pool, box *secretbox.Box) httpapi.Config {
			store := postgres.NewWebhookStore(pool, box)
			return httpapi.Config{Catalog: catalog(pool), Webhooks: store,
				Audit: postgres.NewAuditStore(pool)}
		},
		client: v.Client,
	})
	a, b := env.mustTenant(t), env.mustTenant(t)
	keys, err := env.merchants.ListKeys(context.Background(), a.merchant.ID)
	if err != nil || len(keys) != 1 {
		t.Fatalf("ListKeys = %v, %v", keys, err)
	}
	keyID := keys[0].ID.String()

	token := "guru-account-token-" + strings.Repeat("s", 20)
	wantStatus(t, a.do(t, http.MethodPut, "/api/v1/integrations/guru", map[string]any{"account_token": token}), http.StatusOK)
	camp := a.mustCampaign(t, map[string]any{"name": "Padrão", "reward_type": "fixed", "reward_value": 1000})
	wantStatus(t, a.do(t, http.MethodPatch, "/api/v1/campaigns/"+camp, map[string]any{"name": "Outro", "warranty_days": 7}), http.StatusOK)
	hook := a.do(t, http.MethodPost, "/v1/webhooks", map[string]any{"url": "https://erp.example.com/hooks", "events": []string{"referral.approved"}})
	wantStatus(t, hook, http.StatusCreated)
	secret := str(t, hook, "data.secret")

	r := a.get(t, "/api/v1/audit-events")
	wantStatus(t, r, http.StatusOK)
	for _, s := range []string{token, secret, a.key} {
		if bytes.Contains(r.raw, []byte(s)) {
			t.Errorf("the trail shows a secret %q: %s", s, r.raw)
		}
	}
	list := r.json.(map[string]any)["data"].([]any)
	var actions []string
	for _, e := range list {
		actions = append(actions, e.(map[string]any)["action"].(string))
	}
	// Newest first; the key the tenant was set up with is the system's.
	if want := "webhook_endpoint.created campaign.updated integration.updated api_key.created"; strings.Join(actions, " ") != want {
		t.Fatalf("actions %v, want %s", actions, want)
	}
	byKey := map[string]any{"type": "api_key", "id": keyID, "label": a.key[:8]}
	for i, want := range []struct {
		target  map[string]any
		details map[string]any
	}{
		{map[string]any{"type": "webhook_endpoint", "id": str(t, hook, "data.id")}, map[string]any{}},
		{map[string]any{"type": "campaign", "id": camp}, map[string]any{"fields": []string{"name"}}},
		{map[string]any{"type": "integration", "id": "guru"}, map[string]any{"fields": []string{"account_token"}}},
	} {
		e := list[i].(map[string]any)
		if !jsonEqual(e["actor"], byKey) || !jsonEqual(e["target"], want.target) || e["ip"] != "127.0.0.1" ||
			!jsonEqual(e["details"], want.details) || !strings.HasPrefix(e["id"].(string), "aud_") {
			t.Errorf("event %d = %v, want by %v from 127.0.0.1 on %v with %s", i, e, byKey, want.target, want.details)
		}
	}
	system := list[3].(map[string]any)
	if !jsonEqual(system["actor"], map[string]any{"type": "system", "id": nil, "label": nil}) || system["ip"] != nil {
		t.Errorf("the set-up key's event = %v, want by the system, no address", system)
	}

	r = a.get(t, "/api/v1/audit-events?action=campaign.updated")
	wantStatus(t, r, http.StatusOK)
	if got := r.json.(map[string]any)["data"].([]any); len(got) != 1 {
		t.Errorf("?action=campaign.updated: %s, want the one", r.raw)
	}
	r = a.get(t, "/api/v1/audit-events?per_page=1&page=2")
	wantStatus(t, r, http.StatusOK)
	wantPage(t, r, 2, 1, 4, 4)
	if str(t, r, "data.0.action") != "campaign.updated" {
		t.Errorf("page 2 of 1: %s, want the second newest", r.raw)
	}

	// Another merchant's key reads its own trail only.
	r = b.get(t, "/api/v1/audit-events")
	wantStatus(t, r, http.StatusOK)
	if got := r.json.(map[string]any)["data"].([]any); len(got) != 1 || bytes.Contains(r.raw, []byte(keyID)) {
		t.Errorf("another merchant's trail: %s, want its own key's creation only", r.raw)
	}

	wantError(t, a.get(t, "/api/v1/audit-events?action=member.deleted"), http.StatusBadRequest, "validation_error", "action")
	wantError(t, a.get(t, "/api/v1/audit-events?per_page=101"), http.StatusBadRequest, "validation_error", "per_page")
	wantError(t, a.get(t, "/api/v1/audit-events?page=0"), http.StatusBadRequest, "validation_error", "page")
	wantError(t, env.call(t, request{method: http.MethodGet, path: "/api/v1/audit-events"}), http.StatusUnauthorized, "unauthorized", "")
	v.WantExercised(t, ex("listAuditEvents", 200), ex("listAuditEvents", 400), ex("listAuditEvents", 401))
}
