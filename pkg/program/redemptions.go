package program

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/convida/convida/pkg/event"

	"go.uber.org/zap"
	"golang.org/x/sync/errgroup"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/kafkabus"
	"github.com/convida/convida/pkg/ledger"
	"github.com/convida/convida/pkg/outbox"
	"github.com/convida/convida/pkg/postgres"
	"github.com/convida/convida/pkg/redemption"
)

// TopicRedemptions carries redemption.requested events from the ledger to
// the dispatcher, apart from the events topic so that a slow platform
// never delays outbound webhooks.
const TopicRedemptions = "redemptions"

// platformClient is the HTTP client of the Guru and Yampi calls: the
// default transport keeps 2 idle connections per host, and a batch of
// redemptions calls one platform host many times at once.
func platformClient() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = 64
	return &http.Client{Transport: t}
}

// RunRedemptions carries out redemptions: for each redemption.requested it
// calls the platform (retrying per REDEMPTION_RETRY_DELAYS) and publishes
// the result command, which completes the redemption or returns the money.
// The offset is committed after the result is published, so a crash
// repeats the call: harmless for Yampi (the coupon code derives from the
// redemption id); for Guru it relies on its honouring Idempotency-Key.
func RunRedemptions(ctx context.Context, d *Deps) error {
	c := &redemptionConsumer{
		d:         d,
		log:       d.Log.Named("redemptions"),
		exec:      redemption.NewExecutor(platformClient(), redemption.RetryPolicy{Delays: d.Config.RedemptionRetryDelays}),
		reads:     postgres.NewOutcomeStore(d.Pool),
		merchants: postgres.NewMerchantStore(d.Pool, d.Box),
	}
	return kafkabus.RunGroup(ctx, kafkabus.GroupConfig{
		Brokers: d.Config.KafkaBrokers, GroupID: d.Config.DispatcherGroup + "-redemptions", Topic: TopicRedemptions,
		MaxBatch: 64, Logger: c.log, Metrics: d.Bus,
		SessionTimeout: d.Config.KafkaSessionTimeout, RebalanceTimeout: d.Config.KafkaSessionTimeout,
	}, c.handleBatch)
}

type redemptionConsumer struct {
	d         *Deps
	log       *zap.Logger
	exec      *redemption.Executor
	reads     *postgres.OutcomeStore
	merchants *postgres.MerchantStore
}

// handleBatch carries out a batch's redemptions concurrently (one member's
// redemptions share a partition, and each waits on a platform), then
// publishes every result it has in one acknowledged write before
// reporting a failure, so that no finished call is repeated needlessly.
func (c *redemptionConsumer) handleBatch(ctx context.Context, msgs []kafkabus.Message) error {
	results := make([]*ledger.Command, len(msgs))
	errs := make([]error, len(msgs))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(16)
	for i, msg := range msgs {
		g.Go(func() error {
			results[i], errs[i] = c.carryOut(gctx, msg)
			return nil
		})
	}
	_ = g.Wait()
	var cmds []ledger.Command
	for _, r := range results {
		if r != nil {
			cmds = append(cmds, *r)
		}
	}
	if len(cmds) > 0 {
		if err := c.d.Commands.PublishCommands(ctx, cmds); err != nil {
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

// carryOut calls the platform for one redemption.requested event and
// returns the result command, or nil when the redemption is no longer
// pending (a redelivery).
func (c *redemptionConsumer) carryOut(ctx context.Context, msg kafkabus.Message) (*ledger.Command, error) {
	var env struct {
		Data ledger.RedemptionRequested `json:"data"`
	}
	if err := json.Unmarshal(msg.Value, &env); err != nil {
		return nil, apperr.Permanent(fmt.Errorf("undecodable redemption event: %w", err))
	}
	red, err := c.reads.FindRedemption(ctx, env.Data.MerchantID, env.Data.RedemptionID)
	if apperr.Is(err, apperr.NotFound) {
		return nil, apperr.Permanent(err)
	}
	if err != nil || red.Status != redemption.StatusPending {
		return nil, err
	}
	outcome := &ledger.RedemptionOutcome{RedemptionID: red.ID}
	in, err := c.merchants.FindIntegration(ctx, red.MerchantID, redemption.Provider(red.Type))
	if err == nil {
		outcome.Result, err = c.exec.Execute(ctx, *in, redemption.Request{RedemptionID: red.ID, Type: red.Type,
			Amount: red.Amount, SubscriptionID: red.SubscriptionID, Now: c.d.Now()})
	}
	switch {
	case err == nil:
		outcome.Success = true
	case errors.Is(err, context.Canceled) || ctx.Err() != nil:
		return nil, err // shutting down: the outcome is unknown; the next owner retries
	case apperr.Is(err, apperr.NotFound):
		outcome.FailureReason = redemption.Provider(red.Type) + " integration is not configured"
	case apperr.Is(err, apperr.Unprocessable), apperr.Is(err, apperr.Unavailable):
		outcome.FailureReason = apperr.MessageOf(err)
	default:
		return nil, err // our own dependency failed: retry the message
	}
	c.log.Info("redemption carried out", zap.String("redemption", red.ID.String()), zap.Bool("success", outcome.Success),
		zap.String("reason", outcome.FailureReason))
	return &ledger.Command{ID: ledger.ResultCommandID(red.ID), Type: ledger.CmdRedemptionResult, MerchantID: red.MerchantID,
		MemberID: red.MemberID, IssuedAt: c.d.Now(), Result: outcome}, nil
}

// topicOf routes an outbox record: internal events to their own topic.
func topicOf(rec outbox.Record) string {
	if rec.Type == event.RedemptionRequested {
		return TopicRedemptions
	}
	return TopicEvents
}
