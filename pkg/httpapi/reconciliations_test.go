package httpapi_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/convida/convida/pkg/httpapi"
	"github.com/convida/convida/pkg/ids"
	"github.com/convida/convida/pkg/merchant"
	"github.com/convida/convida/pkg/openapi/openapitest"
	"github.com/convida/convida/pkg/postgres"
	"github.com/convida/convida/pkg/provider"
	"github.com/convida/convida/pkg/reconcile"
	"github.com/convida/convida/pkg/secretbox"
)

// TestReconciliations asks for reconciliation runs and lists them through
// the API, with a client that validates every answer against the OpenAPI
// document: a run is recorded running and answered 202 (the default
// window is RECONCILE_WINDOW back from now), with its audit event; another
// within RECONCILE_COOLDOWN of its start is 429 with the seconds left in
// Retry-After, and one after the cooldown while it still runs is 409; an
// integration without the API credentials is 422, and so is a platform
// without a pull (Eduzz); a window longer than
// the platform's pull, or not RFC 3339, is 400; the list is newest first
// and paginated, and another merchant sees none of it; the trail lists
// the requests that recorded a run, and none of the refused ones.
func TestReconciliations(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	v := openapitest.New(t)
	var store *postgres.ReconcileStore
	var env *apiEnv
	env = mustEnvWith(t, envOptions{
		wire: func(pool *pgxpool.Pool, _ *secretbox.Box) httpapi.Config {
			store = postgres.NewReconcileStore(pool)
			return httpapi.Config{Reconcile: httpapi.ReconcileConfig{
				Reconciler: &reconcile.Reconciler{Store: store, Now: func() time.Time { return env.clock.Now() }, Cooldown: 5 * time.Minute},
				Runs:       store, Window: 48 * time.Hour},
				Audit: postgres.NewAuditStore(pool)}
		},
		client: v.Client,
	})
	tn := env.mustTenantWith(t, merchant.Merchant{},
		merchant.Integration{Provider: provider.Guru, AccountToken: "guru-account", UserToken: "guru-user"},
		merchant.Integration{Provider: provider.Yampi, WebhookSecret: "yampi-secret"})
	other := env.mustTenant(t)

	r := tn.do(t, http.MethodPost, "/api/v1/integrations/guru/reconcile", nil)
	wantStatus(t, r, http.StatusAccepted)
	wantKeys(t, r, "data", "id", "provider", "status", "from", "to", "started_at", "finished_at", "seen", "missing", "credited", "reversed", "error")
	wantFields(t, r, map[string]any{"data.provider": "guru", "data.status": "running", "data.finished_at": nil, "data.seen": 0,
		"data.from": "2026-11-18T12:00:00.000Z", "data.to": "2026-11-20T12:00:00.000Z", "data.error": ""})
	first := str(t, r, "data.id")
	// Within the cooldown: 429, and how long is left.
	for _, tc := range []struct {
		after time.Duration
		retry string
	}{{0, "300"}, {2*time.Minute + 30*time.Second, "150"}, {2*time.Minute + 29*time.Second, "1"}} {
		env.clock.Advance(tc.after)
		r := tn.do(t, http.MethodPost, "/api/v1/integrations/guru/reconcile", map[string]any{})
		wantError(t, r, http.StatusTooManyRequests, "rate_limited", "a guru reconciliation started less than 5m ago")
		if got := r.header.Get("Retry-After"); got != tc.retry {
			t.Errorf("Retry-After = %q, want %q", got, tc.retry)
		}
	}
	// Past it, while the run still runs: 409.
	env.clock.Advance(time.Second)
	wantError(t, tn.do(t, http.MethodPost, "/api/v1/integrations/guru/reconcile", map[string]any{}), http.StatusConflict, "conflict", "running")
	wantError(t, tn.do(t, http.MethodPost, "/api/v1/integrations/yampi/reconcile", nil), http.StatusUnprocessableEntity,
		"integration_not_configured", "yampi")
	wantError(t, other.do(t, http.MethodPost, "/api/v1/integrations/guru/reconcile", nil), http.StatusUnprocessableEntity,
		"integration_not_configured", "guru")
	wantError(t, tn.do(t, http.MethodPost, "/api/v1/integrations/guru/reconcile",
		map[string]any{"from": "2026-01-01T00:00:00Z", "to": "2026-11-20T00:00:00Z"}), http.StatusBadRequest, "validation_error", "180 days")
	wantError(t, tn.do(t, http.MethodPost, "/api/v1/integrations/guru/reconcile", map[string]any{"from": "yesterday"}),
		http.StatusBadRequest, "validation_error", "from")
	wantError(t, tn.do(t, http.MethodPost, "/api/v1/integrations/guru/reconcile",
		map[string]any{"from": "2026-11-20T00:00:00Z", "to": "2026-11-19T00:00:00Z"}), http.StatusBadRequest, "validation_error", "before")
	wantError(t, tn.do(t, http.MethodPost, "/api/v1/integrations/stripe/reconcile", nil), http.StatusNotFound, "not_found", "provider")
	// A platform Convida has no pull for: 422 saying why, configured or not.
	wantError(t, tn.do(t, http.MethodPost, "/api/v1/integrations/eduzz/reconcile", nil), http.StatusUnprocessableEntity,
		"invalid_payload", "Eduzz sales cannot be reconciled: Convida does not call its sales API yet")

	// The run ends; another may start, over the window asked for.
	id, _ := ids.Parse(ids.Reconciliation, first)
	if err := store.FinishRun(ctx, reconcile.Run{ID: id, MerchantID: tn.merchant.ID, Status: reconcile.StatusSucceeded,
		Seen: 100, Missing: 10, Credited: 9, Reversed: 1, FinishedAt: t0.Add(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	r = tn.do(t, http.MethodPost, "/api/v1/integrations/guru/reconcile", map[string]any{"from": "2026-11-01T00:00:00-03:00", "to": "2026-11-02T00:00:00-03:00"})
	wantStatus(t, r, http.StatusAccepted)
	wantFields(t, r, map[string]any{"data.from": "2026-11-01T03:00:00.000Z", "data.to": "2026-11-02T03:00:00.000Z"})
	second := str(t, r, "data.id")

	// Newest first, in pages.
	r = tn.get(t, "/api/v1/integrations/guru/reconciliations?per_page=1")
	wantStatus(t, r, http.StatusOK)
	wantPage(t, r, 1, 1, 2, 2)
	r = tn.get(t, "/api/v1/integrations/guru/reconciliations")
	wantPage(t, r, 1, 20, 2, 1)
	if got := listIDs(t, r); len(got) != 2 || got[0] != second || got[1] != first {
		t.Errorf("the runs = %v, want %s then %s", got, second, first)
	}
	wantFields(t, r, map[string]any{"data.0.status": "running", "data.0.started_at": "2026-11-20T12:05:00.000Z",
		"data.1.status": "succeeded", "data.1.missing": 10, "data.1.credited": 9, "data.1.reversed": 1,
		"data.1.finished_at": "2026-11-20T12:01:00.000Z"})

	// The trail: the two requests that recorded a run, by the key, none
	// of the refused ones.
	r = tn.get(t, "/api/v1/audit-events?action=reconciliation.requested")
	wantStatus(t, r, http.StatusOK)
	wantPage(t, r, 1, 20, 2, 1)
	wantFields(t, r, map[string]any{"data.0.target.type": "integration", "data.0.target.id": "guru", "data.0.actor.type": "api_key",
		"data.0.details.run": second, "data.0.details.from": "2026-11-01T03:00:00.000Z", "data.0.details.to": "2026-11-02T03:00:00.000Z",
		"data.1.details.run": first, "data.1.details.from": "2026-11-18T12:00:00.000Z", "data.1.created_at": "2026-11-20T12:00:00.000Z"})
	wantOnePage(t, other.get(t, "/api/v1/audit-events?action=reconciliation.requested"), []string{})
	wantOnePage(t, tn.get(t, "/api/v1/integrations/yampi/reconciliations"), []string{})
	wantOnePage(t, other.get(t, "/api/v1/integrations/guru/reconciliations"), []string{})
	wantError(t, tn.get(t, "/api/v1/integrations/stripe/reconciliations"), http.StatusNotFound, "not_found", "provider")
	wantError(t, tn.get(t, "/api/v1/integrations/guru/reconciliations?page=0"), http.StatusBadRequest, "validation_error", "page")
	wantError(t, env.call(t, request{method: http.MethodGet, path: "/api/v1/integrations/guru/reconciliations"}),
		http.StatusUnauthorized, "unauthorized", "")
	wantError(t, env.call(t, request{method: http.MethodPost, path: "/api/v1/integrations/guru/reconcile"}),
		http.StatusUnauthorized, "unauthorized", "")
	v.WantExercised(t, ex("reconcileIntegration", 202), ex("reconcileIntegration", 400), ex("reconcileIntegration", 401),
		ex("reconcileIntegration", 404), ex("reconcileIntegration", 409), ex("reconcileIntegration", 422), ex("reconcileIntegration", 429),
		ex("listReconciliations", 200), ex("listReconciliations", 400), ex("listReconciliations", 401), ex("listReconciliations", 404))
}
