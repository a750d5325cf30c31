package program

import (
	"time"

	"github.com/convida/convida/pkg/postgres"
	"github.com/convida/convida/pkg/redisx"
)

// stores are the adapters more than one edge or role of a process reads,
// built once per role on the Deps' pool, Redis and secrets box and on the
// role's clock; each edge receives the one it needs under the name of the
// contract it declares. A store one edge alone reads is built where that
// edge is wired.
type stores struct {
	merchants *postgres.MerchantStore
	// members relays the member events it writes at once (rather than
	// leaving them to the scheduler's sweep), and an erasure, through the
	// API or the dashboard, forgets the kept answers that show the member.
	members     *postgres.MemberStore
	campaigns   *postgres.CampaignStore
	tiers       *postgres.CampaignTierStore
	creators    *postgres.CreatorStore
	coupons     *postgres.CouponStore
	referrals   *postgres.ReferralReads
	wallets     *postgres.WalletReads
	redemptions *postgres.RedemptionReads
	outcomes    *postgres.OutcomeStore // the ledger's outcomes and each redemption as it stands
	webhooks    *postgres.WebhookStore
	deliveries  *postgres.DeliveryStore
	reconciles  *postgres.ReconcileStore
	audit       *postgres.AuditStore

	idempotency *redisx.Idempotency
	limiter     *redisx.Limiter
	dedupe      *redisx.Dedupe // the ingest's fast dedupe, which reconciliation shares
}

// newStores builds the stores of a role whose clock is now.
func newStores(d *Deps, now func() time.Time) stores {
	idempotency := redisx.NewIdempotency(d.Redis, d.RedisBreaker)
	return stores{
		merchants:   postgres.NewMerchantStore(d.Pool, d.Box),
		members:     postgres.NewMemberStore(d.Pool).WithRelay(d.Relay()).WithClock(now).WithAnswers(idempotency, d.Log.Named("api")),
		campaigns:   postgres.NewCampaignStore(d.Pool),
		tiers:       postgres.NewCampaignTierStore(d.Pool),
		creators:    postgres.NewCreatorStore(d.Pool, d.Box),
		coupons:     postgres.NewCouponStore(d.Pool),
		referrals:   postgres.NewReferralReads(d.Pool),
		wallets:     postgres.NewWalletReads(d.Pool),
		redemptions: postgres.NewRedemptionReads(d.Pool),
		outcomes:    postgres.NewOutcomeStore(d.Pool),
		webhooks:    postgres.NewWebhookStore(d.Pool, d.Box),
		deliveries:  postgres.NewDeliveryStore(d.Pool),
		reconciles:  postgres.NewReconcileStore(d.Pool),
		audit:       postgres.NewAuditStore(d.Pool),
		idempotency: idempotency,
		limiter:     redisx.NewLimiter(d.Redis, d.RedisBreaker),
		dedupe:      redisx.NewDedupe(d.Redis, d.RedisBreaker),
	}
}
