package scheduler

import (
	"context"
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
	// ClaimRequested claims up to limit runs the API asked for.
	ClaimRequested(ctx context.Context, limit int) ([]reconcile.Run, error)
	// FailStale ends failed the claimed running runs whose heartbeat is
	// older than before.
	FailStale(ctx context.Context, before time.Time) (int, error)
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
// background of the leader, at most Concurrency at once, and write a
// heartbeat after each page; a run whose heartbeat is older than Stale
// was left by a process that died, and is ended failed, so that the
// integration can run again. Two runs of one integration never overlap:
// the table refuses a second running row.
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
	running  map[uuid.UUID]bool
	lastScan time.Time
	wg       sync.WaitGroup
}

// scanEvery bounds how often the task looks for due integrations.
const scanEvery = time.Minute

// Run is the scheduler task.
func (t *Reconcile) Run(ctx context.Context, now time.Time) error {
	if _, err := t.Store.FailStale(ctx, now.Add(-t.stale())); err != nil {
		return err
	}
	free := t.free()
	if free <= 0 {
		return nil
	}
	requested, err := t.Store.ClaimRequested(ctx, free)
	if err != nil {
		return err
	}
	for _, run := range requested {
		t.start(ctx, run)
	}
	if t.Interval <= 0 || now.Sub(t.lastScan) < min(scanEvery, t.Interval) {
		return nil
	}
	t.lastScan = now
	return t.scheduled(ctx, now)
}

// scheduled starts a run for each due integration with pull credentials,
// as far as the concurrency allows; the others are due at the next scan.
func (t *Reconcile) scheduled(ctx context.Context, now time.Time) error {
	due, err := t.Store.DueIntegrations(ctx, reconcile.Providers(), now.Add(-t.Interval))
	if err != nil {
		return err
	}
	for _, d := range due {
		if t.free() <= 0 {
			return nil
		}
		in, err := t.Integrations.FindIntegration(ctx, d.MerchantID, d.Provider)
		if apperr.Is(err, apperr.NotFound) {
			continue
		}
		if err != nil {
			return err
		}
		if !reconcile.Configured(*in) {
			continue
		}
		run, err := t.Reconciler.Begin(ctx, d.MerchantID, *in, now.Add(-t.window()), now, true)
		if apperr.Is(err, apperr.Conflict) {
			continue // one is running (asked for by the API)
		}
		if err != nil {
			return err
		}
		t.execute(ctx, run, *in)
	}
	return nil
}

// start carries out a claimed run the API asked for.
func (t *Reconcile) start(ctx context.Context, run reconcile.Run) {
	in, err := t.Integrations.FindIntegration(ctx, run.MerchantID, run.Provider)
	if err != nil {
		// No settings any more (or no database): the run fails with why.
		in = &merchant.Integration{Provider: run.Provider}
	}
	t.execute(ctx, run, *in)
}

func (t *Reconcile) execute(ctx context.Context, run reconcile.Run, in merchant.Integration) {
	t.mu.Lock()
	if t.running == nil {
		t.running = map[uuid.UUID]bool{}
	}
	t.running[run.ID] = true
	t.mu.Unlock()
	t.wg.Add(1)
	go func() {
		defer t.wg.Done()
		defer func() {
			t.mu.Lock()
			delete(t.running, run.ID)
			t.mu.Unlock()
		}()
		t.log().Info("reconciliation started", zap.String("merchant", run.MerchantID.String()),
			zap.String("provider", run.Provider), zap.String("run", ids.Format(ids.Reconciliation, run.ID)))
		t.Reconciler.Execute(ctx, run, in)
	}()
}

// Wait returns once the runs under way have ended (their context ended,
// they record their end).
func (t *Reconcile) Wait() { t.wg.Wait() }

// free is how many more runs may start now.
func (t *Reconcile) free() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	c := t.Concurrency
	if c <= 0 {
		c = 4
	}
	return c - len(t.running)
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
