package scheduler

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/ids"
	"github.com/convida/convida/pkg/merchant"
	"github.com/convida/convida/pkg/reconcile"
)

// ReconcileStore finds the reconciliation work (postgres.ReconcileStore).
type ReconcileStore interface {
	// WaitingRuns lists up to limit runs the API asked for that no
	// process runs yet, oldest first.
	WaitingRuns(ctx context.Context, limit int) ([]reconcile.Run, error)
	// ClaimRun claims a waiting run at at; false when another process
	// claimed it first.
	ClaimRun(ctx context.Context, r reconcile.Run, at time.Time) (bool, error)
	// FailStale ends failed, at at, the claimed running runs whose
	// heartbeat is older than before, and returns their ids.
	FailStale(ctx context.Context, before, at time.Time) ([]uuid.UUID, error)
	// DueIntegrations lists the integrations of providers whose last run
	// started before startedBefore, or that never ran.
	DueIntegrations(ctx context.Context, providers []string, startedBefore time.Time) ([]reconcile.Due, error)
}

// Integrations reads a merchant's settings of a provider, secrets
// decrypted (postgres.MerchantStore).
type Integrations interface {
	FindIntegration(ctx context.Context, merchantID uuid.UUID, provider string) (*merchant.Integration, error)
}

// Reconcile is the reconciliation task of the leader (Run): every
// Interval it starts a run over the last Window for each integration with
// pull credentials, and it carries out the runs the API asked for, which
// wait for it in the table (claimed_at unset). The runs go on in the
// background of the leader, at most Concurrency at once, and the slots
// are shared fairly between merchants (fairShare): a merchant with no run
// going is served before any merchant's second run, merchants take turns,
// and a merchant's second run never takes the last free slot, which stays
// for a merchant with none. Each run is bounded by the Reconciler's
// MaxDuration and MaxPages and writes a heartbeat after every page; a run
// whose heartbeat is older than Stale is ended failed (its process died,
// or its pull stopped moving) and, when it runs here, stopped. Two runs
// of one integration never overlap: the table refuses a second running
// row.
type Reconcile struct {
	Store        ReconcileStore
	Integrations Integrations
	Reconciler   *reconcile.Reconciler
	Log          *zap.Logger
	Interval     time.Duration // 0 starts no scheduled run, only those asked for (RECONCILE_INTERVAL=0)
	Window       time.Duration // default 72 h (RECONCILE_WINDOW)
	Stale        time.Duration // default 15 min
	Concurrency  int           // default 4

	mu       sync.Mutex
	running  map[uuid.UUID]runSlot // by run id
	turns    turns
	due      []reconcile.Due // of the last scan, not started yet
	lastScan time.Time
	wg       sync.WaitGroup
}

// runSlot is a run going on in this process.
type runSlot struct {
	merchant uuid.UUID
	stop     context.CancelCauseFunc
}

// scanEvery bounds how often the task looks for due integrations.
const scanEvery = time.Minute

// maxWaiting bounds the runs asked for that one tick considers.
const maxWaiting = 1000

// Run is the scheduler task.
func (t *Reconcile) Run(ctx context.Context, now time.Time) error {
	stale, err := t.Store.FailStale(ctx, now.Add(-t.stale()), now)
	if err != nil {
		return err
	}
	t.stop(stale, reconcile.ErrStale)
	if t.Interval > 0 && now.Sub(t.lastScan) >= min(scanEvery, t.Interval) {
		due, err := t.Store.DueIntegrations(ctx, reconcile.Providers(), now.Add(-t.Interval))
		if err != nil {
			return err
		}
		t.lastScan, t.due = now, due
	}
	if t.free() <= 0 {
		return nil
	}
	requested, err := t.Store.WaitingRuns(ctx, maxWaiting)
	if err != nil {
		return err
	}
	queue := make([]waiting, 0, len(requested)+len(t.due))
	for _, run := range requested {
		queue = append(queue, waiting{merchant: run.MerchantID, requested: &run})
	}
	for _, d := range t.due {
		queue = append(queue, waiting{merchant: d.MerchantID, due: &d})
	}
	t.mu.Lock()
	picks := t.turns.share(queue, t.runningByMerchant(), t.free0())
	t.mu.Unlock()
	for _, w := range picks {
		if err := t.startOne(ctx, w, now); err != nil {
			return err
		}
	}
	return nil
}

