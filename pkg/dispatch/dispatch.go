// Package dispatch is the delivery engine of outbound webhooks
// (webhooks.md): it turns each event of the events topic into one job per
// subscribed endpoint, stored in Postgres before the offset is committed,
// and works the jobs off in per-endpoint lanes. A lane has a bounded number
// of requests in flight and a bounded queue; what does not fit stays in
// Postgres and comes back through the scheduler when due, so a slow or
// dead endpoint never holds up the consumer or another endpoint.
//
// A job that finds room in its lane is held in memory rather than written:
// the consumer's batch waits a moment (Config.Hold) for its deliveries, so
// a healthy endpoint's delivery costs one row, its log record. What is not
// delivered by then is written as a job row before the offset is committed.
//
// Delivery is at least once: the offset of an event is committed only once
// each of its jobs is delivered and logged or stored; a stored job is
// deleted only after its successful attempt is logged, and one whose holder
// died comes back when its lease ends. A redelivered event whose jobs
// exist or were attempted creates none.
package dispatch

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/google/uuid"
	"go.uber.org/zap"

	"github.com/convida/convida/pkg/batch"
	"github.com/convida/convida/pkg/event"
	"github.com/convida/convida/pkg/kafkabus"
	"github.com/convida/convida/pkg/topic"
	"github.com/convida/convida/pkg/webhook"
)

// Store is the Postgres side of the engine (postgres.WebhookStore).
type Store interface {
	EndpointVersions(ctx context.Context, merchantIDs []uuid.UUID) (map[uuid.UUID]int64, error)
	ActiveEndpoints(ctx context.Context, merchantIDs []uuid.UUID) (map[uuid.UUID][]webhook.Endpoint, error)
	FilterNewJobs(ctx context.Context, jobs []webhook.Job) ([]webhook.Job, error)
	InsertJobs(ctx context.Context, jobs []webhook.Job) ([]webhook.Job, error)
	FinishJobs(ctx context.Context, done []webhook.JobOutcome) error
	DeferJobs(ctx context.Context, jobs []webhook.Job, until time.Time) error
	RenewJobLease(ctx context.Context, j webhook.Job, now time.Time, lease time.Duration) (bool, error)
	DisableWebhook(ctx context.Context, merchantID, id uuid.UUID, reason string) error
	ClaimSpilledJobs(ctx context.Context, merchantID, webhookID uuid.UUID, before, now time.Time,
		lease time.Duration, limit int) ([]webhook.Job, error)
}

// Config tunes the engine. Zero values take the defaults in brackets.
type Config struct {
	Store  Store
	Sender webhook.Sender
	Log    *zap.Logger
	Now    func() time.Time
	// Schedule is the retry schedule [webhook.DefaultSchedule].
	Schedule []time.Duration
	// Concurrency is the most requests in flight per endpoint [16].
	Concurrency int
	// QueueSize is how many jobs an endpoint's lane holds in memory beyond
	// those in flight [4096]; the rest wait in Postgres.
	QueueSize int
	// Lease is how long a job handed to a lane is invisible to the
	// scheduler's sweep [30 s]. A lane starts an attempt only while at
	// least half the lease is left, and renews it every third of it while
	// the attempt runs (renewWhileInFlight): a dispatcher that dies leaves
	// its jobs to the others within a lease.
	Lease time.Duration
	// Spill is how long a job that found its lane full waits in Postgres
	// before the sweep offers it again [2 s].
	Spill time.Duration
	// HandleEvents waits for room in the lanes and for the deliveries of
	// its batch while the lanes make attempts: it writes the jobs still
	// owed as rows once their lanes made none for Hold [100 ms], or after
	// MaxHold in all [500 ms]. Longer saves rows for slower endpoints, and
	// delays the events behind the batch in its partition by as much when
	// an endpoint is slow or dead.
	Hold, MaxHold time.Duration
}

