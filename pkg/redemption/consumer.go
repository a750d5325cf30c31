package redemption

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	"go.uber.org/zap"
	"golang.org/x/sync/errgroup"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/merchant"
)

// Requested is the data of the redemption.requested event: the ledger has
// debited the wallet and created the redemption pending, and the consumer
// is to carry it out on the platform.
type Requested struct {
	RedemptionID   uuid.UUID `json:"redemption_id"`
	MerchantID     uuid.UUID `json:"merchant_id"`
	MemberID       uuid.UUID `json:"member_id"`
	Type           string    `json:"type"`
	Amount         int64     `json:"amount"`
	SubscriptionID string    `json:"subscription_id,omitempty"`
}

// Outcome is what the platform did with a redemption: the ledger completes
// the redemption on Success, or fails it with FailureReason and returns the
// money.
type Outcome struct {
	RedemptionID  uuid.UUID `json:"redemption_id"`
	Success       bool      `json:"success"`
	Result        Result    `json:"result"`
	FailureReason string    `json:"failure_reason,omitempty"`
}

// Settlement is the Outcome of a redemption, to be published to the
// ledger as the redemption's result.
type Settlement struct {
	Redemption *Redemption
	Outcome    Outcome
	At         time.Time
}

// Finder finds a redemption (apperr.NotFound when there is none).
type Finder interface {
	FindRedemption(ctx context.Context, merchantID, id uuid.UUID) (*Redemption, error)
}

// IntegrationFinder finds a merchant's settings of a platform, decrypted
// (apperr.NotFound when the merchant has not configured it).
type IntegrationFinder interface {
	FindIntegration(ctx context.Context, merchantID uuid.UUID, provider string) (*merchant.Integration, error)
}

// Settler publishes settlements to the ledger and returns once they are
// all acknowledged.
type Settler interface {
	PublishSettlements(ctx context.Context, s []Settlement) error
}

// Carrier carries out one redemption on its platform (*Executor).
type Carrier interface {
	Execute(ctx context.Context, settings merchant.Integration, req Request) (Result, error)
}

// concurrency is how many platform calls of one batch run at once.
const concurrency = 16

// Consumer carries out the redemptions of redemption.requested events: for
// each it calls the platform and publishes the Settlement, which completes
// the redemption or returns the money. Its caller commits the events'
// offsets only after HandleBatch returns nil, so a crash repeats the call:
// harmless for Yampi (the coupon code derives from the redemption id); for
// Guru it relies on its honouring Idempotency-Key.
type Consumer struct {
	Redemptions  Finder
	Integrations IntegrationFinder
	Platforms    Carrier
	Settlements  Settler
	Log          *zap.Logger
	Now          func() time.Time
}

// HandleBatch carries out a batch's redemptions concurrently (one member's
// redemptions share a partition, and each waits on a platform), then
// publishes every settlement it has in one acknowledged write before
// reporting a failure, so that no finished call is repeated needlessly.
// The error is the first request's in batch order: an apperr.Permanent one
// when the redemption does not exist.
func (c *Consumer) HandleBatch(ctx context.Context, reqs []Requested) error {
	results := make([]*Settlement, len(reqs))
	errs := make([]error, len(reqs))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(concurrency)
	for i, req := range reqs {
		g.Go(func() error {
			results[i], errs[i] = c.carryOut(gctx, req)
			return nil
		})
	}
	_ = g.Wait()
	var done []Settlement
	for _, r := range results {
		if r != nil {
			done = append(done, *r)
		}
	}
	if len(done) > 0 {
		if err := c.Settlements.PublishSettlements(ctx, done); err != nil {
			return err
		}
	}
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// carryOut calls the platform for one request and returns its settlement,
// or nil when the redemption is no longer pending (a redelivery).
func (c *Consumer) carryOut(ctx context.Context, req Requested) (*Settlement, error) {
	red, err := c.Redemptions.FindRedemption(ctx, req.MerchantID, req.RedemptionID)
	if apperr.Is(err, apperr.NotFound) {
		return nil, apperr.Permanent(err)
	}
	if err != nil || red.Status != StatusPending {
		return nil, err
	}
	outcome := Outcome{RedemptionID: red.ID}
	in, err := c.Integrations.FindIntegration(ctx, red.MerchantID, Provider(red.Type))
	if err == nil {
		outcome.Result, err = c.Platforms.Execute(ctx, *in, Request{RedemptionID: red.ID, Type: red.Type,
			Amount: red.Amount, SubscriptionID: red.SubscriptionID, Now: c.Now()})
	}
	switch {
	case err == nil:
		outcome.Success = true
	case errors.Is(err, context.Canceled) || ctx.Err() != nil:
		return nil, err // shutting down: the outcome is unknown; the next owner retries
	case apperr.Is(err, apperr.NotFound):
		outcome.FailureReason = Provider(red.Type) + " integration is not configured"
	case apperr.Is(err, apperr.Unprocessable), apperr.Is(err, apperr.Unavailable):
		outcome.FailureReason = apperr.MessageOf(err)
	default:
		return nil, err // our own dependency failed: retry the message
	}
	c.Log.Info("redemption carried out", zap.String("redemption", red.ID.String()), zap.Bool("success", outcome.Success),
		zap.String("reason", outcome.FailureReason))
	return &Settlement{Redemption: red, Outcome: outcome, At: c.Now()}, nil
}
