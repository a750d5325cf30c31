package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// run is the whole bench: the phases of -mode in order on one pipeline and
// one seeded merchant. It reports whether every phase's verification
// passed.
func run(ctx context.Context, o options, stdout, stderr io.Writer) (bool, error) {
	s, err := open(ctx, o)
	if err != nil {
		return false, err
	}
	defer s.close()
	start := time.Now()
	t, err := seed(ctx, s, o.Members)
	if err != nil {
		return false, fmt.Errorf("seed: %w", err)
	}
	seeding := time.Since(start)
	fmt.Fprintf(stderr, "seeded 1 merchant, 1 campaign and %d members in %v\n", o.Members+1, seeding.Round(time.Millisecond))
	if err := warmUp(ctx, s, t); err != nil {
		return false, err
	}
	pass := true
	record := func(ok bool, err error) error {
		pass = pass && ok
		return err
	}
	if o.Phases.Sales {
		if err := record(runSalesLevels(ctx, s, t, o, seeding, stdout, stderr)); err != nil {
			return false, err
		}
	}
	if o.Phases.needsAPI() {
		if err := openAPI(ctx, s, t); err != nil {
			return false, err
		}
	}
	if o.Phases.Reads {
		if err := record(runReads(ctx, s, t, o, stdout, stderr)); err != nil {
			return false, fmt.Errorf("reads: %w", err)
		}
	}
	if o.Phases.Redeems {
		if err := record(runRedeems(ctx, s, t, o, stdout, stderr)); err != nil {
			return false, fmt.Errorf("redeems: %w", err)
		}
	}
	// Last: the endpoint it creates would otherwise receive the other
	// phases' events and weigh on their figures.
	if o.Phases.Dispatch {
		if err := record(runDispatch(ctx, s, t, o, stdout, stderr)); err != nil {
			return false, fmt.Errorf("dispatch: %w", err)
		}
	}
	return pass, nil
}

// runSalesLevels runs the sales phase once per level of -concurrency: the
// first on t, each other one on a merchant seeded for it, so that every
// run's orders and wallets are its own. With more than one level it ends
// with their figures side by side.
func runSalesLevels(ctx context.Context, s *stack, t *tenant, o options, seeding time.Duration, stdout, stderr io.Writer) (bool, error) {
	pass := true
	var reps []*report
	for i, level := range o.SalesLevels {
		lo := o
		lo.Concurrency = level
		tn := t
		if i > 0 {
			lo.CPUProfile = "" // -cpuprofile is the first level's
			start := time.Now()
			var err error
			if tn, err = seed(ctx, s, o.Members); err != nil {
				return false, fmt.Errorf("seed: %w", err)
			}
			seeding = time.Since(start)
			fmt.Fprintf(stderr, "seeded another merchant for %d senders in %v\n", level, seeding.Round(time.Millisecond))
			if err := warmUp(ctx, s, tn); err != nil {
				return false, err
			}
		}
		rep, err := runSales(ctx, s, tn, lo, seeding, stdout, stderr)
		if err != nil {
			return false, err
		}
		pass = pass && rep.pass()
		reps = append(reps, rep)
	}
	if len(reps) > 1 {
		printLevels(stdout, reps)
	}
	return pass, nil
}

