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
	"github.com/convida/convida/pkg/ingest"
	"github.com/convida/convida/pkg/kafkabus"
	"github.com/convida/convida/pkg/ledger"
	"github.com/convida/convida/pkg/postgres"
	"github.com/convida/convida/pkg/reconcile"
	"github.com/convida/convida/pkg/redisx"
	"github.com/convida/convida/pkg/respond"
	"github.com/convida/convida/pkg/topic"
)

// Middleware wraps a consumer's batch handler: a test or the bench
// counts, times or crashes around the production handler.
type Middleware func(next kafkabus.BatchHandler) kafkabus.BatchHandler

// wrap returns h wrapped by mw, or h when mw is nil.
func (mw Middleware) wrap(h kafkabus.BatchHandler) kafkabus.BatchHandler {
	if mw == nil {
		return h
	}
	return mw(h)
}

// consumerGroup is the configuration every consumer role shares: the
// brokers, the topic and its dead-letter topic, the session timeouts, the
// metrics, and the database errors retrying cannot fix (their message is
// dead-lettered instead of retried for ever). maxBatch 0 keeps the runner's default.
func (d *Deps) consumerGroup(groupID, t string, maxBatch int, log *zap.Logger) kafkabus.GroupConfig {
	return kafkabus.GroupConfig{
		Brokers: d.Config.KafkaBrokers, GroupID: groupID, Topic: t, DeadLetterTopic: topic.DeadLetter(t),
		MaxBatch: maxBatch, Logger: log, Metrics: d.Bus, Final: postgres.IsPermanent,
		SessionTimeout: d.Config.KafkaSessionTimeout, RebalanceTimeout: d.Config.KafkaSessionTimeout,
	}
}

// Ledger is the ledger role: it consumes ledger.commands, one goroutine
// per assigned partition, applies each batch in one transaction, relays
// its events, and commits the offsets only after the transaction. Its
// fields are built by NewLedger; a test or the bench replaces some before
// Run (a timed store, a crashing middleware).
type Ledger struct {
	Group    kafkabus.GroupConfig
	Store    ledger.Store
	Relay    ledger.Relayer
	Notifier ledger.Notifier
	Metrics  *ledger.Metrics
	Log      *zap.Logger
	Linger   time.Duration // ledger.Worker.Linger
	// Middleware, when set, wraps the batch handler.
	Middleware Middleware
}

// NewLedger returns the ledger role as production runs it.
func NewLedger(d *Deps) *Ledger {
	return &Ledger{
		Group:    d.consumerGroup(d.Config.LedgerGroup, topic.Commands, d.Config.LedgerMaxBatch, d.Log.Named("ledger")),
		Store:    postgres.NewLedgerStore(d.Pool, d.Now),
		Relay:    d.Relay(),
		Notifier: redisx.NewResults(d.Redis, d.RedisBreaker, d.Log),
		Metrics:  d.Ledger,
		Log:      d.Log.Named("ledger"),
		Linger:   d.Config.LedgerLinger,
	}
}

// Handler returns the batch handler: topic decodes, the worker applies
// in one transaction and relays the events.
func (l *Ledger) Handler() kafkabus.BatchHandler {
	worker := ledger.NewWorker(l.Store, l.Relay, l.Notifier, l.Metrics, l.Log)
	worker.Linger = l.Linger
	return l.Middleware.wrap(topic.CommandsHandler(worker.Handle))
}

// Run consumes until ctx ends.
func (l *Ledger) Run(ctx context.Context) error { return kafkabus.RunGroup(ctx, l.Group, l.Handler()) }

// RunLedger runs the ledger role as production does.
func RunLedger(ctx context.Context, d *Deps) error {
	if err := d.WaitStarted(ctx); err != nil {
		return err
	}
	return NewLedger(d).Run(ctx)
}

// Ingest is the ingest role: the Guru and Yampi receivers, which turn
// paid and refunded orders into ledger commands.
type Ingest struct {
	Addr string
	// Listener, when set, is served instead of listening on Addr (the
	// standalone binds its ports before it starts: bind).
	Listener net.Listener
	Now      func() time.Time
	d        *Deps
}

// NewIngest returns the ingest role as production runs it.
func NewIngest(d *Deps) *Ingest { return &Ingest{Addr: d.Config.IngestAddr, Now: d.Now, d: d} }

