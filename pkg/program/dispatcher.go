package program

import (
	"context"
	"net/http"
	"time"

	"go.uber.org/zap"

	"github.com/convida/convida/pkg/dispatch"
	"github.com/convida/convida/pkg/intake"
	"github.com/convida/convida/pkg/kafkabus"
	"github.com/convida/convida/pkg/netguard"
	"github.com/convida/convida/pkg/platform"
	"github.com/convida/convida/pkg/postgres"
	"github.com/convida/convida/pkg/reconcile"
	"github.com/convida/convida/pkg/redemption"
	"github.com/convida/convida/pkg/retention"
	"github.com/convida/convida/pkg/scheduler"
	"github.com/convida/convida/pkg/topic"
	"github.com/convida/convida/pkg/webhook"
)

// Events is the events dispatcher role: it consumes the events topic and
// delivers each event to the merchant's subscribed webhook endpoints.
type Events struct {
	Group  kafkabus.GroupConfig
	Config dispatch.Config
	// Middleware, when set, wraps the batch handler.
	Middleware Middleware
}

// NewEvents returns the events dispatcher role as production runs it.
func NewEvents(d *Deps) *Events {
	log := d.Log.Named("dispatcher")
	return &Events{
		// A batch waits for its deliveries (dispatch.Config.MaxHold): all
		// partitions' batches together must fit what an endpoint's lane
		// delivers in that time, or the rest is written to Postgres.
		Group: d.consumerGroup(d.Config.DispatcherGroup, topic.Events, 128, log),
		Config: dispatch.Config{
			Store: postgres.NewWebhookStore(d.Pool, d.Box), Sender: NewWebhookSender(d.Config), Log: log, Now: d.Now,
			Schedule: d.Config.WebhookRetrySchedule, Concurrency: d.Config.WebhookConcurrency, Lease: d.Config.WebhookLease,
		},
	}
}

// Run consumes until ctx ends.
func (e *Events) Run(ctx context.Context) error {
	disp := dispatch.New(ctx, e.Config)
	return kafkabus.RunGroup(ctx, e.Group, e.Middleware.wrap(disp.HandleEvents))
}

// NewWebhookSender returns the HTTP client of webhook deliveries.
func NewWebhookSender(c Config) *webhook.Client {
	return webhook.NewClient(webhook.ClientConfig{AllowPrivateNetworks: c.WebhookAllowPrivateNetworks,
		RootCAs: c.WebhookRootCAs, MaxConnsPerHost: c.WebhookConcurrency})
}

// Redemptions is the redemptions role: it carries out the
// redemption.requested events on the platforms (redemption.Consumer) and
// publishes their results to the ledger, retrying a platform per
// REDEMPTION_RETRY_DELAYS.
type Redemptions struct {
	Group    kafkabus.GroupConfig
	Consumer *redemption.Consumer
	// Middleware, when set, wraps the batch handler.
	Middleware Middleware
}

// NewRedemptions returns the redemptions role as production runs it.
func NewRedemptions(d *Deps) *Redemptions {
	log := d.Log.Named("redemptions")
	platforms := platform.NewExecutor(platformClient(d.Config), redemption.RetryPolicy{Delays: d.Config.RedemptionRetryDelays})
	platforms.CouponKey = d.Box.DeriveKey(redemption.CouponKeyInfo)
	return &Redemptions{
		Group: d.consumerGroup(d.Config.DispatcherGroup+"-redemptions", topic.Redemptions, 64, log),
		Consumer: &redemption.Consumer{
			Redemptions:  postgres.NewOutcomeStore(d.Pool),
			Integrations: postgres.NewMerchantStore(d.Pool, d.Box),
			Platforms:    platforms,
			Settlements:  d.Commands,
			Log:          log,
			Now:          d.Now,
		},
	}
}

// Run consumes until ctx ends.
func (r *Redemptions) Run(ctx context.Context) error {
	return kafkabus.RunGroup(ctx, r.Group, r.Middleware.wrap(topic.RedemptionHandler(r.Consumer)))
}

// platformClient is the HTTP client of the platforms' API calls
// (redemptions, members' coupons, reconciliations' pulls): through
// netguard, since the API URL is the merchant's to set (public https
// addresses only, unless PLATFORM_ALLOW_PRIVATE_NETWORKS), with 64 idle
// connections per host, since a batch of redemptions calls one platform
// host many times at once. The Executor bounds each request.
func platformClient(c Config) *http.Client {
	return netguard.NewClient(netguard.Config{AllowPrivateNetworks: c.PlatformAllowPrivateNetworks, IdleConnsPerHost: 64}, 0)
}

// RunRedemptions runs the redemptions role as production does.
func RunRedemptions(ctx context.Context, d *Deps) error {
	if err := d.WaitStarted(ctx); err != nil {
		return err
	}
	return NewRedemptions(d).Run(ctx)
}

// NewProvisioner returns the coupon provisioner role as production runs
// it: members' codes as coupons at Guru and Yampi, retried per
// COUPON_RETRY_DELAYS, polled every COUPON_POLL_INTERVAL. A test may
// replace its fields (a shorter Lease) before Run.
func NewProvisioner(d *Deps) *dispatch.Provisioner {
	return &dispatch.Provisioner{
		Store:        postgres.NewCouponStore(d.Pool),
		Integrations: postgres.NewMerchantStore(d.Pool, d.Box),
		Platforms:    platform.NewExecutor(platformClient(d.Config), redemption.RetryPolicy{}),
		Retry:        redemption.RetryPolicy{Delays: d.Config.CouponRetryDelays},
		Log:          d.Log.Named("coupons"),
		Now:          d.Now,
		Interval:     d.Config.CouponPollInterval,
	}
}

