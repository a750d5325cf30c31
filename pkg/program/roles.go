package program

import (
	"context"
	"time"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/dispatch"

	"github.com/gorilla/mux"
	"go.uber.org/zap"

	"github.com/convida/convida/pkg/httpapi"
	"github.com/convida/convida/pkg/ingest"
	"github.com/convida/convida/pkg/kafkabus"
	"github.com/convida/convida/pkg/ledger"
	"github.com/convida/convida/pkg/outbox"
	"github.com/convida/convida/pkg/postgres"
	"github.com/convida/convida/pkg/redisx"
	"github.com/convida/convida/pkg/scheduler"
	"github.com/convida/convida/pkg/webhook"
)

// LedgerHandler returns the batch handler of the ledger: decode, apply in
// one transaction, relay the events. Decode failures and database errors
// retrying cannot fix are permanent (the runner dead-letters the message).
func LedgerHandler(d *Deps) kafkabus.BatchHandler {
	store := postgres.NewLedgerStore(d.Pool, d.Now)
	relay := outbox.NewRelay(postgres.NewOutboxStore(d.Pool), d.Events)
	worker := ledger.NewWorker(store, relay, redisx.NewResults(d.Redis, d.Log), d.Ledger, d.Log.Named("ledger"))
	return func(ctx context.Context, msgs []kafkabus.Message) error {
		cmds, err := decodeCommands(msgs)
		if err != nil {
			return err
		}
		if err := worker.Handle(ctx, cmds); err != nil {
			if postgres.IsPermanent(err) {
				return apperr.Permanent(err)
			}
			return err
		}
		return nil
	}
}

// LedgerGroup is the consumer-group configuration of the ledger.
func LedgerGroup(d *Deps) kafkabus.GroupConfig {
	return kafkabus.GroupConfig{
		Brokers: d.Config.KafkaBrokers, GroupID: d.Config.LedgerGroup, Topic: TopicCommands,
		MaxBatch: d.Config.LedgerMaxBatch, Logger: d.Log.Named("ledger"), Metrics: d.Bus,
		SessionTimeout: d.Config.KafkaSessionTimeout, RebalanceTimeout: d.Config.KafkaSessionTimeout,
	}
}

// RunLedger consumes ledger.commands until ctx ends: one goroutine per
// assigned partition, batches applied in one transaction each, offsets
// committed only after the commit.
func RunLedger(ctx context.Context, d *Deps) error {
	return kafkabus.RunGroup(ctx, LedgerGroup(d), LedgerHandler(d))
}

// IngestRouter returns the ingest HTTP handler: the receivers plus ops.
func IngestRouter(d *Deps) *mux.Router {
	svc := ingest.New(ingest.Config{
		Merchants:  postgres.NewMerchantStore(d.Pool, d.Box),
		Coupons:    postgres.NewMemberStore(d.Pool),
		Deliveries: postgres.NewDeliveryStore(d.Pool),
		Dedupe:     redisx.NewDedupe(d.Redis),
		Publisher:  d.Commands,
		Log:        d.Log.Named("ingest"),
		Now:        d.Now,
		Metrics:    ingest.NewMetrics(d.Registry),
		Limiter:    redisx.NewLimiter(d.Redis),
		RateLimit:  d.Config.IngestRateLimit,
	})
	r := mux.NewRouter()
	svc.Register(r)
	d.AddOps(r)
	return r
}

// RunIngest serves the ingest on INGEST_ADDR until ctx ends.
func RunIngest(ctx context.Context, d *Deps) error {
	return serve(ctx, d.Log, "ingest", d.Config.IngestAddr, IngestRouter(d))
}

// NewScheduler returns the scheduler of d (tests call Tick on it) and the
// function that gives up its leadership, which holds a pooled connection.
func NewScheduler(d *Deps) (*scheduler.Scheduler, func()) {
	leader := postgres.NewAdvisoryLeader(d.Pool, schedulerLockKey)
	waker := retryWaker{w: &dispatch.Waker{Jobs: postgres.NewWebhookStore(d.Pool, d.Box), Publisher: d.Events,
		Topic: TopicEvents, Lease: d.Config.WebhookLease}, log: d.Log.Named("scheduler")}
	return &scheduler.Scheduler{
		Store:     postgres.NewSchedulerStore(d.Pool),
		Leader:    leader,
		Publisher: d.Commands,
		Outbox:    outbox.NewRelay(postgres.NewOutboxStore(d.Pool), d.Events),
		Log:       d.Log.Named("scheduler"),
		Now:       d.Now,
		Interval:  d.Config.SchedulerInterval,
		Tasks:     []scheduler.Task{waker.wake},
	}, func() { leader.Release(context.Background()) }
}

// retryWaker adapts dispatch.Waker to a scheduler task.
type retryWaker struct {
	w   *dispatch.Waker
	log *zap.Logger
}

