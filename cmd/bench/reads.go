package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/convida/convida/pkg/httpapi"
)

// The read warm-up: unmeasured requests before the first level, so that
// the connections of the pool have prepared their statements.
const (
	readWarmupClients  = 8
	readWarmupDuration = time.Second
)

// readTarget is one member's balance read and the answer it must get.
type readTarget struct {
	path     string
	memberID string
	want     httpapi.PublicWallet
}

// readLevel is what one concurrency level measured.
type readLevel struct {
	Clients  int
	Requests int
	Elapsed  time.Duration // first request → last answer
	Lat      []time.Duration
	Failures map[string]int // answers other than 200 with the stored balance, counted
	CPU      cpuUse
}

// readReport is everything the read report prints.
type readReport struct {
	Members   int
	Funding   time.Duration // 0 when the sales phase funded the wallets
	PoolConns int32
	Duration  time.Duration
	Levels    []readLevel
	RedisKeys int
	Problems  []string
}

// runReads is the read benchmark (-mode reads): GET /api/v1/wallet/balance
// of the members, round robin, by closed-loop clients at each level of
// -read-concurrency for -read-duration. Every answer must be 200 with the
// balance stored in the wallets table. Without the sales phase before it,
// each member first gets one sale so that every wallet exists.
func runReads(ctx context.Context, s *stack, t *tenant, o options, stdout, stderr io.Writer) (bool, error) {
	rep := &readReport{Members: len(t.MemberIDs), PoolConns: s.pool.Config().MaxConns, Duration: o.ReadDuration}
	if !o.Phases.Sales {
		all := make([]int, len(t.MemberIDs))
		for i := range all {
			all[i] = i
		}
		var err error
		if rep.Funding, err = postSales(ctx, s, t, o, readOrderPrefix, 1_000_000, all, stderr); err != nil {
			return false, err
		}
	}
	targets, err := readTargets(ctx, s.pool, t)
	if err != nil {
		return false, fmt.Errorf("read stored balances: %w", err)
	}
	c := newAPIClient(s.apiURL, t.APIKey, maxLevel(o.ReadLevels))
	defer c.close()
	warm := readAtLevel(ctx, c, targets, readWarmupClients, readWarmupDuration)
	if len(warm.Failures) > 0 {
		rep.Problems = append(rep.Problems, "warm-up: "+failureSummary(warm.Failures))
	}
	for _, n := range o.ReadLevels {
		fmt.Fprintf(stderr, "reads    %d clients for %v\n", n, o.ReadDuration)
		level := readAtLevel(ctx, c, targets, n, o.ReadDuration)
		if len(level.Failures) > 0 {
			rep.Problems = append(rep.Problems, fmt.Sprintf("%d clients: %s", n, failureSummary(level.Failures)))
		}
		rep.Levels = append(rep.Levels, level)
		if ctx.Err() != nil {
			return false, ctx.Err()
		}
	}
	if rep.Funding > 0 {
		rep.RedisKeys = forgetDedupeKeys(ctx, s, t.MerchantID)
	}
	if err := s.err(); err != nil {
		rep.Problems = append(rep.Problems, "pipeline: "+err.Error())
	}
	rep.print(stdout)
	return len(rep.Problems) == 0, nil
}

func maxLevel(levels []int) int {
	m := 0
	for _, n := range levels {
		m = max(m, n)
	}
	return m
}

// readTargets returns every member's balance read with the balance its
// wallet row holds now (zero without a row); nothing writes to the wallets
// while the reads run.
func readTargets(ctx context.Context, pool *pgxpool.Pool, t *tenant) ([]readTarget, error) {
	stored := map[uuid.UUID]httpapi.PublicWallet{}
	rows, err := pool.Query(ctx, `SELECT member_id, pending, available, total_earned, total_redeemed, cancelled
FROM wallets WHERE merchant_id = $1`, t.MerchantID)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var id uuid.UUID
		var w httpapi.PublicWallet
		if err := rows.Scan(&id, &w.Pending, &w.Available, &w.TotalEarned, &w.TotalRedeemed, &w.Cancelled); err != nil {
			rows.Close()
			return nil, err
		}
		stored[id] = w
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	targets := make([]readTarget, len(t.MemberIDs))
	for i, id := range t.MemberIDs {
		targets[i] = readTarget{path: "/api/v1/wallet/balance?email=" + url.QueryEscape(t.Emails[i]),
			memberID: id.String(), want: stored[id]}
	}
	return targets, nil
}

