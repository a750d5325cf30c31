package dispatch

import (
	"context"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"go.uber.org/zap"

	"github.com/convida/convida/pkg/ids"
	"github.com/convida/convida/pkg/webhook"
)

// lane returns the endpoint's lane, creating it (and its workers) on first
// use; it always carries the freshest endpoint seen (URL, secrets).
func (d *Dispatcher) lane(ep *webhook.Endpoint) *lane {
	d.mu.Lock()
	defer d.mu.Unlock()
	l, ok := d.lanes[ep.ID]
	if !ok {
		l = &lane{d: d, slots: make(chan struct{}, d.cfg.Concurrency+d.cfg.QueueSize),
			jobs: make(chan queued, d.cfg.Concurrency+d.cfg.QueueSize)}
		d.lanes[ep.ID] = l
		for range d.cfg.Concurrency {
			go l.work(d.ctx)
		}
	}
	l.setEndpoint(*ep)
	return l
}

// laneOf returns the existing lane of an endpoint.
func (d *Dispatcher) laneOf(webhookID uuid.UUID) *lane {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.lanes[webhookID]
}

// lane is one endpoint's bounded queue and its workers.
type lane struct {
	d     *Dispatcher
	slots chan struct{} // a token per job queued or in flight
	jobs  chan queued

	// spills counts the spills since the last refill that found nothing
	// more to take: jobs of this endpoint wait in Postgres for room in the
	// lane while it is above zero. refilling says a refill is running.
	spills    atomic.Int64
	refilling atomic.Bool
	// worked counts the jobs the workers are done with: a batch waiting
	// for its held jobs watches it move.
	worked atomic.Int64

	mu       sync.Mutex
	ep       webhook.Endpoint
	disabled bool
}

func (l *lane) reserve() bool {
	select {
	case l.slots <- struct{}{}:
		return true
	default:
		return false
	}
}

func (l *lane) release() { <-l.slots }

// push queues a job for which reserve succeeded; it never blocks.
func (l *lane) push(q queued) { l.jobs <- q }

// hold queues j, for which reserve succeeded, as a held job whose
// recording sends a token on progress.
func (l *lane) hold(j webhook.Job, progress chan<- struct{}) heldJob {
	h := newHold(progress)
	l.push(queued{job: j, held: h})
	return heldJob{job: j, lane: l, hold: h}
}

func (l *lane) setEndpoint(ep webhook.Endpoint) {
	l.mu.Lock()
	defer l.mu.Unlock()
	// A snapshot no newer than the lane's (a cache that still holds the
	// endpoint the lane just disabled) changes nothing; a newer one (the
	// merchant re-enabled or edited it) replaces it.
	if !l.ep.UpdatedAt.IsZero() && !ep.UpdatedAt.After(l.ep.UpdatedAt) {
		return
	}
	l.ep, l.disabled = ep, false
}

// failed records a failed attempt at now in the lane's snapshot and
// returns when the endpoint's unbroken run of failures began. The lane
// keeps the run itself: FinishJobs writes failing_since without moving
// updated_at, so a snapshot taken while the endpoint was healthy would
// never learn of the run from the store, and the 5-day rule never fire.
func (l *lane) failed(now time.Time) time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ep.FailingSince.IsZero() {
		l.ep.FailingSince = now
	}
	return l.ep.FailingSince
}

// succeeded ends the lane's run of failures.
func (l *lane) succeeded() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.ep.FailingSince = time.Time{}
}

func (l *lane) endpoint() (webhook.Endpoint, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.ep, l.disabled
}

func (l *lane) work(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case q := <-l.jobs:
			if l.take(ctx, &q) {
				l.deliver(ctx, q)
			}
			l.worked.Add(1)
			l.release()
			l.maybeRefill(ctx)
		}
	}
}

// take decides whether the worker makes q's attempt. A job whose lease
// has more than half to run is the worker's: the attempt ends before the
// scheduler may offer the job again. A held job without a row has no one
// else to deliver it. A stored job that waited longer is attempted only if
// its row can be leased again (RenewJobLease): started on the old lease,
// the attempt might still run when the scheduler offers the job again, and
// be made twice. Skipping such jobs instead would stall a slow dispatcher:
// the scheduler offers each unfinished job again at every lease's end, the
// copies queue behind each other, and none reaches a worker in time. Now
// the first copy to reach one takes the job and the others drop out.
func (l *lane) take(ctx context.Context, q *queued) bool {
	d := l.d
	now := d.cfg.Now()
	if now.Before(q.job.NextAttemptAt.Add(-d.cfg.Lease / 2)) {
		return true
	}
	if q.held != nil && !q.held.settle() {
		return true
	}
	ok, err := d.cfg.Store.RenewJobLease(ctx, q.job, now, d.cfg.Lease)
	if err != nil {
		if ctx.Err() == nil { // the lease ends and the scheduler offers the job again
			d.log.Warn("renewing a webhook job's lease failed", zap.Error(err))
		}
		return false
	}
	if ok {
		q.job.NextAttemptAt = now.Add(d.cfg.Lease)
	}
	return ok
}

