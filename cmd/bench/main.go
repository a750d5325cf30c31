// Command bench is the end-to-end load test of Convida (`make bench`).
//
// It starts the pipeline in this process the way cmd/standalone does (an
// embedded persistent broker, ingest on a loopback listener, ledger and
// dispatcher consuming the broker) against a database it drops and
// recreates, seeds one merchant with Guru configured, a fixed-reward
// campaign and -members members, then posts -orders signed Guru sales to
// the ingest over HTTP, waits until every credit is committed, and prints
// orders/s and the order-to-credit latency. It then checks every wallet and
// the ledger invariants and exits 1 when they do not hold.
//
// That is -mode sales, the default, at 32 senders; -concurrency 32,512 runs
// it once per level, each level after the first on a freshly seeded
// merchant of the same pipeline, and ends with the levels side by side. -mode adds two benchmarks of the API
// router, served in process on a loopback listener: reads (GET
// /api/v1/wallet/balance at increasing concurrency, reads.go) and redeems
// (POST /api/v1/wallet/redeem round trips through the ledger and the
// dispatcher to a fake Yampi, redeems.go).
//
// -retention-rows N seeds N rows past their retention over the tables the
// retention sweep reads before each sales run, and runs the production sweep
// beside it from the first send (retention.go): the order→credit figures are
// then those of a ledger sharing the database with a sweep.
//
// With -ingest it targets an ingest that is already running instead (see
// docs/benchmarks.md). LEDGER_LINGER in the environment sets the
// in-process ledger's linger (program.Config.LedgerLinger), to compare.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// options are the command line.
type options struct {
	Orders  int
	Members int
	// SalesLevels are the senders of each sales run (-concurrency), in
	// order; Concurrency is the one in use: the first, or the current
	// sales run's.
	SalesLevels []int
	Concurrency int
	Partitions  int
	Database    string
	Redis       string
	Ingest      string // "" runs the pipeline in process
	SecretsKey  string // -ingest only: the deployment's SECRETS_KEY
	Timeout     time.Duration
	CPUProfile  string
	TraceLedger bool
	Phased      bool

	Phases phases // -mode

	ReadLevels   []int         // concurrency of each read level
	ReadDuration time.Duration // how long each read level runs

	Redemptions       int
	RedeemConcurrency int
	Deliveries        int
	PlatformDelay     time.Duration // how late the fake Yampi answers

	// RetentionRows, when positive, seeds that many old rows over the
	// retention tables before each sales run and runs the retention sweep
	// beside it (retention.go).
	RetentionRows int
	// RetentionUnpaced runs that sweep without the scheduler's pauses
	// (the worst case) instead of a tick's budget per SCHEDULER_INTERVAL.
	RetentionUnpaced bool

	// Compare, when set, is the commit whose cmd/standalone the sales
	// phase is run against beside the working tree's, Rounds times each
	// (compare.go).
	Compare string
	Rounds  int
}

// dbPrefix is the prefix a database name must have for bench to touch it.
const dbPrefix = "convida_bench"