// readAtLevel runs clients closed-loop clients for d: each sends the next
// target's read as soon as it has the previous answer.
func readAtLevel(ctx context.Context, c *apiClient, targets []readTarget, clients int, d time.Duration) readLevel {
	var next atomic.Int64
	lats := make([][]time.Duration, clients)
	fails := make([]map[string]int, clients)
	var wg sync.WaitGroup
	cpu0 := sampleCPU()
	start := time.Now()
	deadline := start.Add(d)
	for w := range clients {
		fails[w] = map[string]int{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil && time.Now().Before(deadline) {
				tg := &targets[int(next.Add(1)-1)%len(targets)]
				t0 := time.Now()
				failure := readBalance(ctx, c, tg)
				lats[w] = append(lats[w], time.Since(t0))
				if failure != "" {
					fails[w][failure]++
				}
			}
		}()
	}
	wg.Wait()
	l := readLevel{Clients: clients, Elapsed: time.Since(start), Failures: map[string]int{}}
	l.CPU = cpuBetween(cpu0, sampleCPU(), l.Elapsed)
	for w := range clients {
		l.Lat = append(l.Lat, lats[w]...)
		for k, n := range fails[w] {
			l.Failures[k] += n
		}
	}
	l.Requests = len(l.Lat)
	return l
}

// readBalance sends one read and returns "" when the answer is 200 with
// the member's stored balance, else what was wrong.
func readBalance(ctx context.Context, c *apiClient, tg *readTarget) string {
	status, raw, err := c.call(ctx, http.MethodGet, tg.path, nil, "")
	switch {
	case err != nil:
		return "transport error"
	case status != http.StatusOK:
		return answerFailure(status, raw)
	}
	var got httpapi.BalanceResponse
	if err := json.Unmarshal(raw, &got); err != nil {
		return "200 undecodable"
	}
	if got.Data.MemberID != tg.memberID || got.Data.Balance != tg.want {
		return "200 with another balance"
	}
	return ""
}

func (r *readReport) print(w io.Writer) {
	p := func(format string, args ...any) { fmt.Fprintf(w, format+"\n", args...) }
	p("")
	p("Convida read bench: GET /api/v1/wallet/balance — %s", time.Now().Format("2006-01-02 15:04 MST"))
	p("  api                   program.APIRouter in process on loopback, X-API-Key; rate limiter on (merchant limit %d/s)", apiRateLimit)
	if r.Funding > 0 {
		p("  members               %d, read round robin; each funded with one sale first (%v, not measured)", r.Members, r.Funding.Round(time.Millisecond))
	} else {
		p("  members               %d, read round robin; wallets as the sales phase left them", r.Members)
	}
	p("  each level            %v of closed-loop clients, one keep-alive connection each (warm-up: %d clients for %v, not measured)",
		r.Duration, readWarmupClients, readWarmupDuration)
	p("  postgres pool         %d connections (the pool of program.Open, shared with the ledger and the ingest)", r.PoolConns)
	p("  clients    requests  requests/s    p50        p99        max        CPU busy of %.0f cores: machine / bench process / postgres / redis / rest",
		cpuCores(r.Levels))
	for _, l := range r.Levels {
		p50, p99, pmax := percentiles(l.Lat)
		pg, rd := l.CPU.ByName["postgres"], l.CPU.ByName["redis-server"]
		p("  %7d  %10d  %10.0f    %-9s  %-9s  %-9s  %.2f / %.2f / %.2f / %.2f / %.2f", l.Clients, l.Requests,
			float64(l.Requests)/l.Elapsed.Seconds(), ms(p50), ms(p99), ms(pmax),
			l.CPU.Machine, l.CPU.Bench, pg, rd, max(l.CPU.Others-pg-rd, 0))
	}
	if r.Funding > 0 {
		p("  redis keys removed    %d", r.RedisKeys)
	}
	p("  go                    %s, GOMAXPROCS %d, %d CPUs", runtime.Version(), runtime.GOMAXPROCS(0), runtime.NumCPU())
	if len(r.Problems) == 0 {
		p("  verification          PASS (every answer 200 with the member's balance as stored)")
		return
	}
	p("  verification          FAIL")
	for _, problem := range r.Problems {
		p("    %s", problem)
	}
}

// cpuCores is the machine's core count as the CPU samples saw it.
func cpuCores(levels []readLevel) float64 {
	for _, l := range levels {
		if l.CPU.Cores > 0 {
			return l.CPU.Cores
		}
	}
	return float64(runtime.NumCPU())
}