func (r retryWaker) wake(ctx context.Context, now time.Time) error {
	n, err := r.w.Wake(ctx, now)
	if n > 0 {
		r.log.Debug("woke due webhook jobs", zap.Int("jobs", n))
	}
	return err
}

// schedulerLockKey is the advisory lock of the scheduler's leadership.
const schedulerLockKey = 0x636f6e76 // "conv"

// RunScheduler ticks until ctx ends.
func RunScheduler(ctx context.Context, d *Deps) error {
	s, release := NewScheduler(d)
	defer release()
	return s.Run(ctx)
}

// RunDispatcher runs the dispatcher's consumers: outbound events and
// redemptions.
func RunDispatcher(ctx context.Context, d *Deps) error {
	return RunRoles(ctx, d, runEvents, RunRedemptions)
}

// runEvents consumes the events topic: the outbound webhook dispatcher.
func runEvents(ctx context.Context, d *Deps) error {
	log := d.Log.Named("dispatcher")
	disp := dispatch.New(ctx, dispatch.Config{
		Store: postgres.NewWebhookStore(d.Pool, d.Box), Sender: NewWebhookSender(d.Config), Log: log, Now: d.Now,
		Schedule: d.Config.WebhookRetrySchedule, Concurrency: d.Config.WebhookConcurrency, Lease: d.Config.WebhookLease,
	})
	return kafkabus.RunGroup(ctx, kafkabus.GroupConfig{
		Brokers: d.Config.KafkaBrokers, GroupID: d.Config.DispatcherGroup, Topic: TopicEvents,
		// A batch waits for its deliveries (dispatch.Config.MaxHold): all
		// partitions' batches together must fit what an endpoint's lane
		// delivers in that time, or the rest is written to Postgres.
		MaxBatch: 128,
		Logger:   log, Metrics: d.Bus,
		SessionTimeout: d.Config.KafkaSessionTimeout, RebalanceTimeout: d.Config.KafkaSessionTimeout,
	}, disp.HandleEvents)
}

// NewWebhookSender returns the HTTP client of webhook deliveries.
func NewWebhookSender(c Config) *webhook.Client {
	return webhook.NewClient(webhook.ClientConfig{AllowPrivateNetworks: c.WebhookAllowPrivateNetworks,
		RootCAs: c.WebhookRootCAs, MaxConnsPerHost: c.WebhookConcurrency})
}

// RunOps serves /healthz, /readyz and /metrics on METRICS_ADDR, for the
// programs that have no HTTP interface of their own.
func RunOps(ctx context.Context, d *Deps, name string) error {
	r := mux.NewRouter()
	d.AddOps(r)
	return serve(ctx, d.Log, name+"-ops", d.Config.MetricsAddr, r)
}

// APIRouter returns the API HTTP handler: /api/v1 plus ops.
func APIRouter(d *Deps) *mux.Router {
	outcomes := postgres.NewOutcomeStore(d.Pool)
	members := postgres.NewMemberStore(d.Pool).WithRelay(outbox.NewRelay(postgres.NewOutboxStore(d.Pool), d.Events))
	_, r := httpapi.New(httpapi.Config{
		Merchants:       postgres.NewMerchantStore(d.Pool, d.Box),
		Campaigns:       postgres.NewCampaignStore(d.Pool),
		Members:         members,
		Wallets:         postgres.NewWalletReads(d.Pool),
		Log:             d.Log.Named("api"),
		Now:             d.Now,
		IngestPublicURL: d.Config.IngestPublicURL,
		Webhooks:        postgres.NewWebhookStore(d.Pool, d.Box),
		WebhookSender:   NewWebhookSender(d.Config),
		Catalog: httpapi.CatalogConfig{
			Members:   members,
			Campaigns: postgres.NewCampaignStore(d.Pool),
			Referrals: postgres.NewReferralReads(d.Pool),
		},
		Protection: httpapi.ProtectionConfig{
			Limiter:     redisx.NewLimiter(d.Redis),
			Idempotency: redisx.NewIdempotency(d.Redis),
			Log:         d.Log.Named("api"),
		},
		Actions: httpapi.ActionsConfig{
			Commands:    d.Commands,
			Waiter:      &ledger.Waiter{Store: outcomes, Sub: redisx.NewResults(d.Redis, d.Log)},
			Redemptions: outcomes,
			Referrals:   postgres.NewReferralReads(d.Pool),
			Timeout:     d.Config.ActionTimeout,
		},
	})
	d.AddOps(r)
	return r
}

// RunAPI serves the API on HTTP_ADDR until ctx ends.
func RunAPI(ctx context.Context, d *Deps) error {
	return serve(ctx, d.Log, "api", d.Config.HTTPAddr, APIRouter(d))
}