// runSales is the end-to-end sales benchmark (-mode sales) at
// o.Concurrency senders: it posts the orders, waits for their credits,
// verifies every wallet and prints the report.
func runSales(ctx context.Context, s *stack, t *tenant, o options, seeding time.Duration, stdout, stderr io.Writer) (*report, error) {
	rep := &report{Options: o, InProcess: o.Ingest == "", Seeding: seeding}
	bus0, err := readBusMetrics(s)
	if err != nil {
		return nil, err
	}
	if o.RetentionRows > 0 {
		if rep.Retention, err = seedRetention(ctx, s, o.RetentionRows); err != nil {
			return nil, fmt.Errorf("seed the retention backlog: %w", err)
		}
		if !o.RetentionUnpaced {
			rep.Retention.Every = s.deps.Config.SchedulerInterval
		}
		fmt.Fprintf(stderr, "seeded %d rows past their retention in %v\n", rep.Retention.Seeded, rep.Retention.Seeding.Round(time.Millisecond))
	}
	start := time.Now()
	bodies := buildBodies(t, o.Orders)
	rep.Bodies = time.Since(start)

	if err := measure(ctx, s, t, bodies, rep, stderr); err != nil {
		return nil, err
	}
	if rep.Retention != nil {
		rep.Retention.wait()
	}
	rep.RSS = residentBytes()
	if rep.Verified, err = verify(ctx, s.pool, t, rep.Load.Failed); err != nil {
		return nil, fmt.Errorf("verify: %w", err)
	}
	if r := rep.Retention; r != nil && (r.Err != nil || r.deleted() < r.Seeded) {
		rep.Verified.Problems = append(rep.Verified.Problems,
			fmt.Sprintf("retention sweep: %d of the %d rows seeded deleted (%v)", r.deleted(), r.Seeded, r.Err))
	}
	bus1, err := readBusMetrics(s)
	if err != nil {
		return nil, err
	}
	rep.Bus = bus1.minus(bus0)
	if s.trace != nil {
		sum := s.trace.summary()
		rep.Trace = &sum
	}
	rep.RedisKeys = forgetDedupeKeys(ctx, s, t.MerchantID)
	if err := s.err(); err != nil {
		rep.Verified.Problems = append(rep.Verified.Problems, "pipeline: "+err.Error())
	}
	rep.print(stdout)
	return rep, nil
}

// open claims the bench database and returns the stack: in process on a
// freshly dropped database, or the connections to a running deployment.
func open(ctx context.Context, o options) (*stack, error) {
	guard, name, err := claimDatabase(ctx, o.Database)
	if err != nil {
		return nil, err
	}
	var s *stack
	switch {
	case o.Ingest != "":
		s, err = connectStack(ctx, o)
	default:
		if err = resetDatabase(ctx, guard, name); err != nil {
			err = fmt.Errorf("reset database: %w", err)
			break
		}
		s, err = startStack(ctx, o)
	}
	if err != nil {
		_ = guard.Close(ctx)
		return nil, err
	}
	s.guard = guard
	return s, nil
}

