package dashboard

import (
	"context"
	"net/http"
	"time"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/merchant"
	"github.com/convida/convida/pkg/provider"
	"github.com/convida/convida/pkg/reconcile"
)

// Reconciliation on the Integrations page: a "Reconcile now" button per
// platform with pull credentials, and its last runs.

// recentRuns is how many runs each platform's section shows.
const recentRuns = 5

// runsOf returns the last runs of the merchant's integration, none when
// the dashboard has no reconciliation wired.
func (d *Dashboard) runsOf(ctx context.Context, merchantID uuid.UUID, provider string) ([]reconcile.Run, error) {
	if d.cfg.Integrations.Runs == nil {
		return nil, nil
	}
	runs, _, err := d.cfg.Integrations.Runs.PageRuns(ctx, merchantID, provider, 0, recentRuns)
	return runs, err
}

// reconcileFrom is when another run may be asked for, the newest of runs
// having started less than RECONCILE_COOLDOWN ago; zero otherwise.
func (d *Dashboard) reconcileFrom(runs []reconcile.Run) time.Time {
	if len(runs) == 0 || d.cfg.Integrations.ReconcileCooldown <= 0 {
		return time.Time{}
	}
	if from := runs[0].StartedAt.Add(d.cfg.Integrations.ReconcileCooldown); from.After(d.cfg.Now()) {
		return from
	}
	return time.Time{}
}

// reconcileIntegration asks for a run over the last RECONCILE_WINDOW and
// says so; a request within RECONCILE_COOLDOWN of the last run's start, a
// run already running, or an integration without the API credentials, is
// said instead. A platform without a pull has no such page: 404.
func (d *Dashboard) reconcileIntegration(w http.ResponseWriter, r *http.Request, c *Ctx) {
	p := r.PathValue("provider")
	if pd, ok := provider.Lookup(p); !ok || !pd.Can(provider.Pull) || d.cfg.Integrations.Reconciler == nil {
		d.notFound(w, r, c)
		return
	}
	in, err := d.cfg.Stores.Merchants.FindIntegration(r.Context(), c.MerchantID(), p)
	if apperr.Is(err, apperr.NotFound) {
		in, err = &merchant.Integration{Provider: p}, nil
	}
	if err != nil {
		d.fail(w, r, c, err)
		return
	}
	window := d.cfg.Integrations.ReconcileWindow
	if window <= 0 {
		window = 72 * time.Hour
	}
	to := d.cfg.Now().UTC()
	_, err = d.cfg.Integrations.Reconciler.Begin(r.Context(), c.MerchantID(), *in, to.Add(-window), to, false)
	switch {
	case err == nil:
		d.flash(r, "integrations.reconcile_requested")
	case apperr.Is(err, apperr.RateLimited):
		d.flash(r, "integrations.reconcile_cooldown")
	case apperr.Is(err, apperr.Conflict):
		d.flash(r, "integrations.reconcile_running")
	case apperr.Is(err, apperr.IntegrationNotConfigured):
		d.flash(r, "integrations.reconcile_not_configured")
	default:
		d.fail(w, r, c, err)
		return
	}
	http.Redirect(w, r, Prefix+"/integrations", http.StatusSeeOther)
}