// Dispatcher delivers webhook jobs.
type Dispatcher struct {
	cfg      Config
	log      *zap.Logger
	endpoint *endpointCache
	finish   *batch.Group[outcome, struct{}]

	ctx   context.Context // the lanes' requests run under it
	mu    sync.Mutex
	lanes map[uuid.UUID]*lane // by webhook id
}

// New returns a Dispatcher whose lanes work until ctx ends; jobs they hold
// then come back when their leases end.
func New(ctx context.Context, cfg Config) *Dispatcher {
	if cfg.Schedule == nil {
		cfg.Schedule = webhook.DefaultSchedule
	}
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = 16
	}
	if cfg.QueueSize <= 0 {
		cfg.QueueSize = 4096
	}
	if cfg.Lease <= 0 {
		cfg.Lease = 30 * time.Second
	}
	if cfg.Spill <= 0 {
		cfg.Spill = 2 * time.Second
	}
	if cfg.Hold <= 0 {
		cfg.Hold = 100 * time.Millisecond
	}
	if cfg.MaxHold <= 0 {
		cfg.MaxHold = 500 * time.Millisecond
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Log == nil {
		cfg.Log = zap.NewNop()
	}
	d := &Dispatcher{cfg: cfg, log: cfg.Log, lanes: map[uuid.UUID]*lane{}, ctx: ctx}
	d.endpoint = newEndpointCache(cfg.Store)
	// Outcomes of many attempts share one round trip, and a lane does not
	// wait for it: its next request goes out while the last outcomes are
	// written (a full queue holds the lanes back). An outcome not written
	// leaves its job to come back when its lease ends: the attempt is made
	// again, like one in flight at a crash.
	// A held job's outcome tells its batch (which waits for it) whether it
	// was recorded; if not, the batch is not committed and comes again.
	d.finish = batch.New(2, 1000, func(ctx context.Context, items []outcome) ([]struct{}, error) {
		done := make([]webhook.JobOutcome, len(items))
		for i := range items {
			done[i] = items[i].JobOutcome
		}
		var err error
		// A disabling running beside it can deadlock with it (PostgreSQL
		// aborts one of the two): the outcomes are worth a second try.
		for try := 0; try < 3; try++ {
			if err = cfg.Store.FinishJobs(ctx, done); err == nil {
				break
			}
		}
		if err != nil {
			d.log.Warn("webhook outcomes not recorded; their jobs come back when their leases end or their batch is redelivered",
				zap.Int("outcomes", len(done)), zap.Error(err))
		}
		for _, it := range items {
			if it.held != nil {
				it.held.finish(err)
			}
		}
		return make([]struct{}, len(items)), err
	})
	return d
}

// HandleEvents is the batch handler of the events consumer. It returns
// once every job of the batch is delivered and logged, or stored (so the
// offset may be committed); the stored ones are delivered after, in the
// lanes.
func (d *Dispatcher) HandleEvents(ctx context.Context, msgs []kafkabus.Message) error {
	now := d.cfg.Now()
	all, retries, err := topic.DecodeEvents(msgs)
	if err != nil {
		return err
	}
	events := all[:0]
	for _, ev := range all {
		if event.IsSubscribable(ev.Type) { // the others are not for merchants
			events = append(events, ev)
		}
	}
	if err := d.fanOut(ctx, events, now); err != nil {
		return err
	}
	return d.resume(ctx, retries, now)
}

