// Package portal is the member's own page: server-rendered HTML under
// /portal (hosted) and /embed/portal (inside an iframe on the merchant's
// site), usable with JavaScript off and on a 360 px phone, in Portuguese by
// default and in English. A member comes in by a link the merchant's
// backend mints (/portal/s/{token}), by an embed token, or by a link
// e-mailed to her (/portal/m/{token}); her session (cookie convida_portal,
// or convida_portal_embed in an iframe) names her and her merchant only, so
// no id in a URL reaches anyone else. The pages read through the domain
// contracts the API reads through, and a redemption runs the ledger's
// command as the API's does. docs/portal.md explains the design.
package portal

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/alexedwards/scs/v2"
	"github.com/google/uuid"
	"github.com/gorilla/mux"
	"go.uber.org/zap"

	"github.com/convida/convida/pkg/accesslog"
	"github.com/convida/convida/pkg/campaign"
	"github.com/convida/convida/pkg/clientip"
	"github.com/convida/convida/pkg/ledger"
	"github.com/convida/convida/pkg/member"
	"github.com/convida/convida/pkg/merchant"
	"github.com/convida/convida/pkg/portalaccess"
	"github.com/convida/convida/pkg/referral"
	"github.com/convida/convida/pkg/retry"
)

// Wallets is what the pages read of a member's money and referrals: the
// API's member-facing reads (postgres.WalletReads).
type Wallets interface {
	ledger.WalletReader
	ListMemberReferrals(ctx context.Context, merchantID, memberID uuid.UUID) ([]referral.Referral, error)
}

// SignIns bounds the e-mailed sign-in requests (postgres.PortalSignIns).
type SignIns interface {
	ClaimPortalSignIn(ctx context.Context, emailHash, clientKey string, now time.Time, window time.Duration,
		perEmail, perClient int) (bool, error)
}

// Mailer sends an e-mail (mailer.SMTP).
type Mailer interface {
	Send(ctx context.Context, to, subject, text string) error
}

// Config is what the portal needs.
type Config struct {
	Merchants merchant.Finder
	Members   member.Finder
	Wallets   Wallets
	Campaigns campaign.Finder
	// Integrations give the platforms' checkout links, for the member's
	// link at each platform that attributes a sale by its link.
	Integrations member.IntegrationFinder
	Tokens       portalaccess.Tokens
	Settings     portalaccess.SettingsStore
	// Sessions keeps the sessions (postgres.NewPortalSessionStore).
	Sessions scs.Store
	// SignIns and Mailer serve the sign-in by e-mail; a nil Mailer (no
	// SMTP_URL) makes the sign-in page say it is not available.
	SignIns SignIns
	Mailer  Mailer
	// Redeemer runs a redemption: the ledger command the API runs.
	// ActionTimeout is how long it waits for the platform (0: 10 s).
	Redeemer      ledger.Redeemer
	ActionTimeout time.Duration

	Log *zap.Logger
	Now func() time.Time
	// PublicURL is how browsers reach the portal (PUBLIC_URL): the base of
	// the links it mints and e-mails, the origin its forms must come from,
	// and https makes the hosted cookie Secure.
	PublicURL      string
	TrustedProxies clientip.Resolver
	// Classify recasts a store's error that says its database did not
	// answer (postgres.Classify), so that the page is a 503.
	Classify func(error) error
}

// The portal's mount points and cookies.
const (
	Prefix       = "/portal"
	EmbedPrefix  = "/embed/portal"
	Cookie       = "convida_portal"
	EmbedCookie  = "convida_portal_embed"
	langCookie   = "convida_portal_lang"
	loaderScript = "/embed/portal.js"
)

// Portal serves the member's portal.
type Portal struct {
	cfg           Config
	log           *zap.Logger
	now           func() time.Time
	hosted, embed *scs.SessionManager
	views         *views
	routes        *http.ServeMux
	hostedHandler http.Handler
	embedHandler  http.Handler
	mail          chan struct{} // bounds the e-mails being sent at once
	outage        retry.Every
}

