package main

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	dto "github.com/prometheus/client_model/go"

	"github.com/convida/convida/pkg/postgres"
	"github.com/convida/convida/pkg/procstat"
)

// pollEvery is how often the referral count is read while waiting.
const pollEvery = 100 * time.Millisecond

// countCredits returns how many of the bench's orders have a referral.
func countCredits(ctx context.Context, pool *pgxpool.Pool, merchantID uuid.UUID) (int, error) {
	var n int
	err := pool.QueryRow(ctx, `SELECT count(*) FROM referrals WHERE merchant_id = $1 AND order_id <> $2`,
		merchantID, warmupOrderID).Scan(&n)
	return n, err
}

// waitCredits polls until want orders are credited or timeout passes, and
// returns the last count.
func waitCredits(ctx context.Context, pool *pgxpool.Pool, merchantID uuid.UUID, want int, timeout time.Duration, bar progressBar) (int, error) {
	deadline := time.Now().Add(timeout)
	for {
		n, err := countCredits(ctx, pool, merchantID)
		if err != nil {
			return n, err
		}
		_ = bar.Set(n)
		if n >= want {
			return n, nil
		}
		if time.Now().After(deadline) {
			return n, fmt.Errorf("timed out after %v with %d of %d orders credited", timeout, n, want)
		}
		select {
		case <-ctx.Done():
			return n, ctx.Err()
		case <-time.After(pollEvery):
		}
	}
}

// latencies reads every credited order's referral created_at (the ledger's
// clock while it applied the batch) and returns created_at − sent_at per
// order and the first and last created_at.
func latencies(ctx context.Context, pool *pgxpool.Pool, merchantID uuid.UUID, sentAt []int64) (out []time.Duration, first, last time.Time, err error) {
	rows, err := pool.Query(ctx, `SELECT order_id, created_at FROM referrals WHERE merchant_id = $1`, merchantID)
	if err != nil {
		return nil, first, last, err
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var at time.Time
		if err := rows.Scan(&id, &at); err != nil {
			return nil, first, last, err
		}
		if id == warmupOrderID {
			continue
		}
		i, err := strconv.Atoi(strings.TrimPrefix(id, "bench-"))
		if err != nil || i < 0 || i >= len(sentAt) {
			return nil, first, last, fmt.Errorf("unexpected order id %q", id)
		}
		out = append(out, at.Sub(time.Unix(0, sentAt[i])))
		if at.After(last) {
			last = at
		}
		if first.IsZero() || at.Before(first) {
			first = at
		}
	}
	return out, first, last, rows.Err()
}