// warmUp posts one order for the warm-up member and waits for its credit:
// the ledger has then joined its group and the ingest has loaded the
// merchant's settings, so the clock measures the steady pipeline.
func warmUp(ctx context.Context, s *stack, t *tenant) error {
	snd := newSender(s.ingestURL, t, 1)
	defer snd.close()
	if failure := snd.post(ctx, saleBody(t.GuruToken, warmupOrderID, t.Warmup, -1, time.Now())); failure != "" {
		return fmt.Errorf("warm-up order answered %s", failure)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		var n int
		if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM referrals WHERE merchant_id = $1 AND order_id = $2`,
			t.MerchantID, warmupOrderID).Scan(&n); err != nil {
			return err
		}
		if n == 1 {
			return nil
		}
		if err := s.err(); err != nil {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the warm-up order was not credited within 60s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// measure sends the orders and waits for their credits: the measured
// window, profiled when -cpuprofile is set.
func measure(ctx context.Context, s *stack, t *tenant, bodies [][]byte, rep *report, stderr io.Writer) error {
	o := rep.Options
	stop, err := startProfile(o.CPUProfile)
	if err != nil {
		return err
	}
	defer stop()
	snd := newSender(s.ingestURL, t, o.Concurrency)
	defer snd.close()
	if o.Phased {
		s.stopLedger()
	}
	cpu0 := sampleCPU()
	if rep.Retention != nil {
		rep.Retention.start(ctx, s)
	}
	bar := newBar(stderr, "sent", len(bodies))
	rep.Load = sendAll(ctx, snd, bodies, o.Concurrency, bar)
	_ = bar.Finish()
	var cpuRestart cpuSample
	if o.Phased {
		cpuRestart = sampleCPU()
		rep.SendCPU = cpuBetween(cpu0, cpuRestart, rep.Load.End.Sub(rep.Load.Start))
		rep.LedgerRestart = time.Now()
		s.startLedger()
	}
	want := rep.Load.accepted()
	bar = newBar(stderr, "credited", want)
	rep.Credited, rep.WaitErr = waitCredits(ctx, s.pool, t.MerchantID, want, o.Timeout, bar)
	_ = bar.Finish()
	cpu1, end := sampleCPU(), time.Now()
	if rep.Lat, rep.FirstCommit, rep.LastCommit, err = latencies(ctx, s.pool, t.MerchantID, rep.Load.SentAt); err != nil {
		return fmt.Errorf("read credits: %w", err)
	}
	rep.FirstSend = rep.Load.Start
	for i, at := range rep.Load.SentAt {
		if at != 0 && time.Unix(0, at).Before(rep.FirstSend) {
			rep.FirstSend = time.Unix(0, at)
		}
		if !rep.Load.Failed[i] {
			rep.AckLat = append(rep.AckLat, time.Duration(rep.Load.AckNanos[i]))
		}
	}
	rep.CPU = cpuBetween(cpu0, cpu1, end.Sub(rep.Load.Start))
	if o.Phased {
		rep.DrainCPU = cpuBetween(cpuRestart, cpu1, end.Sub(rep.LedgerRestart))
	}
	return nil
}

// forgetDedupeKeys deletes the ingest's Redis dedupe keys of the run's
// merchant (a fresh merchant each run, so they can never match again) and
// returns how many it deleted.
func forgetDedupeKeys(ctx context.Context, s *stack, merchantID uuid.UUID) int {
	return forgetKeys(ctx, s, "ingest:dedupe:"+merchantID.String()+":*")
}

// forgetKeys deletes the Redis keys matching pattern and returns how many
// it deleted.
func forgetKeys(ctx context.Context, s *stack, pattern string) int {
	if s.rdb == nil {
		return 0
	}
	n := 0
	iter := s.rdb.Scan(ctx, 0, pattern, 1000).Iterator()
	var batch []string
	flush := func() {
		if len(batch) > 0 {
			removed, _ := s.rdb.Unlink(ctx, batch...).Result() // SCAN may return a key twice
			n += int(removed)
		}
		batch = batch[:0]
	}
	for iter.Next(ctx) {
		if batch = append(batch, iter.Val()); len(batch) == 1000 {
			flush()
		}
	}
	flush()
	return n
}

// residentBytes is this process's resident set size (VmRSS of
// /proc/self/status), or 0 where it cannot be read.
func residentBytes() int64 {
	raw, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	return parseVmRSS(string(raw))
}

// parseVmRSS reads the VmRSS line ("VmRSS:	  123456 kB") of a
// /proc/<pid>/status text, in bytes; 0 when absent.
func parseVmRSS(status string) int64 {
	for line := range strings.Lines(status) {
		rest, ok := strings.CutPrefix(line, "VmRSS:")
		if !ok {
			continue
		}
		fields := strings.Fields(rest)
		if len(fields) != 2 || fields[1] != "kB" {
			return 0
		}
		kb, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil {
			return 0
		}
		return kb << 10
	}
	return 0
}

// databaseName is the database of a PostgreSQL URL, "" when it has none.
func databaseName(url string) string {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return ""
	}
	return cfg.Database
}

// startProfile starts a CPU profile into path ("" for none) and returns
// the function that ends it. Only one phase's window can be profiled: the
// sales phase's when it runs, else the dispatch phase's.
func startProfile(path string) (stop func(), err error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}
