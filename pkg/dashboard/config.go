package dashboard

import (
	"time"

	"github.com/alexedwards/scs/v2"
	"go.uber.org/zap"

	"github.com/convida/convida/pkg/audit"
	"github.com/convida/convida/pkg/clientip"
	"github.com/convida/convida/pkg/creator"
	"github.com/convida/convida/pkg/ledger"
	"github.com/convida/convida/pkg/merchant"
	"github.com/convida/convida/pkg/portalaccess"
	"github.com/convida/convida/pkg/reconcile"
	"github.com/convida/convida/pkg/redemption"
	"github.com/convida/convida/pkg/webhook"
)

// Config is what the dashboard needs: the stores its pages read and
// write, the ledger commands its actions issue, the settings of the
// integrations and webhooks pages, and how browsers reach it and sign in.
// A page needing a store another page reads shares its field: a store is
// given once.
type Config struct {
	Stores       Stores
	Actions      Actions
	Integrations Integrations
	Webhooks     Webhooks
	Access       Access

	Log *zap.Logger
	Now func() time.Time
	// Classify, when set, recasts a store's error that says its database
	// did not answer (postgres.Classify) so that the page is a 503 with
	// Retry-After rather than a 500.
	Classify func(error) error
}

// Stores are the stores of the pages, one field per store (the postgres
// store of the same name unless said).
type Stores struct {
	Merchants Merchants
	Users     UserStore // postgres.DashboardUserStore
	Members   MemberStore
	Campaigns CampaignStore
	Tiers     creator.TierStore // postgres.CampaignTierStore
	Creators  CreatorStore
	Coupons   redemption.Coupons // members' coupons at the platforms (postgres.CouponStore)
	Wallets   ledger.WalletReader
	Referrals ReferralReads
	// Redemptions lists the redemptions; Outcomes finds one as the ledger
	// and the platform left it (postgres.OutcomeStore).
	Redemptions RedemptionReads
	Outcomes    RedemptionFinder
	Overview    OverviewReads
	Deliveries  InboundDeliveries // the platforms' deliveries (postgres.DeliveryStore)
	Webhooks    webhook.ManualStore
	Audit       audit.Trail // the trail the Activity page shows
	// PortalSettings and PortalTokens serve Settings → Member portal and
	// the member page's "Open the member's portal" (portal.go); nil leaves
	// them out (postgres.PortalSettings, postgres.PortalTokens).
	PortalSettings portalaccess.SettingsStore
	PortalTokens   portalaccess.Tokens
}

// Merchants is what the dashboard needs of merchants
// (postgres.MerchantStore): the session's merchant, its integrations and
// its API keys.
type Merchants interface {
	merchant.Finder
	merchant.IntegrationStore
	KeyStore
}

// Actions are the ledger commands the pages issue on the merchant's
// behalf, approve, reject and redeem, as the API issues them
// (ledger.Decider, ledger.Redeemer).
type Actions struct {
	Commands ledger.CommandPublisher
	Waiter   *ledger.Waiter
	// Timeout is how long an action waits for the ledger's outcome, and a
	// redemption for the platform (ACTION_TIMEOUT; 0 is 10 s).
	Timeout time.Duration
}

// timeout is Actions.Timeout, 10 s when unset (decision 19).
func (a Actions) timeout() time.Duration {
	if a.Timeout > 0 {
		return a.Timeout
	}
	return 10 * time.Second
}

// Integrations are the settings of the integrations pages
// (integrations.go, reconcile.go).
type Integrations struct {
	// IngestPublicURL (INGEST_PUBLIC_URL) is the base of the webhook URLs
	// the pages show.
	IngestPublicURL string
	// AllowPrivateNetworks lets an integration's API URL name loopback and
	// private addresses, and http (PLATFORM_ALLOW_PRIVATE_NETWORKS).
	AllowPrivateNetworks bool
	// Reconciler and Runs serve the "Reconcile now" button and the last
	// runs; nil leaves them out. ReconcileWindow (RECONCILE_WINDOW) is how
	// far back a run looks; ReconcileCooldown (RECONCILE_COOLDOWN) how long
	// after a run's start the next may be asked for (the Reconciler refuses
	// sooner ones: the page says from when).
	Reconciler                         reconcile.Starter
	Runs                               reconcile.Runs
	ReconcileWindow, ReconcileCooldown time.Duration
}

// Webhooks are the settings of the webhooks pages (webhooks.go).
type Webhooks struct {
	// Sender sends the test and retried deliveries.
	Sender webhook.Sender
	// AllowPrivateNetworks lets an endpoint's URL name loopback and
	// private addresses (WEBHOOK_ALLOW_PRIVATE_NETWORKS).
	AllowPrivateNetworks bool
}

// Access is how browsers reach the dashboard and keep their sessions.
type Access struct {
	// Sessions keeps the sessions (postgres.NewSessionStore).
	Sessions scs.Store
	// PublicURL is how browsers reach the API (PUBLIC_URL): the origin
	// state changes must come from, the base of invitation links, and https
	// makes the session cookie Secure.
	PublicURL string
	// IdleTimeout and Lifetime end a session after so long without a
	// request, and so long after sign-in whatever happens (0: 2h and 12h).
	IdleTimeout, Lifetime time.Duration
	// TrustedProxies (TRUSTED_PROXIES) tells the password throttle which
	// client sent a request: the peer, or what a trusted proxy says it is.
	TrustedProxies clientip.Resolver
	// AuthFailures is the API's failed-authentication limit per client
	// (AUTH_FAILURE_LIMIT; nil: none): a wrong or throttled password counts
	// as a failure, and a client blocked by it is answered 429 from memory,
	// before the throttle's transaction, so a flood from one address costs
	// no database work.
	AuthFailures clientip.FailureLimit
}