// percentiles sorts ds and returns its p50, p99 and max (nearest rank).
func percentiles(ds []time.Duration) (p50, p99, maximum time.Duration) {
	if len(ds) == 0 {
		return 0, 0, 0
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	rank := func(p float64) time.Duration {
		i := int(p*float64(len(ds))+0.999999) - 1
		return ds[min(max(i, 0), len(ds)-1)]
	}
	return rank(0.50), rank(0.99), ds[len(ds)-1]
}

// verification is the result of verify.
type verification struct {
	Problems []string
}

func (v verification) pass() bool { return len(v.Problems) == 0 }

// verify checks that every member's wallet holds exactly rewardCents per
// accepted order of the member as pending, that the merchant's total is
// rewardCents × accepted orders, that every referral is pending with the
// reward, and that the ledger invariants hold (postgres.CheckLedger).
func verify(ctx context.Context, pool *pgxpool.Pool, t *tenant, failed []bool) (verification, error) {
	var v verification
	want := make(map[uuid.UUID]int64, len(t.MemberIDs)+1)
	var wantTotal int64
	for i, f := range failed {
		if !f {
			want[t.MemberIDs[i%len(t.MemberIDs)]] += rewardCents
			wantTotal += rewardCents
		}
	}
	want[t.WarmupID] += rewardCents
	wantTotal += rewardCents
	rows, err := pool.Query(ctx, `SELECT m.id, COALESCE(w.pending, 0), COALESCE(w.available, 0)
FROM members m LEFT JOIN wallets w ON w.merchant_id = m.merchant_id AND w.member_id = m.id
WHERE m.merchant_id = $1`, t.MerchantID)
	if err != nil {
		return v, err
	}
	var total int64
	wrong := 0
	for rows.Next() {
		var id uuid.UUID
		var pending, available int64
		if err := rows.Scan(&id, &pending, &available); err != nil {
			rows.Close()
			return v, err
		}
		total += pending
		if pending != want[id] || available != 0 {
			if wrong++; wrong <= 5 {
				v.Problems = append(v.Problems, fmt.Sprintf("member %s: pending %d available %d, want pending %d", id, pending, available, want[id]))
			}
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return v, err
	}
	if wrong > 5 {
		v.Problems = append(v.Problems, fmt.Sprintf("… %d members wrong in all", wrong))
	}
	if total != wantTotal {
		v.Problems = append(v.Problems, fmt.Sprintf("sum of pending %d, want %d", total, wantTotal))
	}
	var bad int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM referrals WHERE merchant_id = $1
  AND (status <> 'pending' OR reward_amount <> $2 OR order_value <> $3)`, t.MerchantID, rewardCents, orderCents).Scan(&bad); err != nil {
		return v, err
	}
	if bad > 0 {
		v.Problems = append(v.Problems, fmt.Sprintf("%d referrals not pending with reward %d on an order of %d", bad, rewardCents, orderCents))
	}
	if err := postgres.CheckLedger(ctx, pool); err != nil {
		v.Problems = append(v.Problems, "CheckLedger: "+err.Error())
	}
	return v, nil
}

// busMetrics are the kafkabus and ledger figures of the in-process
// pipeline: counts and sums since it started, so that the figures of one
// sales run are the difference of two readings.
type busMetrics struct {
	LedgerBatches, LedgerTxns        histogramSum // commands per partition batch, per transaction
	CommandPublishes, EventPublishes histogramSum // seconds per publish
}

// histogramSum is a histogram's sample count and sum.
type histogramSum struct {
	Count uint64
	Sum   float64
}

func (h histogramSum) mean() float64 { return h.Sum / float64(max(h.Count, 1)) }

func (h histogramSum) meanSeconds() time.Duration {
	return time.Duration(h.mean() * float64(time.Second))
}

func (h histogramSum) minus(o histogramSum) histogramSum {
	return histogramSum{Count: h.Count - o.Count, Sum: h.Sum - o.Sum}
}

// minus returns the figures between reading o and reading m.
func (m busMetrics) minus(o busMetrics) busMetrics {
	return busMetrics{
		LedgerBatches: m.LedgerBatches.minus(o.LedgerBatches), LedgerTxns: m.LedgerTxns.minus(o.LedgerTxns),
		CommandPublishes: m.CommandPublishes.minus(o.CommandPublishes), EventPublishes: m.EventPublishes.minus(o.EventPublishes),
	}
}

// readBusMetrics reads the kafkabus and ledger histograms from the
// registry of the in-process pipeline.
func readBusMetrics(s *stack) (busMetrics, error) {
	var m busMetrics
	if s.deps == nil {
		return m, nil
	}
	families, err := s.deps.Registry.Gather()
	if err != nil {
		return m, err
	}
	for _, f := range families {
		for _, metric := range f.GetMetric() {
			h := metric.GetHistogram()
			if h == nil {
				continue
			}
			sum := histogramSum{Count: h.GetSampleCount(), Sum: h.GetSampleSum()}
			switch {
			case f.GetName() == "kafkabus_batch_size" && label(metric, "group") == "bench-ledger":
				m.LedgerBatches = sum
			case f.GetName() == "convida_ledger_transaction_commands":
				m.LedgerTxns = sum
			case f.GetName() == "kafkabus_publish_seconds" && label(metric, "topic") == "ledger.commands":
				m.CommandPublishes = sum
			case f.GetName() == "kafkabus_publish_seconds" && label(metric, "topic") == "events":
				m.EventPublishes = sum
			}
		}
	}
	return m, nil
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// cpuSample is the machine's and this process's CPU time at one moment
// (Linux; zero elsewhere).
type cpuSample struct {
	busy, total time.Duration                    // machine, from /proc/stat
	self        time.Duration                    // this process, user + system
	byName      map[string]map[int]time.Duration // watched commands: pid → CPU time
}

// watched are the processes whose CPU the report shows apart.
var watched = []string{"postgres", "redis-server"}

func sampleCPU() cpuSample {
	var s cpuSample
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		s.self = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	s.byName = processCPU(watched)
	raw, err := os.ReadFile("/proc/stat")
	if err != nil {
		return s
	}
	line, _, _ := strings.Cut(string(raw), "\n")
	fields := strings.Fields(line)
	if len(fields) < 5 || fields[0] != "cpu" {
		return s
	}
	const tick = 10 * time.Millisecond // USER_HZ 100
	for i, f := range fields[1:] {
		n, _ := strconv.ParseInt(f, 10, 64)
		s.total += time.Duration(n) * tick
		if i != 3 && i != 4 { // idle, iowait
			s.busy += time.Duration(n) * tick
		}
	}
	return s
}

// processCPU returns the CPU time of every process whose command is one
// of names, by name and pid; a PostgreSQL backend counts also under
// "postgres <database>".
func processCPU(names []string) map[string]map[int]time.Duration {
	out := map[string]map[int]time.Duration{}
	for _, p := range procstat.ByCommand(names...) {
		add(out, p.Command, p.PID, p.CPU)
		if p.Command == "postgres" {
			if db := backendDatabase(strconv.Itoa(p.PID)); db != "" {
				add(out, "postgres "+db, p.PID, p.CPU)
			}
		}
	}
	return out
}

func add(out map[string]map[int]time.Duration, name string, pid int, used time.Duration) {
	if out[name] == nil {
		out[name] = map[int]time.Duration{}
	}
	out[name][pid] = used
}

// backendDatabase returns the database of a PostgreSQL backend, or "" for
// the server's own processes. On a machine shared with other databases it
// tells the bench's own share of PostgreSQL's CPU.
func backendDatabase(pid string) string {
	raw, err := os.ReadFile("/proc/" + pid + "/cmdline")
	if err != nil {
		return ""
	}
	return titleDatabase(strings.ReplaceAll(string(raw), "\x00", " "))
}

// titleDatabase reads the database of a backend's process title
// ("postgres: 15/main: user database host(port) state"), "" when the
// title is not a backend's.
func titleDatabase(title string) string {
	fields := strings.Fields(title)
	for i, f := range fields {
		if i >= 2 && (f == "[local]" || strings.HasSuffix(f, ")") && strings.Contains(f, "(")) { // host(port)
			return fields[i-1]
		}
	}
	return ""
}

// cpuUse is the CPU used between two samples, in cores busy on average.
type cpuUse struct {
	Machine, Bench, Others float64
	Cores                  float64
	ByName                 map[string]float64 // watched processes
	Window                 time.Duration      // the wall time between the samples
}

// perOrder is cores busy over the window spent per order, in µs.
func (u cpuUse) perOrder(cores float64, orders int) float64 {
	if orders <= 0 {
		return 0
	}
	return cores * u.Window.Seconds() / float64(orders) * 1e6
}

func cpuBetween(a, b cpuSample, wall time.Duration) cpuUse {
	if wall <= 0 || b.total <= a.total {
		return cpuUse{}
	}
	u := cpuUse{
		Cores:   (b.total - a.total).Seconds() / wall.Seconds(),
		Machine: (b.busy - a.busy).Seconds() / wall.Seconds(),
		Bench:   (b.self - a.self).Seconds() / wall.Seconds(),
		ByName:  map[string]float64{},
		Window:  wall,
	}
	u.Others = max(u.Machine-u.Bench, 0)
	for name, pids := range b.byName {
		var used time.Duration
		for pid, t := range pids {
			used += t - a.byName[name][pid] // a process started in the window counts from 0
		}
		u.ByName[name] = used.Seconds() / wall.Seconds()
	}
	return u
}
