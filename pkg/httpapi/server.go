// Package httpapi is the HTTP edge of the API program: the member-facing
// and administrative interfaces under /api/v1 and webhook management under
// /v1/webhooks, with authentication, JSON decoding and the mapping of errors
// to the spec's envelope (through pkg/respond). Each resource has its file
// (members.go, campaigns.go, referrals.go, redemptions.go, integrations.go,
// webhooks.go, memberfacing.go): the store interfaces it needs, its routes,
// handlers and views.
package httpapi

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/gorilla/mux"
	"go.uber.org/zap"

	"github.com/convida/convida/pkg/accesslog"
	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/audit"
	"github.com/convida/convida/pkg/campaign"
	"github.com/convida/convida/pkg/clientip"
	"github.com/convida/convida/pkg/ledger"
	"github.com/convida/convida/pkg/merchant"
	"github.com/convida/convida/pkg/redemption"
	"github.com/convida/convida/pkg/referral"
	"github.com/convida/convida/pkg/respond"
	"github.com/convida/convida/pkg/retry"
	"github.com/convida/convida/pkg/webhook"
)

// Merchants is what the API needs of merchants (postgres.MerchantStore):
// what the dashboard shares, and the API keys.
type Merchants interface {
	merchant.Finder
	merchant.IntegrationStore
	// Authenticate returns the key a presented key is (id, merchant,
	// display prefix), or apperr.Unauthorized.
	Authenticate(ctx context.Context, plainKey string) (merchant.Key, error)
}

// Wallets is the read side of the wallet (postgres.WalletReads), with the
// member's referrals of the member-facing API.
type Wallets interface {
	ledger.WalletReader
	ListMemberReferrals(ctx context.Context, merchantID, memberID uuid.UUID) ([]referral.Referral, error)
}

// Config wires the API.
type Config struct {
	Merchants       Merchants
	Campaigns       Campaigns
	Members         Members
	Wallets         Wallets
	Coupons         redemption.Coupons // members' coupons at the platforms; nil leaves out POST /members/{id}/provision-coupon
	Log             *zap.Logger
	Now             func() time.Time
	IngestPublicURL string // base of the webhook URLs shown for integrations, and the ingest's server in the OpenAPI document
	PublicURL       string // the API's base as clients reach it: the OpenAPI document's server
	// KeyCacheTTL bounds how long a revoked key may still work (≤ 5 s).
	KeyCacheTTL time.Duration
	// PlatformAllowPrivateNetworks lets an integration's api_url name
	// loopback and private addresses, and http (PLATFORM_ALLOW_PRIVATE_NETWORKS).
	PlatformAllowPrivateNetworks bool
	// WebhookAllowPrivateNetworks lets a webhook endpoint's url name
	// loopback and private addresses (WEBHOOK_ALLOW_PRIVATE_NETWORKS).
	WebhookAllowPrivateNetworks bool
	// TrustedProxies tells a request's client (TRUSTED_PROXIES) to every
	// per-client limit and to the access log.
	TrustedProxies clientip.Resolver
	// Classify, when set, recasts an error a store returned because its
	// database did not answer (postgres.Classify: apperr.ServiceUnavailable),
	// so that it is answered 503 with Retry-After instead of 500.
	Classify func(error) error

	// Webhooks (the endpoints, their delivery log and the events' payloads)
	// and WebhookSender serve /v1/webhooks (webhooks.go): a nil Webhooks
	// leaves those routes out, a nil WebhookSender the test and retry
	// operations, which send.
	Webhooks      webhook.ManualStore
	WebhookSender webhook.Sender

	// Audit serves GET /api/v1/audit-events (audit_events.go); nil leaves
	// it out.
	Audit audit.Trail
	// Deliveries serves GET /api/v1/integrations/{provider}/deliveries
	// (deliveries.go); nil leaves it out.
	Deliveries InboundDeliveries
	// Reconcile serves POST /api/v1/integrations/{provider}/reconcile and
	// GET …/reconciliations (reconciliations.go); nil stores leave them
	// out.
	Reconcile ReconcileConfig

	Catalog    CatalogConfig    // lists and updates (members.go, campaigns.go, referrals.go)
	Protection ProtectionConfig // idempotency and rate limits (protection.go)
	Actions    ActionsConfig    // wallet actions through the ledger (actions.go, referrals.go, redemptions.go)
	Creators   CreatorsConfig   // creator profiles, commission tiers and the public creator operations (creators.go, campaign_tiers.go)
	Portal     PortalConfig     // the member's portal: session links, embed tokens, settings (portal_sessions.go)
}

// CatalogConfig wires the list and update operations. A nil store leaves
// its routes out of the router (they answer 405 or 404 like any unknown
// route), so a partial wiring never turns into a 500.
type CatalogConfig struct {
	Members   MemberCatalog    // GET /members, PATCH /members/{id}, POST /members/{id}/erase, GET /members/{id}/export
	Campaigns campaign.Catalog // GET /campaigns, PATCH /campaigns/{id}
	Referrals ReferralCatalog  // GET /referrals, GET /referrals/{id}
}

// Server serves the API.
type Server struct {
	cfg  Config
	log  *zap.Logger
	auth *authenticator
	docs func() (docsFile, error) // the served OpenAPI document, computed once (docs.go)
	// outage spaces the warnings of requests answered 503 because the
	// database does not answer: one per 30 s, not one per request.
	outage retry.Every
}

