package dashboard

import (
	"context"
	"net/http"
	"time"

	"github.com/alexedwards/scs/v2"
	"github.com/google/uuid"
	"github.com/gorilla/mux"
	"go.uber.org/zap"

	"github.com/convida/convida/pkg/accesslog"
	"github.com/convida/convida/pkg/audit"
	"github.com/convida/convida/pkg/clientip"
	"github.com/convida/convida/pkg/merchant"
	"github.com/convida/convida/pkg/retry"
)

// KeyStore issues, lists and revokes API keys (postgres.MerchantStore).
type KeyStore interface {
	CreateKey(ctx context.Context, merchantID uuid.UUID) (plain string, k *merchant.Key, err error)
	ListKeys(ctx context.Context, merchantID uuid.UUID) ([]merchant.Key, error)
	RevokeKeyByID(ctx context.Context, merchantID, id uuid.UUID) error
}

// UserStore keeps the dashboard's users, invitations and sign-in attempts
// (postgres.DashboardUserStore).
type UserStore interface {
	// FindUserByEmail looks among the merchant's users only.
	FindUserByEmail(ctx context.Context, merchantID uuid.UUID, email string) (*merchant.DashboardUser, error)
	// FindUsersByEmail returns the e-mail's users of every merchant: only
	// the sign-in looks across merchants.
	FindUsersByEmail(ctx context.Context, email string) ([]merchant.DashboardUser, error)
	FindUser(ctx context.Context, merchantID, id uuid.UUID) (*merchant.DashboardUser, error)
	ListUsers(ctx context.Context, merchantID uuid.UUID) ([]merchant.DashboardUser, error)
	SetPassword(ctx context.Context, merchantID, id uuid.UUID, hash string) (sessionVersion int64, err error)
	SetRole(ctx context.Context, merchantID, id uuid.UUID, role string) error
	RemoveUser(ctx context.Context, merchantID, id uuid.UUID) error
	CreateInvite(ctx context.Context, in *merchant.Invite, tokenHash []byte) error
	FindInvite(ctx context.Context, tokenHash []byte, now time.Time) (*merchant.Invite, error)
	ListInvites(ctx context.Context, merchantID uuid.UUID, now time.Time) ([]merchant.Invite, error)
	CancelInvite(ctx context.Context, merchantID, id uuid.UUID) error
	AcceptInvite(ctx context.Context, tokenHash []byte, passwordHash string, now time.Time) (*merchant.DashboardUser, error)
	ClaimSignInAttempt(ctx context.Context, email, clientKey string, now time.Time, limits merchant.SignInLimits) (id int64, err error)
	ForgetSignInAttempt(ctx context.Context, id int64) error
	// RecordSignIn writes sign_in.succeeded of u by the actor of ctx.
	RecordSignIn(ctx context.Context, u *merchant.DashboardUser, details map[string]any) error
	// RecordFailedSignIn writes sign_in.failed in each user's merchant,
	// by an anonymous actor, naming the e-mail tried by its digest.
	RecordFailedSignIn(ctx context.Context, users []merchant.DashboardUser, emailDigest string) error
}

// Dashboard is the merchant dashboard served under /dashboard.
type Dashboard struct {
	cfg      Config
	log      *zap.Logger
	now      func() time.Time
	sessions *scs.SessionManager
	views    *views
	routes   *http.ServeMux
	handler  http.Handler
	// overviews caches the overview's reads briefly (overview.go).
	overviews overviewCache
	// outage spaces the warnings of pages answered 503 while the database
	// does not answer (render.go, fail).
	outage retry.Every
}

// New parses the templates (once) and builds the routes.
func New(cfg Config) (*Dashboard, error) {
	if cfg.Log == nil {
		cfg.Log = zap.NewNop()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Access.AuthFailures == nil {
		cfg.Access.AuthFailures = clientip.NoFailureLimit{}
	}
	if cfg.Access.IdleTimeout == 0 {
		cfg.Access.IdleTimeout = 2 * time.Hour
	}
	if cfg.Access.Lifetime == 0 {
		cfg.Access.Lifetime = 12 * time.Hour
	}
	v, err := parseViews()
	if err != nil {
		return nil, err
	}
	sm := scs.New()
	sm.Store = cfg.Access.Sessions
	sm.IdleTimeout, sm.Lifetime = cfg.Access.IdleTimeout, cfg.Access.Lifetime
	sm.Cookie.Name = "convida_session"
	sm.Cookie.Path = Prefix
	sm.Cookie.HttpOnly = true
	sm.Cookie.SameSite = http.SameSiteLaxMode
	sm.Cookie.Secure = secureCookies(cfg.Access.PublicURL)
	d := &Dashboard{cfg: cfg, log: cfg.Log, now: cfg.Now, sessions: sm, views: v, routes: http.NewServeMux()}
	sm.ErrorFunc = func(w http.ResponseWriter, r *http.Request, err error) { d.fail(w, r, nil, err) }
	d.registerRoutes()
	// The origin checks and the body limits come before the session is
	// loaded: a refused request costs no session read.
	d.handler = d.secure(sm.LoadAndSave(accesslog.ServeMuxRoutes(d.routes)))
	return d, nil
}

// Prefix is where the dashboard is mounted.
const Prefix = "/dashboard"

// Favicon is where the dashboard serves its icon outside Prefix.
const Favicon = "/favicon.ico"

// Register mounts the dashboard on r under /dashboard, and its icon at
// /favicon.ico, where browsers look for one on every page of the host
// (the API's error pages, a JSON answer) whatever the page links.
func (d *Dashboard) Register(r *mux.Router) {
	r.Handle(Favicon, d).Methods(http.MethodGet, http.MethodHead)
	r.PathPrefix(Prefix).Handler(d)
}

// ServeHTTP serves a request under /dashboard, and the icon.
func (d *Dashboard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// The audit events a request writes are stamped on the dashboard's clock.
	d.handler.ServeHTTP(w, r.WithContext(audit.WithClock(r.Context(), d.now)))
}

// registerRoutes is the dashboard's route table: each page file adds its
// routes in its own routes method, called here.
func (d *Dashboard) registerRoutes() {
	d.routes.Handle("GET "+Prefix+"/assets/", assetHandler())
	d.routes.Handle("GET "+Favicon, faviconHandler())
	d.signInRoutes()
	d.apiKeyRoutes()
	d.userRoutes()
	d.overviewRoutes()
	d.redemptionRoutes()
	d.referralRoutes()
	d.campaignRoutes()
	d.integrationRoutes()
	d.webhookRoutes()
	d.memberRoutes()
	d.creatorRoutes()
	d.activityRoutes()
	d.portalRoutes()
	// Anything else: 404 (behind sign-in, so that probing reveals nothing).
	d.page(Prefix+"/", func(w http.ResponseWriter, r *http.Request, c *Ctx) { d.notFound(w, r, c) })
}