// Router returns the ingest HTTP handler: the receivers and /healthz.
func (in *Ingest) Router() *mux.Router {
	d := in.d
	svc := ingest.New(ingest.Config{
		Merchants: postgres.NewMerchantStore(d.Pool, d.Box),
		Coupons:   postgres.NewMemberStore(d.Pool),
		Dedupe:    redisx.NewDedupe(d.Redis, d.RedisBreaker),
		Publisher: d.Commands,
		Log:       d.Log.Named("ingest"),
		Now:       in.Now,
		Metrics:   ingest.NewMetrics(d.Registry),
		Limiter:   redisx.NewLimiter(d.Redis, d.RedisBreaker),
		RateLimit: d.Config.IngestRateLimit,
		// A nil *redisx.AuthFailures (AUTH_FAILURE_LIMIT=0) limits nothing.
		AuthFailures: authFailures(d, "ingest"),
		Clients:      d.Config.TrustedProxies,
	})
	r := mux.NewRouter()
	svc.Register(r)
	d.AddHealth(r)
	return r
}

// Run serves on Listener, or else on Addr, until ctx ends. A taken Addr
// is an error naming INGEST_ADDR.
func (in *Ingest) Run(ctx context.Context) error {
	l, err := listenUnlessBound(in.Listener, "INGEST_ADDR", in.Addr)
	if err != nil {
		return err
	}
	return in.d.serveStarting(ctx, "ingest", l, respond.Starting(respond.Admin),
		func() http.Handler { return in.d.instrument("ingest", in.Router()) })
}

// IngestRouter returns the ingest router as production serves it.
func IngestRouter(d *Deps) *mux.Router { return NewIngest(d).Router() }