// deliver makes one attempt and records its outcome.
func (l *lane) deliver(ctx context.Context, q queued) {
	d := l.d
	j := q.job
	ep, disabled := l.endpoint()
	if disabled {
		// DisableWebhook deleted the endpoint's jobs; a held one is dropped.
		if q.held != nil && !q.held.settle() {
			q.held.finish(nil)
		}
		return
	}
	start := d.cfg.Now()
	logID := uuid.New()
	stopRenewing := l.renewWhileInFlight(ctx, q)
	res := d.cfg.Sender.Send(ctx, webhook.Delivery{URL: ep.URL, Secrets: ep.Secrets(start), EventID: j.EventID,
		EventType: j.EventType, LogID: logID, Payload: j.Payload})
	stopRenewing()
	if ctx.Err() != nil && !res.Success {
		return // shutting down: the lease (or the uncommitted batch) brings the job back
	}
	now := d.cfg.Now()
	out := webhook.JobOutcome{Job: j, Unstored: q.held != nil && !q.held.settle(), Attempt: webhook.Attempt{
		MerchantID: j.MerchantID, ID: logID, WebhookID: j.WebhookID, EventID: j.EventID, EventType: j.EventType,
		Status: webhook.StatusFailed, Attempt: j.Attempts + 1, ResponseStatus: res.StatusCode, ResponseBody: res.Body,
		Error: res.Error, DurationMS: res.Duration.Milliseconds(), CreatedAt: now,
	}}
	disable := ""
	switch {
	case res.Success:
		out.Attempt.Status, out.Delete = webhook.StatusSuccess, true
		l.succeeded()
	case res.Gone:
		out.Delete, disable = true, webhook.DisabledGone
	default:
		next, ok := webhook.NextAttemptAt(d.cfg.Schedule, j.Attempts+1, now, res.RetryAfter, rand.Float64)
		if ok {
			out.NextAttemptAt, out.Attempt.NextRetryAt = next, next
		} else {
			out.Delete = true // out of attempts: the log shows the last failure
		}
		if webhook.FailingTooLong(l.failed(now), now) {
			out.Delete, out.NextAttemptAt, out.Attempt.NextRetryAt = true, time.Time{}, time.Time{}
			disable = webhook.DisabledFailing
		}
	}
	if !res.Success {
		logFailure(d.log, out.Attempt, disable)
	}
	item := outcome{JobOutcome: out}
	if out.Unstored {
		item.held = q.held
	}
	if disable == "" {
		_ = d.finish.Submit(context.WithoutCancel(ctx), item) // never fails without a deadline
		return
	}
	// The attempt that disables the endpoint is logged first, so the log
	// shows why.
	_, _ = d.finish.Do(context.WithoutCancel(ctx), item)
	l.disable(ctx, ep, disable)
}

// renewWhileInFlight renews the lease of q's row every third of the lease
// while its attempt runs, so that the scheduler does not offer the job
// again meanwhile however long the attempt takes; the lease can then be
// short, and a dead dispatcher's deliveries come back soon. A held job is
// renewed once its batch wrote its row (before, it has none). The returned
// func stops the renewals; one under way when it is called only lands
// while the row still carries the lease it renews (RenewJobLease), never
// on the outcome recorded after it. A renewal refused (another copy took
// the job after a lapse) ends the renewals: this attempt goes on, as one
// in flight at a crash would.
func (l *lane) renewWhileInFlight(ctx context.Context, q queued) (stop func()) {
	d := l.d
	every := d.cfg.Lease / 3
	var mu sync.Mutex
	stopped := false
	job := q.job
	var timer *time.Timer
	renew := func() {
		if q.held != nil && !q.held.rowWritten() {
			mu.Lock()
			if !stopped {
				timer.Reset(every)
			}
			mu.Unlock()
			return
		}
		now := d.cfg.Now()
		ok, err := d.cfg.Store.RenewJobLease(ctx, job, now, d.cfg.Lease)
		mu.Lock()
		defer mu.Unlock()
		switch {
		case err != nil && ctx.Err() == nil:
			d.log.Debug("renewing the lease of a webhook delivery in flight failed", zap.Error(err))
		case err == nil && !ok:
			d.log.Debug("the lease of a webhook delivery in flight was taken by another copy",
				zap.String("event_id", ids.Format(ids.Event, job.EventID)))
			return
		case err == nil:
			job.NextAttemptAt = now.Add(d.cfg.Lease)
		}
		if !stopped && ctx.Err() == nil {
			timer.Reset(every)
		}
	}
	mu.Lock()
	timer = time.AfterFunc(every, renew)
	mu.Unlock()
	return func() {
		mu.Lock()
		defer mu.Unlock()
		stopped = true
		timer.Stop()
	}
}