// New returns the API router. Ops routes (/healthz…) are added by the caller.
func New(cfg Config) (*Server, *mux.Router) {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.KeyCacheTTL <= 0 || cfg.KeyCacheTTL > 5*time.Second {
		cfg.KeyCacheTTL = 5 * time.Second
	}
	if cfg.Protection.AuthFailures == nil {
		cfg.Protection.AuthFailures = clientip.NoFailureLimit{}
	}
	s := &Server{cfg: cfg, log: cfg.Log, auth: newAuthenticator(cfg.Merchants, cfg.KeyCacheTTL, cfg.Now),
		outage: retry.Every{Interval: retry.OutageWarnEvery}}
	s.docs = sync.OnceValues(s.newDocsFile)
	r := mux.NewRouter()
	accessLog := accesslog.Middleware(s.log, cfg.TrustedProxies)
	// Strict-Transport-Security on every answer, the dashboard's (which
	// this router serves) and the unrouted ones too, when PUBLIC_URL is https.
	hsts := respond.StrictTransport(cfg.PublicURL)
	notFound, notAllowed := respond.Unrouted(r, accessLog)
	r.NotFoundHandler, r.MethodNotAllowedHandler = hsts(notFound), hsts(notAllowed)
	r.Use(hsts, accessLog, s.recoverPanics)

	s.registerDocs(r)

	// The subrouters carry no path prefix: with one, gorilla/mux v1.8 lets
	// the copied prefix matcher of a later route clear a method mismatch, so
	// a wrong method answered 404 instead of 405.
	mf := r.NewRoute().Subrouter()
	mf.Use(s.withStyle(respond.Member), s.authenticate, noteMerchant, s.checkQuery, s.rateLimit, s.idempotency)
	admin := r.NewRoute().Subrouter()
	admin.Use(s.withStyle(respond.Admin), s.authenticate, noteMerchant, s.checkQuery, s.rateLimit, s.idempotency)
	// The creator operations: no API key, the token in the path is the
	// credential (creators.go adds their middleware).
	public := r.NewRoute().Subrouter()

	s.registerMemberFacing(mf)
	s.registerMembers(admin)
	s.registerCampaigns(admin)
	s.registerReferrals(admin)
	s.registerRedemptions(mf, admin)
	s.registerIntegrations(admin)
	s.registerDeliveries(admin)
	s.registerReconciliations(admin)
	s.registerWebhooks(admin)
	s.registerCreators(admin, public)
	s.registerAuditEvents(admin)
	s.registerPortal(admin)
	return s, r
}

// v1 is the path prefix of the member-facing and admin interfaces.
const v1 = "/api/v1"

type ctxKey int

const (
	styleKey ctxKey = iota
	merchantKey
)

func (s *Server) withStyle(style respond.Style) mux.MiddlewareFunc {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), styleKey, style)))
		})
	}
}

func styleOf(r *http.Request) respond.Style {
	s, _ := r.Context().Value(styleKey).(respond.Style)
	return s
}

func merchantOf(r *http.Request) *merchant.Merchant {
	m, _ := r.Context().Value(merchantKey).(*merchant.Merchant)
	return m
}

// checkQuery answers 400 to query parameters PostgreSQL text cannot hold
// (invalid UTF-8, NUL), which would otherwise fail their query with a 500.
func (s *Server) checkQuery(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for name, values := range r.URL.Query() {
			for _, v := range append(values, name) {
				if !validText(v) {
					s.fail(w, r, apperr.Errorf(apperr.Invalid, "%s: must be UTF-8 text without NUL characters",
						strings.ToValidUTF8(strings.ReplaceAll(name, "\x00", ""), "?")))
					return
				}
			}
		}
		next.ServeHTTP(w, r)
	})
}

// fail answers err in the request's style; an outage of the database is
// a 503 (classify).
func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	respond.Error(w, s.log, styleOf(r), s.classify(err))
}

// classify applies Config.Classify, and warns now and then while the
// database does not answer.
func (s *Server) classify(err error) error {
	if s.cfg.Classify == nil {
		return err
	}
	err = s.cfg.Classify(err)
	if apperr.Is(err, apperr.ServiceUnavailable) && s.log != nil && s.outage.Due() {
		s.log.Warn("the database does not answer: requests that need it are answered 503 until it does", zap.Error(err))
	}
	return err
}

// recoverPanics turns a panic into a logged 500 envelope instead of a
// dropped connection; tests fail on any 500, so a panic is still a bug.
// http.ErrAbortHandler goes on to net/http, which drops the connection:
// a handler that began an answer it cannot finish (a dashboard CSV export
// whose database fails midway) cuts it rather than end it as if whole.
func (s *Server) recoverPanics(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v) // a handler cutting its answer short: net/http drops the connection
				}
				// The route template, not the path: a path may hold a
				// creator token.
				s.log.Error("panic serving request", zap.Any("panic", v), zap.String("route", accesslog.RouteTemplate(r)))
				respond.Error(w, nil, styleOf(r), apperr.Errorf(apperr.Internal, "internal error"))
			}
		}()
		next.ServeHTTP(w, r)
	})
}
