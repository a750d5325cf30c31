package scheduler_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/convida/convida/pkg/postgres"
	"github.com/convida/convida/pkg/retention"
	"github.com/convida/convida/pkg/scheduler"
	"github.com/convida/convida/pkg/testenv"
	"github.com/convida/convida/pkg/testenv/backlog"
)

// countingStore is the real store, its statements' results written down
// per kind, to see the batches.
type countingStore struct {
	scheduler.RetentionStore
	mu      sync.Mutex
	batches map[string][]int
	limits  map[string]int
}

func (c *countingStore) Purge(ctx context.Context, kind string, cutoff time.Time, limit int) (int, error) {
	n, err := c.RetentionStore.Purge(ctx, kind, cutoff, limit)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.batches[kind] = append(c.batches[kind], n)
	c.limits[kind] = limit
	return n, err
}

func newCountingStore(pool *pgxpool.Pool) *countingStore {
	return &countingStore{RetentionStore: postgres.NewRetentionStore(pool), batches: map[string][]int{}, limits: map[string]int{}}
}

// retentionTenant is a merchant with one member, whose referrals the
// seeded ones are.
type retentionTenant struct {
	pool       *pgxpool.Pool
	merchantID uuid.UUID
	memberID   uuid.UUID
}

func newRetentionTenant(t *testing.T) retentionTenant {
	t.Helper()
	pool := testenv.MustPool(t)
	merchantID, memberID := testenv.MustRetentionTenant(t, pool)
	return retentionTenant{pool: pool, merchantID: merchantID, memberID: memberID}
}

func (rt retentionTenant) seed(t *testing.T, n int, at time.Time) {
	t.Helper()
	if _, err := backlog.Seed(context.Background(), rt.pool, rt.merchantID, rt.memberID, n, at); err != nil {
		t.Fatal(err)
	}
}

