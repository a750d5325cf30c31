package program

import (
	"context"
	"net"
	"net/http"
	"time"

	"github.com/gorilla/mux"
	"go.uber.org/zap"

	"github.com/convida/convida/pkg/dashboard"
	"github.com/convida/convida/pkg/httpapi"
	"github.com/convida/convida/pkg/ledger"
	"github.com/convida/convida/pkg/postgres"
	"github.com/convida/convida/pkg/reconcile"
	"github.com/convida/convida/pkg/redisx"
	"github.com/convida/convida/pkg/respond"
	"github.com/convida/convida/pkg/webhook"
)

// API is the api role: the member-facing and administrative HTTP API.
type API struct {
	Addr string
	// Listener, when set, is served instead of listening on Addr (bind).
	Listener net.Listener
	Now      func() time.Time
	d        *Deps
}

// NewAPI returns the api role as production runs it.
func NewAPI(d *Deps) *API { return &API{Addr: d.Config.HTTPAddr, Now: d.Now, d: d} }

// Router returns the API HTTP handler: /api/v1, the dashboard under
// /dashboard, and /healthz.
func (a *API) Router() *mux.Router {
	w := a.wiring()
	_, r := httpapi.New(w.httpapi())
	dash, err := dashboard.New(w.dashboard())
	if err != nil {
		panic(err) // the templates are embedded: a parse error is a build defect
	}
	dash.Register(r)
	w.mountPortal(r)
	a.d.AddHealth(r)
	return r
}

// apiWiring is what the API's two edges, /api/v1 and the dashboard,
// share: the stores, one subscription to the ledger's outcomes, one count
// of failed authentications (a flood of wrong passwords joins the one of
// wrong API keys), one reconciler and one webhook sender.
type apiWiring struct {
	stores
	d          *Deps
	now        func() time.Time
	waiter     *ledger.Waiter
	failures   *redisx.AuthFailures // nil (AUTH_FAILURE_LIMIT=0) limits nothing
	reconciler *reconcile.Reconciler
	sender     *webhook.Client
}

// wiring builds what the two edges share, once.
func (a *API) wiring() *apiWiring {
	d, s := a.d, newStores(a.d, a.Now)
	return &apiWiring{stores: s, d: d, now: a.Now,
		waiter:     &ledger.Waiter{Store: s.outcomes, Sub: redisx.NewResults(d.Redis, d.RedisBreaker, d.Log)},
		failures:   authFailures(d, "api"),
		reconciler: newReconciler(d, s, a.Now),
		sender:     NewWebhookSender(d.Config),
	}
}

// httpapi wires /api/v1. The catalog's stores switch its routes on (an
// unset one leaves them out), hence a second mention of the same stores.
func (w *apiWiring) httpapi() httpapi.Config {
	c, log := w.d.Config, w.d.Log.Named("api")
	return httpapi.Config{
		Merchants: w.merchants, Campaigns: w.campaigns, Members: w.members, Wallets: w.wallets, Coupons: w.coupons,
		Webhooks: w.webhooks, WebhookSender: w.sender, Deliveries: w.deliveries, Audit: w.audit,
		Catalog:  httpapi.CatalogConfig{Members: w.members, Campaigns: w.campaigns, Referrals: w.referrals},
		Creators: httpapi.CreatorsConfig{Profiles: w.creators, Tiers: w.tiers},
		Actions: httpapi.ActionsConfig{Commands: w.d.Commands, Waiter: w.waiter, Redemptions: w.outcomes,
			Referrals: w.referrals, Timeout: c.ActionTimeout},
		Reconcile:  httpapi.ReconcileConfig{Reconciler: w.reconciler, Runs: w.reconciles, Window: c.ReconcileWindow},
		Portal:     w.portalAPI(),
		Protection: httpapi.ProtectionConfig{Limiter: w.limiter, Idempotency: w.idempotency, AuthFailures: w.failures, Log: log},

		Log: log, Now: w.now, Classify: postgres.Classify,
		IngestPublicURL: c.IngestPublicURL, PublicURL: c.PublicURL, TrustedProxies: c.TrustedProxies,
		PlatformAllowPrivateNetworks: c.PlatformAllowPrivateNetworks, WebhookAllowPrivateNetworks: c.WebhookAllowPrivateNetworks,
	}
}

// dashboard wires the dashboard under /dashboard.
func (w *apiWiring) dashboard() dashboard.Config {
	c, pool := w.d.Config, w.d.Pool
	return dashboard.Config{
		Stores: dashboard.Stores{
			Merchants: w.merchants, Users: postgres.NewDashboardUserStore(pool),
			Members: w.members, Campaigns: w.campaigns, Tiers: w.tiers, Creators: w.creators, Coupons: w.coupons,
			Wallets: w.wallets, Referrals: w.referrals, Redemptions: w.redemptions, Outcomes: w.outcomes,
			Overview: postgres.NewOverviewReads(pool), Deliveries: w.deliveries, Webhooks: w.webhooks, Audit: w.audit,
			PortalSettings: postgres.NewPortalSettings(pool), PortalTokens: postgres.NewPortalTokens(pool),
		},
		Actions: dashboard.Actions{Commands: w.d.Commands, Waiter: w.waiter, Timeout: c.ActionTimeout},
		Integrations: dashboard.Integrations{IngestPublicURL: c.IngestPublicURL,
			AllowPrivateNetworks: c.PlatformAllowPrivateNetworks, Reconciler: w.reconciler, Runs: w.reconciles,
			ReconcileWindow: c.ReconcileWindow, ReconcileCooldown: c.ReconcileCooldown},
		Webhooks: dashboard.Webhooks{Sender: w.sender, AllowPrivateNetworks: c.WebhookAllowPrivateNetworks},
		Access: dashboard.Access{Sessions: postgres.NewSessionStore(pool, w.now), PublicURL: c.PublicURL,
			TrustedProxies: c.TrustedProxies, AuthFailures: w.failures},

		Log: w.d.Log.Named("dashboard"), Now: w.now, Classify: postgres.Classify,
	}
}

// Run serves on Listener, or else on Addr, until ctx ends. A taken Addr
// is an error naming HTTP_ADDR.
func (a *API) Run(ctx context.Context) error {
	warnPlainPublicURL(a.d.Log, a.d.Config.PublicURL)
	l, err := listenUnlessBound(a.Listener, "HTTP_ADDR", a.Addr)
	if err != nil {
		return err
	}
	return a.d.serveStarting(ctx, "api", l, httpapi.Starting(),
		func() http.Handler { return a.d.instrument("api", a.Router()) })
}

// warnPlainPublicURL warns, once as the API starts, that PUBLIC_URL is not
// https (issue 29): browsers then get the dashboard's session cookie
// without Secure and no Strict-Transport-Security, and the API keys and
// passwords they send travel in clear unless the address is only this
// machine's. Right for trying Convida on localhost, wrong anywhere else.
func warnPlainPublicURL(log *zap.Logger, publicURL string) {
	if respond.HSTS(publicURL) == "" {
		log.Warn("PUBLIC_URL is not https: dashboard cookies are sent without Secure and no Strict-Transport-Security is set; "+
			"set PUBLIC_URL to the https address clients use (a proxy in front may terminate TLS)", zap.String("public_url", publicURL))
	}
}

// APIRouter returns the API router as production serves it.
func APIRouter(d *Deps) *mux.Router { return NewAPI(d).Router() }

// RunAPI serves the API on HTTP_ADDR until ctx ends.
func RunAPI(ctx context.Context, d *Deps) error { return NewAPI(d).Run(ctx) }