func parseOptions(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.IntVar(&o.Orders, "orders", 50000, "Guru sales to post")
	fs.IntVar(&o.Members, "members", 5000, "members the sales are spread over (order i uses member i % members)")
	senders := fs.String("concurrency", "32", "concurrent HTTP senders (one keep-alive connection each); "+
		"a comma-separated list runs the sales phase once per level, each after the first on a fresh merchant")
	fs.IntVar(&o.Partitions, "partitions", 16, "partitions of the ledger.commands and events topics (in-process only)")
	fs.StringVar(&o.Database, "database", "postgres://postgres@127.0.0.1:5432/"+dbPrefix+"?sslmode=disable",
		"PostgreSQL URL; the database name must start with "+dbPrefix+"; in process it is DROPPED and recreated")
	fs.StringVar(&o.Redis, "redis", "redis://127.0.0.1:6379/0", "Redis URL (in process; the run's dedupe keys are deleted at the end)")
	fs.StringVar(&o.Ingest, "ingest", "", "base URL of a running ingest (e.g. http://127.0.0.1:8081); "+
		"then -database is that deployment's database (not dropped) and SECRETS_KEY its key")
	fs.DurationVar(&o.Timeout, "timeout", 5*time.Minute, "how long to wait for the credits after the last send")
	fs.StringVar(&o.CPUProfile, "cpuprofile", "", "write a CPU profile of the measured window (in-process pipeline included; the first sales level's) to this file")
	fs.BoolVar(&o.TraceLedger, "trace-ledger", false, "diagnostic: run the ledger with its store and relay timed (every ApplyBatch and relay)")
	fs.BoolVar(&o.Phased, "phased", false, "diagnostic: stop the ledger while sending and restart it after the last answer, "+
		"to measure the ingest and the ledger each on its own (end-to-end figures are then not meaningful)")
	mode := fs.String("mode", "sales", "what to measure: sales, reads, redeems, dispatch, a comma-separated list of them, or all")
	levels := fs.String("read-concurrency", "1,8,32,128,512", "reads: the concurrent keep-alive clients of each level, comma-separated")
	fs.DurationVar(&o.ReadDuration, "read-duration", 5*time.Second, "reads: how long each level runs")
	fs.IntVar(&o.Redemptions, "redemptions", 2000, "redeems: redemptions of 500 cents to make (redemption j is member j % members's)")
	fs.IntVar(&o.RedeemConcurrency, "redeem-concurrency", 32, "redeems: concurrent API clients")
	fs.IntVar(&o.Deliveries, "deliveries", 100000, "dispatch: webhook deliveries to make, and requests of the bare HTTP loop beside them")
	fs.DurationVar(&o.PlatformDelay, "platform-delay", 0, "redeems: how long the fake Yampi takes to answer each call")
	fs.IntVar(&o.RetentionRows, "retention-rows", 0, "sales: seed this many rows past their retention over the retention "+
		"tables (not measured) and run the retention sweep beside the sales, from the first send (in-process only)")
	fs.BoolVar(&o.RetentionUnpaced, "retention-unpaced", false, "sales: run that sweep without pause (the worst case) "+
		"rather than paced as the scheduler runs it (2 s of work per SCHEDULER_INTERVAL tick)")
	fs.StringVar(&o.Compare, "compare", "", "sales: build this commit's cmd/standalone and the working tree's and run the sales "+
		"phase against each as its own process, alternately (make bench-compare REF=…)")
	fs.IntVar(&o.Rounds, "rounds", 3, "-compare: sales runs per tree")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	var err error
	if o.Phases, err = parsePhases(*mode); err != nil {
		return o, fmt.Errorf("-mode: %w", err)
	}
	if o.ReadLevels, err = parseLevels(*levels); err != nil {
		return o, fmt.Errorf("-read-concurrency: %w", err)
	}
	if o.SalesLevels, err = parseLevels(*senders); err != nil {
		return o, fmt.Errorf("-concurrency: %w", err)
	}
	o.Concurrency = o.SalesLevels[0]
	o.SecretsKey = strings.TrimSpace(os.Getenv("SECRETS_KEY"))
	return o, o.validate()
}

func (o options) validate() error {
	switch {
	case o.Orders < 1:
		return errors.New("-orders must be at least 1")
	case o.Members < 1:
		return errors.New("-members must be at least 1")
	case o.Partitions < 1 || o.Partitions > 1024:
		return errors.New("-partitions must be from 1 to 1024")
	case o.Timeout <= 0:
		return errors.New("-timeout must be positive")
	case o.Ingest != "" && o.SecretsKey == "":
		return errors.New("-ingest needs SECRETS_KEY: the deployment's key, to store the Guru token it can read")
	case o.Ingest != "" && (o.TraceLedger || o.Phased):
		return errors.New("-trace-ledger and -phased need the in-process pipeline (no -ingest)")
	case o.Ingest != "" && (o.Phases.Reads || o.Phases.Redeems || o.Phases.Dispatch):
		return errors.New("-mode reads, redeems and dispatch need the in-process pipeline (no -ingest)")
	case o.Deliveries < 1:
		return errors.New("-deliveries must be at least 1")
	case o.ReadDuration <= 0:
		return errors.New("-read-duration must be positive")
	case o.Redemptions < 1:
		return errors.New("-redemptions must be at least 1")
	case o.RedeemConcurrency < 1:
		return errors.New("-redeem-concurrency must be at least 1")
	case o.PlatformDelay < 0 || o.PlatformDelay > 5*time.Second:
		return errors.New("-platform-delay must be from 0 to 5s")
	case o.Compare != "" && (o.Ingest != "" || o.Phases != phases{Sales: true} || o.RetentionRows > 0 || o.TraceLedger || o.Phased ||
		len(o.SalesLevels) > 1 || o.CPUProfile != ""):
		return errors.New("-compare runs the sales phase alone, at one -concurrency, with no -ingest, -retention-rows, -trace-ledger, -phased or -cpuprofile")
	case o.Compare != "" && o.Rounds < 1:
		return errors.New("-rounds must be at least 1")
	case o.RetentionRows < 0:
		return errors.New("-retention-rows must not be negative")
	case o.RetentionRows > 0 && (o.Ingest != "" || !o.Phases.Sales):
		return errors.New("-retention-rows needs -mode sales and the in-process pipeline (no -ingest)")
	}
	cfg, err := pgx.ParseConfig(o.Database)
	if err != nil {
		return fmt.Errorf("-database: %w", err)
	}
	if !strings.HasPrefix(cfg.Database, dbPrefix) {
		return fmt.Errorf("-database: refusing database %q: its name must start with %s", cfg.Database, dbPrefix)
	}
	return nil
}

func main() {
	opts, err := parseOptions(os.Args[1:], os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench: %v\n", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	runner := run
	if opts.Compare != "" {
		runner = runCompare
	}
	pass, err := runner(ctx, opts, os.Stdout, os.Stderr)
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench: %v\n", err)
		os.Exit(1)
	}
	if !pass {
		os.Exit(1)
	}
}
