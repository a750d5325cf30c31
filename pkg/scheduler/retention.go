package scheduler

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/convida/convida/pkg/retention"
)

// RetentionStore deletes what has outlived its retention
// (postgres.RetentionStore).
type RetentionStore interface {
	// Purge deletes at most limit records of kind (a retention kind) dated
	// before cutoff, or for retention.BuyerData clears them, in one short
	// transaction that skips the rows another transaction holds, and
	// returns how many. Fewer than limit means none was left when it ran
	// (but for those it skipped). An unknown kind is an error.
	Purge(ctx context.Context, kind string, cutoff time.Time, limit int) (int, error)
}

// Retention is the retention sweep, a scheduler task (Run): at most once
// per Interval it carries out Plan, each kind in statements of at most
// Batch rows, each its own short transaction, until a statement finds
// fewer than Batch. A tick spends at most about Budget on it, so that a
// large backlog never holds back the warranty releases and webhook
// retries of the ticks: a sweep that runs out of budget goes on at the
// next tick, to the same cutoffs.
//
// A sweep that has deleted something ends with one info line of its
// counts per kind; one with nothing due writes nothing. A failed statement
// is returned (the tick logs it) and the sweep goes on at the next tick.
type Retention struct {
	Store    RetentionStore
	Plan     retention.Plan
	Metrics  *RetentionMetrics // nil counts nothing
	Log      *zap.Logger
	Interval time.Duration // default 1 h
	Batch    int           // rows per statement, default DefaultRetentionBatch
	Budget   time.Duration // a tick's share, default 2 s

	last  time.Time    // when the last complete sweep began; zero before one
	sweep *sweepStatus // the sweep under way, nil between sweeps
}

// DefaultRetentionBatch is the most rows one statement of the sweep
// deletes: small enough that a statement holds its locks for milliseconds.
const DefaultRetentionBatch = 5000

// sweepStatus is a sweep under way: its clock reading, the kinds it has
// finished and its counts.
type sweepStatus struct {
	now      time.Time
	done     int // rules of the plan finished
	counts   map[string]int
	duration time.Duration
}

// Run is the scheduler task: it sweeps when a sweep is due at now or one
// is under way.
func (r *Retention) Run(ctx context.Context, now time.Time) error {
	if r.sweep == nil {
		interval := r.Interval
		if interval <= 0 {
			interval = time.Hour
		}
		if !r.last.IsZero() && now.Sub(r.last) < interval {
			return nil
		}
		r.sweep = &sweepStatus{now: now, counts: map[string]int{}}
	}
	finished, err := r.work(ctx, r.sweep, r.budget())
	if !finished {
		return err
	}
	s := r.sweep
	r.sweep, r.last = nil, s.now
	r.Metrics.succeeded(now) // the tick that finished it, on the scheduler's clock
	r.logSweep(s)
	return nil
}

// Sweep carries out the whole plan at now, whatever the interval, and
// returns what it deleted per kind. With every > 0 it is paced as the
// scheduler paces Run — about Budget of work, then a pause until every
// has passed since that slice began, as a tick every SCHEDULER_INTERVAL
// would — and with every = 0 it works without pause. The bench runs it
// beside the load; Run is what the scheduler runs.
func (r *Retention) Sweep(ctx context.Context, now time.Time, every time.Duration) (map[string]int, error) {
	s := &sweepStatus{now: now, counts: map[string]int{}}
	budget := time.Duration(0)
	if every > 0 {
		budget = r.budget()
	}
	for {
		slice := time.Now()
		finished, err := r.work(ctx, s, budget)
		if err != nil {
			return s.counts, err
		}
		if finished {
			break
		}
		select {
		case <-ctx.Done():
			return s.counts, ctx.Err()
		case <-time.After(every - time.Since(slice)):
		}
	}
	r.Metrics.succeeded(now)
	return s.counts, nil
}