func (rt retentionTenant) exec(t *testing.T, sql string, args ...any) {
	t.Helper()
	if _, err := rt.pool.Exec(context.Background(), sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// dueAndKept counts, per kind, the rows a sweep at cutoff must take (due)
// and those it must leave (kept): as docs/retention.md states the rules,
// written apart from the store's statements. $1 is the kind's cutoff.
var dueAndKept = map[string]string{
	retention.InboundDeliveries: `SELECT count(*) FILTER (WHERE received_at < $1), count(*) FILTER (WHERE received_at >= $1)
FROM inbound_deliveries`,
	// Kept: a run still running, whatever its age.
	retention.ReconciliationRuns: `SELECT count(*) FILTER (WHERE started_at < $1 AND status <> 'running'),
  count(*) FILTER (WHERE started_at >= $1 OR status = 'running') FROM reconciliation_runs`,
	retention.WebhookAttempts: `SELECT count(*) FILTER (WHERE a.created_at < $1 AND j.event_id IS NULL),
  count(*) FILTER (WHERE a.created_at >= $1 OR j.event_id IS NOT NULL)
FROM webhook_attempts a LEFT JOIN webhook_jobs j USING (merchant_id, webhook_id, event_id)`,
	retention.Outbox: `SELECT count(*) FILTER (WHERE o.created_at < $1 AND p.event_id IS NULL AND set_aside_at IS NULL),
  count(*) FILTER (WHERE o.created_at >= $1 OR p.event_id IS NOT NULL OR set_aside_at IS NOT NULL)
FROM outbox o LEFT JOIN outbox_pending p USING (merchant_id, event_id)`,
	retention.ProcessedCommands: `SELECT count(*) FILTER (WHERE processed_at < $1), count(*) FILTER (WHERE processed_at >= $1)
FROM processed_commands`,
	retention.AuditEvents: `SELECT count(*) FILTER (WHERE created_at < $1), count(*) FILTER (WHERE created_at >= $1)
FROM audit_events`,
	retention.Sessions:       `SELECT count(*) FILTER (WHERE expiry < $1), count(*) FILTER (WHERE expiry >= $1) FROM sessions`,
	retention.SignInAttempts: `SELECT count(*) FILTER (WHERE at < $1), count(*) FILTER (WHERE at >= $1) FROM dashboard_sign_in_attempts`,
	retention.PortalSessions: `SELECT count(*) FILTER (WHERE expiry < $1), count(*) FILTER (WHERE expiry >= $1) FROM portal_sessions`,
	retention.PortalTokens:   `SELECT count(*) FILTER (WHERE expires_at < $1), count(*) FILTER (WHERE expires_at >= $1) FROM portal_tokens`,
	retention.PortalSignIns:  `SELECT count(*) FILTER (WHERE at < $1), count(*) FILTER (WHERE at >= $1) FROM portal_sign_in_attempts`,
	// Kept: every referral stays; only the buyer data of the old ones goes.
	retention.BuyerData: `SELECT count(*) FILTER (WHERE created_at < $1 AND referee_email || referee_name || referee_external_id <> ''),
  count(*) FILTER (WHERE created_at >= $1 AND referee_email || referee_name || referee_external_id <> '')
FROM referrals`,
}

func countDue(t *testing.T, pool *pgxpool.Pool, plan retention.Plan, now time.Time) (due, kept map[string]int) {
	t.Helper()
	due, kept = map[string]int{}, map[string]int{}
	for _, r := range plan {
		var d, k int
		if err := pool.QueryRow(context.Background(), dueAndKept[r.Kind], r.Cutoff(now)).Scan(&d, &k); err != nil {
			t.Fatalf("count %s: %v", r.Kind, err)
		}
		due[r.Kind], kept[r.Kind] = d, k
	}
	return due, kept
}

// everyKind keeps every configurable kind 30 seconds.
var everyKind = retention.Policy{InboundDeliveries: 30 * time.Second, WebhookAttempts: 30 * time.Second,
	Outbox: 30 * time.Second, ProcessedCommands: 30 * time.Second, BuyerData: 30 * time.Second,
	AuditEvents: 30 * time.Second}

// TestRetentionSweepTakesExactlyWhatIsDue: with every retention at 30
// seconds and batches of 3, a sweep deletes the rows older than that in
// every table (the sessions expired, the sign-in attempts older than a
// day) and clears the buyer data of the old referrals, in statements of
// at most 3 rows until one finds fewer; it keeps the newer rows, a pending
// outbox event, one set aside, and the attempts of an event its endpoint
// still retries; the referrals keep their amounts and statuses; the
// metrics count what went and the time of the sweep.
func TestRetentionSweepTakesExactlyWhatIsDue(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rt := newRetentionTenant(t)
	now := testenv.Now(t)
	rt.seed(t, 7, now.Add(-25*time.Hour))
	rt.seed(t, 2, now.Add(-5*time.Second))
	rt.seed(t, 4, now.Add(time.Hour)) // sessions still live
	old := now.Add(-time.Hour)
	pending, setAside, retried := uuid.New(), uuid.New(), uuid.New()
	rt.exec(t, `INSERT INTO outbox (merchant_id, event_id, member_id, type, payload, created_at, set_aside_at)
VALUES ($1, $2, $4, 'referral.created', '{}', $5, NULL), ($1, $3, $4, 'referral.created', '{}', $5, $5)`,
		rt.merchantID, pending, setAside, rt.memberID, old)
	rt.exec(t, `INSERT INTO outbox_pending (merchant_id, event_id, created_at) VALUES ($1, $2, $3)`, rt.merchantID, pending, old)
	rt.exec(t, `WITH a AS (
  INSERT INTO webhook_attempts (merchant_id, id, webhook_id, event_id, event_type, status, attempt, created_at)
  SELECT merchant_id, gen_random_uuid(), webhook_id, $2, 'referral.created', 'failed', 1, $3 FROM webhook_attempts
  WHERE merchant_id = $1 LIMIT 1 RETURNING merchant_id, webhook_id, event_id)
INSERT INTO webhook_jobs (merchant_id, webhook_id, event_id, event_type, payload, attempts, next_attempt_at)
SELECT merchant_id, webhook_id, event_id, 'referral.created', '\x7b7d', 1, $3 FROM a`, rt.merchantID, retried, old)
	var referrals, orderValues, rewards int64
	sums := `SELECT count(*), sum(order_value), sum(reward_amount) FROM referrals WHERE status = 'rejected'`
	if err := rt.pool.QueryRow(ctx, sums).Scan(&referrals, &orderValues, &rewards); err != nil {
		t.Fatal(err)
	}

	plan := retention.NewPlan(everyKind)
	if len(plan) != len(retention.Kinds()) {
		t.Fatalf("plan %v, want every kind", plan)
	}
	due, kept := countDue(t, rt.pool, plan, now)
	store := newCountingStore(rt.pool)
	reg := prometheus.NewRegistry()
	sweep := &scheduler.Retention{Store: store, Plan: plan, Batch: 3, Metrics: scheduler.NewRetentionMetrics(reg), Log: zap.NewNop()}
	counts, err := sweep.Sweep(ctx, now, 0)
	if err != nil {
		t.Fatal(err)
	}

	gotDue, gotKept := countDue(t, rt.pool, plan, now)
	for _, r := range plan {
		k := r.Kind
		if due[k] < 7 {
			t.Errorf("%s: %d rows due before the sweep, want the 7 old ones at least", k, due[k])
		}
		if gotDue[k] != 0 || gotKept[k] != kept[k] || counts[k] != due[k] {
			t.Errorf("%s: after the sweep %d due (want 0) and %d kept (want %d); it counted %d, want %d",
				k, gotDue[k], gotKept[k], kept[k], counts[k], due[k])
		}
		if got := metricValue(t, reg, "convida_retention_deleted_total", k); got != float64(due[k]) {
			t.Errorf(`convida_retention_deleted_total{table=%q} = %v, want %d`, k, got, due[k])
		}
		checkBatches(t, k, store.batches[k], store.limits[k], due[k])
	}
	if last := metricValue(t, reg, "convida_retention_last_success_timestamp_seconds", ""); last != float64(now.UnixNano())/1e9 {
		t.Errorf("convida_retention_last_success_timestamp_seconds = %v, want the sweep's instant (%v)", last, float64(now.UnixNano())/1e9)
	}

	var left int
	if err := rt.pool.QueryRow(ctx, `SELECT count(*) FROM outbox WHERE event_id IN ($1, $2)`, pending, setAside).Scan(&left); err != nil || left != 2 {
		t.Errorf("pending and set-aside outbox events left: %d (%v), want both", left, err)
	}
	if err := rt.pool.QueryRow(ctx, `SELECT count(*) FROM webhook_attempts WHERE event_id = $1`, retried).Scan(&left); err != nil || left != 1 {
		t.Errorf("attempts of the event still retried: %d (%v), want its one attempt kept", left, err)
	}
	var r2, ov2, rw2 int64
	if err := rt.pool.QueryRow(ctx, sums).Scan(&r2, &ov2, &rw2); err != nil || r2 != referrals || ov2 != orderValues || rw2 != rewards {
		t.Errorf("referrals after the sweep: %d, order values %d, rewards %d (%v); want %d, %d, %d unchanged",
			r2, ov2, rw2, err, referrals, orderValues, rewards)
	}
}

// checkBatches: every statement took at most the batch, all but the last
// a full one, the last fewer, and together the rows due.
func checkBatches(t *testing.T, kind string, batches []int, limit, due int) {
	t.Helper()
	sum := 0
	for i, n := range batches {
		sum += n
		last := i == len(batches)-1
		if n > limit || (!last && n != limit) || (last && n >= limit) {
			t.Errorf("%s: statements took %v rows with batches of %d: want full batches, then one with fewer", kind, batches, limit)
			return
		}
	}
	if sum != due || len(batches) < 3 {
		t.Errorf("%s: statements took %v rows (%d), want the %d due in 3 statements or more", kind, batches, sum, due)
	}
}

// TestRetentionZeroKeepsForever: with every RETENTION_* at 0, a sweep
// deletes no delivery, attempt, event, command id or audit event and clears
// no buyer, however old; it still deletes expired sessions and day-old
// sign-in attempts, which are always due.
func TestRetentionZeroKeepsForever(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rt := newRetentionTenant(t)
	now := testenv.Now(t)
	rt.seed(t, 4, now.Add(-1000*24*time.Hour))
	plan := retention.NewPlan(retention.Policy{})
	if fmt.Sprint(plan) != fmt.Sprint(retention.Plan{{Kind: retention.Sessions}, {Kind: retention.SignInAttempts, Keep: retention.SignInAttemptsKept},
		{Kind: retention.PortalSessions}, {Kind: retention.PortalTokens}, {Kind: retention.PortalSignIns, Keep: retention.SignInAttemptsKept}}) {
		t.Fatalf("plan of a policy of zeros = %v, want the sessions, links and sign-in attempts only", plan)
	}
	sweep := &scheduler.Retention{Store: postgres.NewRetentionStore(rt.pool), Plan: plan, Log: zap.NewNop()}
	counts, err := sweep.Sweep(ctx, now, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{retention.Sessions: 4, retention.SignInAttempts: 4, retention.PortalSessions: 4, retention.PortalTokens: 4,
		retention.PortalSignIns: 4}
	if fmt.Sprint(counts) != fmt.Sprint(want) {
		t.Errorf("swept %v, want %v", counts, want)
	}
	due, _ := countDue(t, rt.pool, retention.NewPlan(everyKind), now)
	for _, kind := range []string{retention.InboundDeliveries, retention.ReconciliationRuns, retention.WebhookAttempts, retention.Outbox,
		retention.ProcessedCommands, retention.AuditEvents, retention.BuyerData} {
		if due[kind] != 4 {
			t.Errorf("%s: %d of the 4 rows of 1,000 days ago left, want all kept", kind, due[kind])
		}
	}
}

// TestRetentionRunsOncePerIntervalAcrossTicks: the task sweeps at its
// first tick, then not before the interval has passed; a sweep larger
// than a tick's budget goes on over the next ticks and ends with one log
// line of its counts and the success gauge; a sweep with nothing due
// writes no line.
func TestRetentionRunsOncePerIntervalAcrossTicks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rt := newRetentionTenant(t)
	now := testenv.Now(t)
	rt.seed(t, 5, now.Add(-time.Hour))
	core, logs := observer.New(zapcore.InfoLevel)
	reg := prometheus.NewRegistry()
	r := &scheduler.Retention{Store: postgres.NewRetentionStore(rt.pool),
		Plan: retention.Plan{{Kind: retention.InboundDeliveries, Keep: 30 * time.Second}}, Metrics: scheduler.NewRetentionMetrics(reg),
		Log: zap.New(core), Interval: time.Hour, Batch: 2, Budget: time.Nanosecond}
	left := func() int {
		var n int
		if err := rt.pool.QueryRow(ctx, `SELECT count(*) FROM inbound_deliveries`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	tick := func(at time.Time, wantLeft int) {
		t.Helper()
		if err := r.Run(ctx, at); err != nil {
			t.Fatal(err)
		}
		if n := left(); n != wantLeft {
			t.Fatalf("tick at %s: %d deliveries left, want %d", at.Sub(now), n, wantLeft)
		}
	}
	// A tick's budget is spent after one full batch: 2, 2, then the last.
	tick(now, 3)
	tick(now.Add(5*time.Second), 1)
	if logs.Len() != 0 || metricValue(t, reg, "convida_retention_last_success_timestamp_seconds", "") != 0 {
		t.Errorf("a sweep under way logged %d lines and set the gauge to %v, want neither", logs.Len(), metricValue(t, reg, "convida_retention_last_success_timestamp_seconds", ""))
	}
	tick(now.Add(10*time.Second), 0)
	entries := logs.TakeAll()
	if len(entries) != 1 || entries[0].ContextMap()[retention.InboundDeliveries] != int64(5) {
		t.Errorf("log after the sweep: %v, want one line with inbound_deliveries=5", entries)
	}
	if metricValue(t, reg, "convida_retention_last_success_timestamp_seconds", "") == 0 {
		t.Error("the success gauge was not set after the sweep")
	}
	// Within the hour, rows due wait; after it they go.
	rt.seed(t, 1, now.Add(-time.Hour))
	tick(now.Add(59*time.Minute), 1)
	tick(now.Add(61*time.Minute), 0)
	tick(now.Add(3*time.Hour), 0)
	if entries := logs.TakeAll(); len(entries) != 1 {
		t.Errorf("log lines of a sweep of one row and one of none: %v, want one", entries)
	}
}

// metricValue reads a counter or gauge of reg; table "" for one without
// the label.
func metricValue(t *testing.T, reg *prometheus.Registry, name, table string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			var label string
			for _, l := range m.GetLabel() {
				if l.GetName() == "table" {
					label = l.GetValue()
				}
			}
			if label != table {
				continue
			}
			if c := m.GetCounter(); c != nil {
				return c.GetValue()
			}
			return m.GetGauge().GetValue()
		}
	}
	t.Fatalf("no metric %s{table=%q}", name, table)
	return 0
}