// RunIngest serves the ingest on INGEST_ADDR until ctx ends.
func RunIngest(ctx context.Context, d *Deps) error { return NewIngest(d).Run(ctx) }

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
	d := a.d
	failures := authFailures(d, "api") // one count for the API and the dashboard
	outcomes := postgres.NewOutcomeStore(d.Pool)
	waiter := &ledger.Waiter{Store: outcomes, Sub: redisx.NewResults(d.Redis, d.RedisBreaker, d.Log)}
	idempotency := redisx.NewIdempotency(d.Redis, d.RedisBreaker)
	// An erasure, through the API or the dashboard, forgets the kept
	// answers that show the member.
	members := postgres.NewMemberStore(d.Pool).WithRelay(d.Relay()).WithClock(a.Now).WithAnswers(idempotency, d.Log.Named("api"))
	webhooks := postgres.NewWebhookStore(d.Pool, d.Box)
	merchants := postgres.NewMerchantStore(d.Pool, d.Box)
	campaigns := postgres.NewCampaignStore(d.Pool)
	referrals := postgres.NewReferralReads(d.Pool)
	wallets := postgres.NewWalletReads(d.Pool)
	coupons := postgres.NewCouponStore(d.Pool)
	creators := postgres.NewCreatorStore(d.Pool, d.Box)
	tiers := postgres.NewCampaignTierStore(d.Pool)
	redemptions := postgres.NewRedemptionReads(d.Pool)
	trail := postgres.NewAuditStore(d.Pool)
	// The runs the API and the dashboard ask for, refused within
	// RECONCILE_COOLDOWN of the integration's last run.
	requests := &reconcile.Reconciler{Store: postgres.NewReconcileStore(d.Pool), Now: a.Now, Cooldown: d.Config.ReconcileCooldown}
	_, r := httpapi.New(httpapi.Config{
		Merchants:       merchants,
		Campaigns:       campaigns,
		Members:         members,
		Wallets:         wallets,
		Coupons:         coupons,
		Log:             d.Log.Named("api"),
		Now:             a.Now,
		IngestPublicURL: d.Config.IngestPublicURL,
		PublicURL:       d.Config.PublicURL,
		TrustedProxies:  d.Config.TrustedProxies,
		Classify:        postgres.Classify,
		Webhooks:        webhooks,
		DeliveryLog:     webhooks,
		Deliveries:      postgres.NewDeliveryStore(d.Pool),
		Reconcile: httpapi.ReconcileConfig{Reconciler: requests,
			Runs: postgres.NewReconcileStore(d.Pool), Window: d.Config.ReconcileWindow},
		EventPayloads: webhooks,
		WebhookSender: NewWebhookSender(d.Config),

		PlatformAllowPrivateNetworks: d.Config.PlatformAllowPrivateNetworks,
		WebhookAllowPrivateNetworks:  d.Config.WebhookAllowPrivateNetworks,
		Catalog: httpapi.CatalogConfig{
			Members:   members,
			Campaigns: campaigns,
			Referrals: referrals,
			Privacy:   members,
		},
		Protection: httpapi.ProtectionConfig{
			Limiter:      redisx.NewLimiter(d.Redis, d.RedisBreaker),
			Idempotency:  idempotency,
			AuthFailures: failures,
			Log:          d.Log.Named("api"),
		},
		Actions: httpapi.ActionsConfig{
			Commands:    d.Commands,
			Waiter:      waiter,
			Redemptions: outcomes,
			Referrals:   referrals,
			Timeout:     d.Config.ActionTimeout,
		},
		Creators: httpapi.CreatorsConfig{
			Profiles: creators,
			Tiers:    tiers,
		},
		Audit:  trail,
		Portal: a.portalAPI(),
	})
	dash, err := dashboard.New(dashboard.Config{
		Referrals: referrals,
		Decisions: ledger.Decider{Commands: d.Commands, Waiter: waiter, Referrals: referrals, Timeout: d.Config.ActionTimeout},
		Campaigns: campaigns,
		Tiers:     tiers,
		Merchants: merchants,
		Keys:      merchants,
		Users:     postgres.NewDashboardUserStore(d.Pool),
		Audit:     trail,
		Sessions:  postgres.NewSessionStore(d.Pool, a.Now),
		Log:       d.Log.Named("dashboard"),
		Now:       a.Now,
		PublicURL: d.Config.PublicURL,

		// The password throttle's reading of the client's address, and the
		// API's failed-authentication limit, which a flood of wrong
		// passwords from one address joins.
		TrustedProxies: d.Config.TrustedProxies,
		AuthFailures:   failures,
		Classify:       postgres.Classify,

		// Overview and Redemptions.
		Overview:          postgres.NewOverviewReads(d.Pool),
		Redemptions:       redemptions,
		RedemptionFinder:  outcomes,
		RedemptionMembers: members,

		// Integrations and webhooks.
		Integrations:       merchants,
		Deliveries:         postgres.NewDeliveryStore(d.Pool),
		IngestPublicURL:    d.Config.IngestPublicURL,
		Reconciler:         requests,
		ReconciliationRuns: postgres.NewReconcileStore(d.Pool),
		ReconcileWindow:    d.Config.ReconcileWindow,
		ReconcileCooldown:  d.Config.ReconcileCooldown,
		Webhooks:           webhooks,
		WebhookSender:      NewWebhookSender(d.Config),

		PlatformAllowPrivateNetworks: d.Config.PlatformAllowPrivateNetworks,
		WebhookAllowPrivateNetworks:  d.Config.WebhookAllowPrivateNetworks,
		// Members and Creators.
		Members:         members,
		Wallets:         wallets,
		MemberCampaigns: campaigns,
		Coupons:         coupons,
		Creators:        creators,
		Redeemer: ledger.Redeemer{
			Commands:     d.Commands,
			Waiter:       waiter, // one subscription to the ledger's outcomes for the API and the dashboard
			Redemptions:  outcomes,
			Integrations: merchants,
		},
		ActionTimeout:  d.Config.ActionTimeout,
		PortalSettings: postgres.NewPortalSettings(d.Pool),
		PortalTokens:   postgres.NewPortalTokens(d.Pool),
	})
	if err != nil {
		panic(err) // the templates are embedded: a parse error is a build defect
	}
	dash.Register(r)
	a.mountPortal(r, waiter, outcomes, merchants)
	d.AddHealth(r)
	return r
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

// authFailures returns the failed-authentication limit of an edge
// (AUTH_FAILURE_LIMIT per minute per client address), nil when it is off.
func authFailures(d *Deps, edge string) *redisx.AuthFailures {
	if d.Config.AuthFailureLimit <= 0 {
		return nil
	}
	return redisx.NewAuthFailures(d.Redis, d.RedisBreaker, redisx.AuthFailuresConfig{
		Edge: edge, PerMinute: d.Config.AuthFailureLimit, Registry: d.Registry, Now: d.Now})
}