// RunProvisioner runs the coupon provisioner role as production does.
func RunProvisioner(ctx context.Context, d *Deps) error {
	if err := d.WaitStarted(ctx); err != nil {
		return err
	}
	return NewProvisioner(d).Run(ctx)
}

// RunDispatcher runs the dispatcher's roles: outbound events, redemptions
// and the provisioning of members' coupons.
func RunDispatcher(ctx context.Context, d *Deps) error {
	if err := d.WaitStarted(ctx); err != nil {
		return err
	}
	return RunRoles(ctx, d, func(ctx context.Context, d *Deps) error { return NewEvents(d).Run(ctx) }, RunRedemptions,
		RunProvisioner)
}

// Scheduler is the scheduler role: on one leader at a time, it releases
// expired warranties, re-publishes stranded outbox events, wakes due
// webhook retries and, every RETENTION_INTERVAL, deletes what has outlived
// its retention (expired dashboard sessions among it).
type Scheduler struct {
	*scheduler.Scheduler
	// Reconcile is the reconciliation task: tests may call its Run and
	// Wait.
	Reconcile *scheduler.Reconcile
	release   func()
}

// NewScheduler returns the scheduler role as production runs it. Tests
// call Tick on it and may replace its Now; Close gives up its leadership,
// which holds a pooled connection.
func NewScheduler(d *Deps) *Scheduler {
	leader := postgres.NewAdvisoryLeader(d.Pool, schedulerLockKey)
	waker := retryWaker{w: &dispatch.Waker{Jobs: postgres.NewWebhookStore(d.Pool, d.Box), Publisher: d.Events,
		Lease: d.Config.WebhookLease}, log: d.Log.Named("scheduler")}
	reconciliation := NewReconcile(d)
	return &Scheduler{Reconcile: reconciliation, Scheduler: &scheduler.Scheduler{
		Store:     postgres.NewSchedulerStore(d.Pool),
		Leader:    leader,
		Publisher: d.Commands,
		Outbox:    d.Relay(),
		Log:       d.Log.Named("scheduler"),
		Now:       d.Now,
		Interval:  d.Config.SchedulerInterval,
		Tasks: []scheduler.Task{waker.wake, NewRetention(d).Run,
			scheduler.NewGauges(d.Registry, postgres.NewBacklogStore(d.Pool)).Update, reconciliation.Run},
	}, release: func() { leader.Release(context.Background()) }}
}

// NewRetention returns the scheduler's retention sweep as production runs
// it: the RETENTION_* settings, batches of scheduler.DefaultRetentionBatch.
func NewRetention(d *Deps) *scheduler.Retention {
	return &scheduler.Retention{Store: postgres.NewRetentionStore(d.Pool),
		Plan:    retention.NewPlan(retention.Policy(d.Config.Retention)),
		Metrics: scheduler.NewRetentionMetrics(d.Registry), Log: d.Log.Named("retention"),
		Interval: d.Config.RetentionInterval}
}

// NewReconcile returns the scheduler's reconciliation task as production
// runs it: every RECONCILE_INTERVAL, the last RECONCILE_WINDOW of each
// integration with pull credentials, and the runs the API asked for.
func NewReconcile(d *Deps) *scheduler.Reconcile {
	s := newStores(d, d.Now)
	return &scheduler.Reconcile{
		Store:        s.reconciles,
		Integrations: s.merchants,
		Reconciler:   newReconciler(d, s, d.Now),
		Log:          d.Log.Named("reconcile"),
		Interval:     d.Config.ReconcileInterval,
		Window:       d.Config.ReconcileWindow,
	}
}

// newReconciler is the reconciliation's core as production wires it,
// whole: the API and the dashboard ask it for runs (refused within
// RECONCILE_COOLDOWN of the integration's last), the scheduler carries
// them out: the platforms through the guarded client, the ingest's fast
// dedupe, the delivery records and commands to the broker.
func newReconciler(d *Deps, s stores, now func() time.Time) *reconcile.Reconciler {
	return &reconcile.Reconciler{
		Store: s.reconciles,
		Intake: intake.Intake{Coupons: s.members, CouponIDs: s.coupons, Publisher: d.Commands, Dedupe: s.dedupe,
			Log: d.Log.Named("reconcile")},
		Platforms: &platform.Client{HTTP: platformClient(d.Config)},
		Observer:  scheduler.NewReconcileMetrics(d.Registry),
		Log:       d.Log.Named("reconcile"),
		Now:       now,

		MaxDuration: d.Config.ReconcileMaxDuration,
		MaxPages:    d.Config.ReconcileMaxPages,
		Cooldown:    d.Config.ReconcileCooldown,
	}
}

// Close gives up the leadership.
func (s *Scheduler) Close() { s.release() }

// Run ticks until ctx ends, then waits for the reconciliation runs under
// way to record their end (before the pool closes) and gives up the
// leadership.
func (s *Scheduler) Run(ctx context.Context) error {
	defer s.Close()
	defer s.Reconcile.Wait()
	return s.Scheduler.Run(ctx)
}

// RunScheduler ticks until ctx ends.
func RunScheduler(ctx context.Context, d *Deps) error {
	if err := d.WaitStarted(ctx); err != nil {
		return err
	}
	return NewScheduler(d).Run(ctx)
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