// New parses the templates and builds the routes.
func New(cfg Config) (*Portal, error) {
	if cfg.Log == nil {
		cfg.Log = zap.NewNop()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	v, err := parseViews()
	if err != nil {
		return nil, err
	}
	p := &Portal{cfg: cfg, log: cfg.Log, now: cfg.Now, views: v, routes: http.NewServeMux(),
		mail: make(chan struct{}, 16), outage: retry.Every{Interval: retry.OutageWarnEvery}}
	p.hosted = p.sessionManager(Cookie, Prefix, http.SameSiteLaxMode, strings.HasPrefix(cfg.PublicURL, "https://"), false)
	// In an iframe the cookie is a third party's: SameSite=None needs
	// Secure, and Partitioned keeps it to the embedding site (CHIPS).
	p.embed = p.sessionManager(EmbedCookie, EmbedPrefix, http.SameSiteNoneMode, true, true)
	p.registerRoutes()
	logged := accesslog.ServeMuxRoutes(p.routes)
	p.hostedHandler = p.secure(false, p.hosted.LoadAndSave(logged))
	p.embedHandler = p.secure(true, p.embed.LoadAndSave(logged))
	return p, nil
}

func (p *Portal) sessionManager(name, path string, sameSite http.SameSite, secure, partitioned bool) *scs.SessionManager {
	sm := scs.New()
	sm.Store = p.cfg.Sessions
	sm.IdleTimeout, sm.Lifetime = portalaccess.SessionIdle, portalaccess.SessionLifetime
	sm.Cookie.Name, sm.Cookie.Path = name, path
	sm.Cookie.HttpOnly, sm.Cookie.SameSite, sm.Cookie.Secure, sm.Cookie.Partitioned = true, sameSite, secure, partitioned
	sm.ErrorFunc = func(w http.ResponseWriter, r *http.Request, err error) { p.fail(w, r, nil, err) }
	return sm
}

// Register mounts the portal on r: /portal, /embed/portal and the loader
// script /embed/portal.js.
func (p *Portal) Register(r *mux.Router) {
	r.PathPrefix(EmbedPrefix).Handler(p)
	r.PathPrefix(Prefix).Handler(p)
}

// ServeHTTP serves a request under /portal or /embed/portal.
func (p *Portal) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if embedded(r) {
		p.embedHandler.ServeHTTP(w, r)
		return
	}
	p.hostedHandler.ServeHTTP(w, r)
}

// embedded reports whether r is for the embedded portal.
func embedded(r *http.Request) bool { return strings.HasPrefix(r.URL.Path, "/embed/") }

// sessions is the session manager of r's door.
func (p *Portal) sessions(r *http.Request) *scs.SessionManager {
	if embedded(r) {
		return p.embed
	}
	return p.hosted
}

// base is the path prefix of r's door: the pages link within it.
func base(r *http.Request) string {
	if embedded(r) {
		return EmbedPrefix
	}
	return Prefix
}

// registerRoutes is the route table; each page is served at both doors.
func (p *Portal) registerRoutes() {
	for _, b := range []string{Prefix, EmbedPrefix} {
		p.routes.Handle("GET "+b+"/assets/", assetHandler(b))
		p.member("GET "+b+"/qr.svg", p.qr)
		p.member("GET "+b+"/wallet", p.wallet)
		p.member("GET "+b+"/referrals", p.referrals)
		p.member("GET "+b+"/redeem", p.redeemForm)
		p.member("POST "+b+"/redeem", p.redeem)
		p.routes.HandleFunc("POST "+b+"/sign-out", p.signOut)
		p.routes.HandleFunc("POST "+b+"/language", p.chooseLanguage)
		p.routes.HandleFunc(b+"/", func(w http.ResponseWriter, r *http.Request) { p.notFound(w, r, p.anonymous(r)) })
	}
	p.member("GET "+Prefix, p.share)
	p.routes.HandleFunc("GET "+EmbedPrefix, p.embedEntry)
	p.routes.HandleFunc("GET "+loaderScript, p.loader)
	p.routes.HandleFunc("GET "+Prefix+"/s/{token}", p.exchange)
	p.signInRoutes()
}
