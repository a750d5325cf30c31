package main

import (
	"fmt"
	"io"
	"runtime"
	"time"
)

// report is everything the final report prints.
type report struct {
	Options   options
	InProcess bool
	Tree      string // -compare: the build measured
	Seeding   time.Duration
	Bodies    time.Duration
	Load      *loadResult
	Credited  int
	FirstSend time.Time
	// FirstCommit and LastCommit are the first and last referral
	// created_at of the measured orders.
	FirstCommit time.Time
	LastCommit  time.Time
	// -phased only: when the ledger was started again, and the CPU used
	// while sending and while draining.
	LedgerRestart time.Time
	SendCPU       cpuUse
	DrainCPU      cpuUse
	Lat           []time.Duration
	AckLat        []time.Duration
	CPU           cpuUse
	Bus           busMetrics
	// RSS is the bench process's resident set at the end of the run (0
	// where /proc is not).
	RSS       int64
	Trace     *traceSummary
	Verified  verification
	WaitErr   error
	RedisKeys int
	// Retention is the sweep beside the run (-retention-rows), else nil.
	Retention *retentionSweep
}

func (r *report) pass() bool {
	return r.Verified.pass() && r.WaitErr == nil && len(r.Load.Failures) == 0
}

func (r *report) print(w io.Writer) {
	o := r.Options
	p := func(format string, args ...any) { fmt.Fprintf(w, format+"\n", args...) }
	mode := "in process (embedded broker, ingest on loopback, ledger, dispatcher)"
	switch {
	case r.Tree != "":
		mode = r.Tree + "'s cmd/standalone, its own process (the load generator's CPU is not counted)"
	case !r.InProcess:
		mode = "against " + o.Ingest
	}
	p("")
	p("Convida end-to-end bench — %s", time.Now().Format("2006-01-02 15:04 MST"))
	p("  pipeline              %s", mode)
	p("  orders                %d", o.Orders)
	p("  members               %d", o.Members)
	p("  concurrency           %d HTTP senders", o.Concurrency)
	if r.InProcess {
		p("  partitions            %d", o.Partitions)
	}
	p("  seeding               %v (not measured)", r.Seeding.Round(time.Millisecond))
	p("  bodies built          %v (not measured)", r.Bodies.Round(time.Millisecond))
	send := r.Load.End.Sub(r.Load.Start)
	p("  send duration         %v (%.0f requests/s answered)", send.Round(time.Millisecond), float64(o.Orders)/send.Seconds())
	ap50, ap99, amax := percentiles(r.AckLat)
	p("  HTTP answer latency   p50 %v  p99 %v  max %v", ms(ap50), ms(ap99), ms(amax))
	p("  HTTP not accepted     %d%s", o.Orders-r.Load.accepted(), failuresSuffix(r.Load.Failures))
	p("  credited              %d of %d accepted", r.Credited, r.Load.accepted())
	if r.WaitErr != nil {
		p("  waiting for credits   %v", r.WaitErr)
	}
	p("  end-to-end duration   %v (first send → last credit)", r.LastCommit.Sub(r.FirstSend).Round(time.Millisecond))
	p("  throughput            %.0f orders/s end to end", r.throughput())
	p50, p99, pmax := percentiles(r.Lat)
	p("  order→credit latency  p50 %v  p99 %v  max %v", ms(p50), ms(p99), ms(pmax))
	if r.CPU.Cores > 0 {
		pg := r.CPU.ByName["postgres"]
		p("  CPU (measured window) %.2f of %.0f cores busy: bench process %.2f, postgres %.2f, redis %.2f, rest %.2f",
			r.CPU.Machine, r.CPU.Cores, r.CPU.Bench, pg, r.CPU.ByName["redis-server"],
			max(r.CPU.Others-pg-r.CPU.ByName["redis-server"], 0))
		if r.InProcess {
			p("                        (the bench process holds the load generator, ingest, broker, ledger and dispatcher)")
		}
		if r.Tree != "" {
			p("  service per order     %.0f µs of CPU (%s, %.2f cores)", r.CPU.perOrder(r.CPU.ByName[standaloneCommand], r.Credited),
				standaloneCommand, r.CPU.ByName[standaloneCommand])
		}
		if perSecond := r.throughput(); perSecond > 0 {
			p("  postgres per order    %.0f µs of CPU; its backends of %s %.0f µs (%.2f cores)", pg/perSecond*1e6,
				databaseName(o.Database), r.databaseCPU()/perSecond*1e6, r.databaseCPU())
		}
	}
	if r.RSS > 0 && r.InProcess {
		p("  RSS at the end        %.0f MiB (the bench process, whole pipeline included)", float64(r.RSS)/(1<<20))
	}
	if r.InProcess {
		b := r.Bus
		p("  ledger batches        %d, %.1f commands per batch on average", b.LedgerBatches.Count, b.LedgerBatches.mean())
		p("  ledger transactions   %d, %.1f commands per transaction on average (the batches ready at once share one)",
			b.LedgerTxns.Count, b.LedgerTxns.mean())
		p("  broker publishes      ledger.commands %d (mean %v), events %d (mean %v)",
			b.CommandPublishes.Count, ms(b.CommandPublishes.meanSeconds()), b.EventPublishes.Count, ms(b.EventPublishes.meanSeconds()))
	}
	if t := r.Trace; t != nil {
		p("  ledger trace          %d batches, size p50 %d mean %.1f max %d", t.Batches, t.SizeP50, t.MeanSize, t.SizeMax)
		p("  ApplyBatch            p50 %v  p99 %v  max %v, %v per command, %v in all",
			ms(t.ApplyP50), ms(t.ApplyP99), ms(t.ApplyMax), t.PerCommand.Round(time.Microsecond), t.ApplyTotal.Round(time.Millisecond))
		p("  relay after commit    p50 %v  p99 %v, %v in all", ms(t.RelayP50), ms(t.RelayP99), t.RelayTotal.Round(time.Millisecond))
	}
	if o.Phased {
		r.printPhased(p)
	}
	if r.Retention != nil {
		r.Retention.print(p, r.FirstSend, r.LastCommit)
	}
	p("  redis keys removed    %d", r.RedisKeys)
	p("  go                    %s, GOMAXPROCS %d, %d CPUs", runtime.Version(), runtime.GOMAXPROCS(0), runtime.NumCPU())
	if r.pass() {
		p("  verification          PASS (every wallet = %d × its orders, sum exact, CheckLedger ok)", rewardCents)
		return
	}
	p("  verification          FAIL")
	for _, problem := range r.Verified.Problems {
		p("    %s", problem)
	}
}