// budget is a tick's share of the sweep (Budget, default 2 s).
func (r *Retention) budget() time.Duration {
	if r.Budget <= 0 {
		return 2 * time.Second
	}
	return r.Budget
}

// work goes on with s for about budget (0: until it is done) and reports
// whether it finished the plan.
func (r *Retention) work(ctx context.Context, s *sweepStatus, budget time.Duration) (bool, error) {
	batch := r.Batch
	if batch <= 0 {
		batch = DefaultRetentionBatch
	}
	start := time.Now()
	defer func() { s.duration += time.Since(start) }()
	for ; s.done < len(r.Plan); s.done++ {
		rule := r.Plan[s.done]
		for {
			if err := ctx.Err(); err != nil {
				return false, err
			}
			n, err := r.Store.Purge(ctx, rule.Kind, rule.Cutoff(s.now), batch)
			if err != nil {
				return false, fmt.Errorf("retention of %s: %w", rule.Kind, err)
			}
			s.counts[rule.Kind] += n
			r.Metrics.deleted(rule.Kind, n)
			if n < batch {
				break
			}
			if budget > 0 && time.Since(start) >= budget {
				return false, nil
			}
		}
	}
	return true, nil
}

// logSweep writes the info line of a sweep that deleted something.
func (r *Retention) logSweep(s *sweepStatus) {
	fields := []zap.Field{}
	for _, rule := range r.Plan {
		if n := s.counts[rule.Kind]; n > 0 {
			fields = append(fields, zap.Int(rule.Kind, n))
		}
	}
	if len(fields) == 0 || r.Log == nil {
		return
	}
	r.Log.Info("retention sweep deleted expired records", append(fields, zap.Duration("took", s.duration))...)
}

// RetentionMetrics are the sweep's Prometheus metrics. A nil
// *RetentionMetrics records nothing.
type RetentionMetrics struct {
	deletedTotal *prometheus.CounterVec
	lastSuccess  prometheus.Gauge
}

// NewRetentionMetrics registers the retention metrics on reg, or returns
// those already registered there (a test builds the scheduler role
// several times over one registry):
//
//   - convida_retention_deleted_total{table}: records deleted (for
//     referrals_buyer_data, cleared) by the sweep, per retention kind;
//   - convida_retention_last_success_timestamp_seconds: when the last
//     complete sweep ended (0 in a process that has not completed one:
//     alert on the maximum over the scheduler processes).
func NewRetentionMetrics(reg prometheus.Registerer) *RetentionMetrics {
	m := &RetentionMetrics{
		deletedTotal: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "convida_retention_deleted_total",
			Help: "Records the retention sweep deleted (referrals_buyer_data: referrals whose buyer data it cleared), by table.",
		}, []string{"table"}),
		lastSuccess: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "convida_retention_last_success_timestamp_seconds",
			Help: "Unix time at which the last complete retention sweep of this process ended (0 before one).",
		}),
	}
	m.deletedTotal = register(reg, m.deletedTotal)
	m.lastSuccess = register(reg, m.lastSuccess)
	for _, kind := range retention.Kinds() {
		m.deletedTotal.WithLabelValues(kind) // shown at 0 from the start
	}
	return m
}

// register registers c on reg, or returns the collector already there.
func register[C prometheus.Collector](reg prometheus.Registerer, c C) C {
	if err := reg.Register(c); err != nil {
		var are prometheus.AlreadyRegisteredError
		if errors.As(err, &are) {
			if existing, ok := are.ExistingCollector.(C); ok {
				return existing
			}
		}
		panic(err)
	}
	return c
}

func (m *RetentionMetrics) deleted(kind string, n int) {
	if m != nil && n > 0 {
		m.deletedTotal.WithLabelValues(kind).Add(float64(n))
	}
}

func (m *RetentionMetrics) succeeded(at time.Time) {
	if m != nil {
		m.lastSuccess.Set(float64(at.UnixNano()) / 1e9)
	}
}
