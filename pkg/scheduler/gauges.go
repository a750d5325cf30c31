package scheduler

import (
	"context"
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// BacklogStore reads the figures of the operator's alerts that only the
// database knows.
type BacklogStore interface {
	// OutboxBacklog counts, up to limit, the outbox events still waiting
	// for their relay that were written before olderThan, and returns when
	// the oldest waiting event was written (zero when none waits).
	OutboxBacklog(ctx context.Context, olderThan time.Time, limit int) (pending int, oldest time.Time, err error)
	// EndpointHealth counts the active webhook endpoints whose deliveries
	// have all failed lately (failing_since set) and the endpoints the
	// dispatcher switched off (a 410, or failing for days), and returns
	// the start of the longest current run of failures (zero when none).
	EndpointHealth(ctx context.Context) (failing, disabled int, failingSince time.Time, err error)
}

// PendingLimit is the most waiting outbox events Gauges counts: past it
// the gauge stays there, so that a stalled relay does not make the count
// itself a full scan every tick.
const PendingLimit = 100_000

// Gauges is a scheduler task that sets, on every tick of the leader, the
// gauges of the alerts in docs/operations.md that are read from the
// database: the outbox backlog and the failing webhook endpoints. The
// other replicas leave them at zero, so take the max over replicas. None
// is labelled by merchant: an alert names the condition, and the SQL in
// docs/operations.md finds the merchants.
type Gauges struct {
	Store BacklogStore
	// Grace is the sweep's OutboxGrace: an event younger than it is still
	// in the relay's hands and not counted pending.
	Grace time.Duration

	outboxPending, outboxOldest                     prometheus.Gauge
	endpointsFailing, endpointsDisabled, failingFor prometheus.Gauge
}

// NewGauges registers the gauges on reg and returns the task. Registering
// twice on one registry (a second scheduler of the process) shares the
// first registration's gauges.
func NewGauges(reg prometheus.Registerer, store BacklogStore) *Gauges {
	g := func(name, help string) prometheus.Gauge {
		return registered(reg, prometheus.NewGauge(prometheus.GaugeOpts{Name: name, Help: help}))
	}
	return &Gauges{
		Store: store, Grace: DefaultOutboxGrace,
		outboxPending: g("convida_outbox_pending",
			"Outbox events not yet published to the broker and older than the sweep's grace (30 s), counted up to 100,000; set by the scheduler's leader."),
		outboxOldest: g("convida_outbox_oldest_pending_age_seconds",
			"Age of the oldest outbox event not yet published to the broker (0 when none waits); set by the scheduler's leader."),
		endpointsFailing: g("convida_webhook_endpoints_failing",
			"Active webhook endpoints whose deliveries have all failed since failing_since; set by the scheduler's leader."),
		endpointsDisabled: g("convida_webhook_endpoints_disabled",
			"Webhook endpoints the dispatcher switched off (410 Gone, or failing for 5 days); set by the scheduler's leader."),
		failingFor: g("convida_webhook_endpoint_longest_failure_seconds",
			"How long the longest-failing active webhook endpoint has failed (0 when none fails); set by the scheduler's leader."),
	}
}

// registered registers c on reg, or returns the collector already
// registered under its name.
func registered(reg prometheus.Registerer, c prometheus.Gauge) prometheus.Gauge {
	if err := reg.Register(c); err != nil {
		var dup prometheus.AlreadyRegisteredError
		if errors.As(err, &dup) {
			return dup.ExistingCollector.(prometheus.Gauge)
		}
		panic(err) // an invalid metric: a bug
	}
	return c
}

// Update reads the figures and sets the gauges; it is the task. A figure
// that cannot be read leaves its gauges as they were.
func (g *Gauges) Update(ctx context.Context, now time.Time) error {
	pending, oldest, err := g.Store.OutboxBacklog(ctx, now.Add(-g.Grace), PendingLimit)
	if err == nil {
		g.outboxPending.Set(float64(pending))
		g.outboxOldest.Set(age(now, oldest))
	}
	failing, disabled, since, err2 := g.Store.EndpointHealth(ctx)
	if err2 == nil {
		g.endpointsFailing.Set(float64(failing))
		g.endpointsDisabled.Set(float64(disabled))
		g.failingFor.Set(age(now, since))
	}
	return errors.Join(err, err2)
}

// age is how long before now t was, in seconds; 0 for the zero time.
func age(now, t time.Time) float64 {
	if t.IsZero() || t.After(now) {
		return 0
	}
	return now.Sub(t).Seconds()
}