// throughput is the orders credited per second, first send to last credit.
func (r *report) throughput() float64 {
	e2e := r.LastCommit.Sub(r.FirstSend)
	if e2e <= 0 {
		return 0
	}
	return float64(r.Credited) / e2e.Seconds()
}

// databaseCPU is the cores used by the PostgreSQL backends of the bench's
// database: on a shared machine, the bench's own share of PostgreSQL.
func (r *report) databaseCPU() float64 {
	return r.CPU.ByName["postgres "+databaseName(r.Options.Database)]
}

// printLevels prints the sales runs of -concurrency side by side.
func printLevels(w io.Writer, reps []*report) {
	p := func(format string, args ...any) { fmt.Fprintf(w, format+"\n", args...) }
	p("")
	p("Sales phase by senders (each run above in full)")
	p("  %7s  %8s  %17s  %19s  %26s  %14s  %7s  %s", "senders", "orders/s", "answer p50/p99",
		"order→credit", "CPU bench/postgres (db)", "commands/txn", "RSS", "verification")
	for _, r := range reps {
		a50, a99, _ := percentiles(r.AckLat)
		c50, c99, _ := percentiles(r.Lat)
		verdict := "PASS"
		if !r.pass() {
			verdict = "FAIL"
		}
		p("  %7d  %8.0f  %17s  %19s  %26s  %14.1f  %4.0fMiB  %s", r.Options.Concurrency, r.throughput(),
			ms(a50)+" / "+ms(a99), ms(c50)+" / "+ms(c99),
			fmt.Sprintf("%.2f / %.2f (%.2f)", r.CPU.Bench, r.CPU.ByName["postgres"], r.databaseCPU()),
			r.Bus.LedgerTxns.mean(), float64(r.RSS)/(1<<20), verdict)
	}
}

// printPhased prints the -phased figures: the ingest on its own (ledger
// stopped) and the ledger draining the backlog on its own.
func (r *report) printPhased(p func(string, ...any)) {
	send := r.Load.End.Sub(r.Load.Start)
	db := "postgres " + databaseName(r.Options.Database)
	sendRate := float64(r.Load.accepted()) / send.Seconds()
	p("  phased: ingest alone  %.0f orders/s answered over %v; CPU %s; backends of the bench's database %.0f µs per order",
		sendRate, send.Round(time.Millisecond), r.SendCPU, r.SendCPU.ByName[db]/sendRate*1e6)
	drain := r.LastCommit.Sub(r.LedgerRestart)
	drainRate := float64(r.Credited) / drain.Seconds()
	p("  phased: ledger alone  %.0f orders/s over %v from restart (group join included), %.0f orders/s from its first credit; "+
		"CPU %s; backends of the bench's database %.0f µs per order",
		drainRate, drain.Round(time.Millisecond), float64(r.Credited)/r.LastCommit.Sub(r.FirstCommit).Seconds(), r.DrainCPU,
		r.DrainCPU.ByName[db]/drainRate*1e6)
}

func (u cpuUse) String() string {
	return fmt.Sprintf("%.2f cores (bench %.2f, postgres %.2f, redis %.2f)", u.Machine, u.Bench, u.ByName["postgres"], u.ByName["redis-server"])
}

func failuresSuffix(m map[string]int) string {
	if len(m) == 0 {
		return ""
	}
	return " (" + failureSummary(m) + ")"
}

func ms(d time.Duration) string {
	return fmt.Sprintf("%.1fms", float64(d)/float64(time.Millisecond))
}