// fanOut makes one job per (event, subscribed endpoint), hands those that
// fit to their lanes as held jobs and stores the rest, then waits for the
// held ones. Jobs of events that may repeat are first checked against what
// is stored and logged.
func (d *Dispatcher) fanOut(ctx context.Context, events []topic.Event, now time.Time) error {
	if len(events) == 0 {
		return nil
	}
	endpoints, err := endpointsOf(ctx, d, events, func(ev topic.Event) uuid.UUID { return ev.MerchantID })
	if err != nil {
		return err
	}
	var jobs, repeats []webhook.Job
	for _, ev := range events {
		for i := range endpoints[ev.MerchantID] {
			if ep := &endpoints[ev.MerchantID][i]; ep.Subscribed(ev.Type) {
				j := webhook.Job{MerchantID: ev.MerchantID, WebhookID: ep.ID, EventID: ev.EventID,
					EventType: ev.Type, Payload: ev.Payload, NextAttemptAt: now.Add(d.cfg.Lease)}
				if ev.Repeat {
					repeats = append(repeats, j)
				} else {
					jobs = append(jobs, j)
				}
			}
		}
	}
	if len(repeats) > 0 {
		fresh, err := d.cfg.Store.FilterNewJobs(ctx, repeats)
		if err != nil {
			return fmt.Errorf("check webhook jobs: %w", err)
		}
		jobs = append(fresh, jobs...)
	}
	if len(jobs) == 0 {
		return nil
	}
	w := d.newWait()
	progress := make(chan struct{}, len(jobs)) // a token per held job recorded
	var held []heldJob
	var full []heldJob // jobs whose lane had no room
	for _, j := range jobs {
		l := d.lane(findEndpoint(endpoints[j.MerchantID], j.WebhookID))
		if l.reserve() {
			held = append(held, l.hold(j, progress))
		} else {
			full = append(full, heldJob{job: j, lane: l})
		}
	}
	// A healthy lane frees slots quickly: a job waits for one while its
	// lane moves. A dead endpoint's lane stays full: its jobs spill to
	// Postgres, where the lane takes them back when it has room.
	var spill []webhook.Job
	for _, f := range full {
		if w.reserve(ctx, f.lane) {
			held = append(held, f.lane.hold(f.job, progress))
			continue
		}
		f.job.NextAttemptAt = now.Add(d.cfg.Spill)
		spill = append(spill, f.job)
	}
	if len(spill) > 0 {
		stored, err := d.cfg.Store.InsertJobs(ctx, spill)
		if err != nil {
			return fmt.Errorf("store webhook jobs: %w", err)
		}
		for i := range stored {
			d.laneOf(stored[i].WebhookID).markSpilled(ctx)
		}
	}
	return w.await(ctx, held, progress)
}

// resume hands retry jobs (leased to us by the scheduler) to their lanes;
// those that do not fit are deferred for the next sweep.
func (d *Dispatcher) resume(ctx context.Context, jobs []webhook.Job, now time.Time) error {
	if len(jobs) == 0 {
		return nil
	}
	endpoints, err := endpointsOf(ctx, d, jobs, func(j webhook.Job) uuid.UUID { return j.MerchantID })
	if err != nil {
		return err
	}
	var full []webhook.Job
	for _, j := range jobs {
		ep := findEndpoint(endpoints[j.MerchantID], j.WebhookID)
		if ep == nil {
			continue // disabled or deleted since: its jobs went with it
		}
		if l := d.lane(ep); l.reserve() {
			l.push(queued{job: j})
		} else {
			full = append(full, j)
			l.markSpilled(ctx)
		}
	}
	if len(full) > 0 {
		if err := d.cfg.Store.DeferJobs(ctx, full, now.Add(d.cfg.Spill)); err != nil {
			return fmt.Errorf("defer webhook jobs: %w", err)
		}
	}
	return nil
}

// endpointsOf returns the active endpoints of the merchants of items, as
// committed before the call (endpointCache).
func endpointsOf[T any](ctx context.Context, d *Dispatcher, items []T, merchant func(T) uuid.UUID) (map[uuid.UUID][]webhook.Endpoint, error) {
	merchants := make([]uuid.UUID, len(items))
	for i, it := range items {
		merchants[i] = merchant(it)
	}
	endpoints, err := d.endpoint.get(ctx, merchants)
	if err != nil {
		return nil, fmt.Errorf("load endpoints: %w", err)
	}
	return endpoints, nil
}

func findEndpoint(list []webhook.Endpoint, id uuid.UUID) *webhook.Endpoint {
	for i := range list {
		if list[i].ID == id {
			return &list[i]
		}
	}
	return nil
}