// startOne starts the run of w: a run asked for, claimed first, or the
// scheduled run of a due integration with pull credentials.
func (t *Reconcile) startOne(ctx context.Context, w waiting, now time.Time) error {
	if w.requested != nil {
		claimed, err := t.Store.ClaimRun(ctx, *w.requested, now)
		if err != nil || !claimed {
			return err
		}
		in, err := t.Integrations.FindIntegration(ctx, w.requested.MerchantID, w.requested.Provider)
		if err != nil {
			// No settings any more (or no database): the run fails with why.
			in = &merchant.Integration{Provider: w.requested.Provider}
		}
		t.execute(ctx, *w.requested, *in)
		return nil
	}
	t.forgetDue(*w.due)
	in, err := t.Integrations.FindIntegration(ctx, w.due.MerchantID, w.due.Provider)
	if apperr.Is(err, apperr.NotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if !reconcile.Configured(*in) {
		return nil
	}
	run, err := t.Reconciler.Begin(ctx, w.due.MerchantID, *in, now.Add(-t.window()), now, true)
	if apperr.Is(err, apperr.Conflict) {
		return nil // one is running (asked for by the API)
	}
	if err != nil {
		return err
	}
	t.execute(ctx, run, *in)
	return nil
}

// forgetDue removes d from the due integrations of the last scan.
func (t *Reconcile) forgetDue(d reconcile.Due) {
	t.due = slices.DeleteFunc(t.due, func(x reconcile.Due) bool { return x == d })
}

func (t *Reconcile) execute(ctx context.Context, run reconcile.Run, in merchant.Integration) {
	runCtx, stop := context.WithCancelCause(ctx)
	t.mu.Lock()
	if t.running == nil {
		t.running = map[uuid.UUID]runSlot{}
	}
	t.running[run.ID] = runSlot{merchant: run.MerchantID, stop: stop}
	t.mu.Unlock()
	t.wg.Add(1)
	go func() {
		defer t.wg.Done()
		defer func() {
			t.mu.Lock()
			delete(t.running, run.ID)
			t.mu.Unlock()
			stop(nil)
		}()
		t.log().Info("reconciliation started", zap.String("merchant", run.MerchantID.String()),
			zap.String("provider", run.Provider), zap.String("run", ids.Format(ids.Reconciliation, run.ID)))
		t.Reconciler.Execute(runCtx, run, in)
	}()
}

// stop ends the runs of ids going on here, with cause.
func (t *Reconcile) stop(ids []uuid.UUID, cause error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, id := range ids {
		if slot, ok := t.running[id]; ok {
			slot.stop(cause)
		}
	}
}

// Wait returns once the runs under way have ended (their context ended,
// they record their end).
func (t *Reconcile) Wait() { t.wg.Wait() }

// free is how many more runs may start now.
func (t *Reconcile) free() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.free0()
}

// free0 is free, t.mu held.
func (t *Reconcile) free0() int { return t.concurrency() - len(t.running) }

// runningByMerchant counts the runs going on here by merchant, t.mu held.
func (t *Reconcile) runningByMerchant() map[uuid.UUID]int {
	n := map[uuid.UUID]int{}
	for _, slot := range t.running {
		n[slot.merchant]++
	}
	return n
}

func (t *Reconcile) concurrency() int {
	if t.Concurrency <= 0 {
		return 4
	}
	return t.Concurrency
}

func (t *Reconcile) window() time.Duration { return orDefault(t.Window, 72*time.Hour) }
func (t *Reconcile) stale() time.Duration  { return orDefault(t.Stale, 15*time.Minute) }

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

func (t *Reconcile) log() *zap.Logger {
	if t.Log == nil {
		return zap.NewNop()
	}
	return t.Log
}

// ReconcileMetrics are the reconciliation's metrics (a reconcile.Observer):
// the sales the pulls found that no webhook had brought, and when a run of
// each provider last succeeded. Neither is labelled by merchant; the SQL
// in docs/operations.md finds the merchants.
type ReconcileMetrics struct {
	missing     *prometheus.CounterVec
	lastSuccess *prometheus.GaugeVec
}

// NewReconcileMetrics registers the metrics on reg.
func NewReconcileMetrics(reg prometheus.Registerer) *ReconcileMetrics {
	m := &ReconcileMetrics{
		missing: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "convida_reconcile_missing_total",
			Help: "Sales (and refunds) a reconciliation pull found that no webhook had brought, by provider.",
		}, []string{"provider"}),
		lastSuccess: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "convida_reconcile_last_success_timestamp_seconds",
			Help: "Unix time at which a reconciliation run of the provider last succeeded in this process (0 before one).",
		}, []string{"provider"}),
	}
	m.missing = register(reg, m.missing)
	m.lastSuccess = register(reg, m.lastSuccess)
	for _, p := range reconcile.Providers() {
		m.missing.WithLabelValues(p) // shown at 0 from the start
		m.lastSuccess.WithLabelValues(p)
	}
	return m
}

// Missing counts n sales found missing.
func (m *ReconcileMetrics) Missing(provider string, n int) {
	if m != nil {
		m.missing.WithLabelValues(provider).Add(float64(n))
	}
}

// Succeeded notes a run that succeeded at at.
func (m *ReconcileMetrics) Succeeded(provider string, at time.Time) {
	if m != nil {
		m.lastSuccess.WithLabelValues(provider).Set(float64(at.UnixNano()) / 1e9)
	}
}