// markSpilled records that jobs wait in Postgres, and refills at once if
// the lane has room again.
func (l *lane) markSpilled(ctx context.Context) {
	l.spills.Add(1)
	l.maybeRefill(ctx)
}

// maybeRefill starts a refill when jobs were spilled and the lane is at
// most half full: a busy healthy endpoint drains its backlog at its own
// pace instead of waiting for the scheduler's next sweep.
func (l *lane) maybeRefill(ctx context.Context) {
	if l.spills.Load() == 0 || len(l.slots) > cap(l.slots)/2 || !l.refilling.CompareAndSwap(false, true) {
		return
	}
	go l.refill(ctx)
}

func (l *lane) refill(ctx context.Context) {
	defer l.refilling.Store(false)
	d := l.d
	ep, disabled := l.endpoint()
	for !disabled && ctx.Err() == nil {
		// The slots are reserved before the claim: the consumer may fill
		// the lane meanwhile, and a claimed job must find its place.
		room := 0
		for room < cap(l.slots) && l.reserve() {
			room++
		}
		if room < cap(l.slots)/4 {
			l.releaseN(room)
			return // the workers call again when it drains
		}
		seen := l.spills.Load()
		now := d.cfg.Now()
		jobs, err := d.cfg.Store.ClaimSpilledJobs(ctx, ep.MerchantID, ep.ID, now.Add(d.cfg.Spill), now, d.cfg.Lease, room)
		if err != nil {
			l.releaseN(room)
			d.log.Warn("taking back spilled webhook jobs failed; the scheduler's sweep will", zap.Error(err))
			return
		}
		for _, j := range jobs {
			l.push(queued{job: j})
		}
		l.releaseN(room - len(jobs))
		// Everything spilled is taken unless a spill happened meanwhile
		// (its job may have committed after the query): then look again.
		if len(jobs) < room && l.spills.CompareAndSwap(seen, 0) {
			return
		}
	}
}

func (l *lane) releaseN(n int) {
	for range n {
		l.release()
	}
}

func (l *lane) disable(ctx context.Context, ep webhook.Endpoint, reason string) {
	l.mu.Lock()
	l.disabled = true
	l.mu.Unlock()
	webhookID := zap.String("webhook_id", ids.Format(ids.Webhook, ep.ID))
	if err := l.d.cfg.Store.DisableWebhook(context.WithoutCancel(ctx), ep.MerchantID, ep.ID, reason); err != nil {
		l.d.log.Warn("disabling webhook endpoint failed", webhookID, zap.Error(err))
		return
	}
	l.d.log.Info("webhook endpoint disabled", webhookID, zap.String("reason", reason))
}

// logFailure writes the operator's line for a failed attempt a: which
// endpoint and event, the answer (status) or why none came (error), and
// when the next attempt is due, or why none is. Ids are written as the API
// shows them; the URL, the secrets, the signature, the payload and the
// receiver's body are never logged.
func logFailure(log *zap.Logger, a webhook.Attempt, disable string) {
	fields := []zap.Field{
		zap.String("webhook_id", ids.Format(ids.Webhook, a.WebhookID)),
		zap.String("event_id", ids.Format(ids.Event, a.EventID)),
		zap.String("event_type", a.EventType),
		zap.Int("attempt", a.Attempt),
	}
	if a.ResponseStatus != 0 {
		fields = append(fields, zap.Int("response_status", a.ResponseStatus))
	}
	fields = append(fields, zap.String("error", a.Error))
	switch {
	case !a.NextRetryAt.IsZero():
		fields = append(fields, zap.Time("next_retry_at", a.NextRetryAt))
	case disable != "":
		fields = append(fields, zap.String("next_retry", "none: the endpoint is disabled ("+disable+")"))
	default:
		fields = append(fields, zap.String("next_retry", "none: out of attempts"))
	}
	log.Info("webhook delivery failed", fields...)
}
