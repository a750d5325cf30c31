package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	"github.com/convida/convida/pkg/embeddedbroker"
	"github.com/convida/convida/pkg/postgres"
	"github.com/convida/convida/pkg/program"
	"github.com/convida/convida/pkg/secretbox"
)

// stack is the pipeline under test: in process (broker, ingest, ledger,
// dispatcher) or, with -ingest, only the connections to a running one.
type stack struct {
	pool      *pgxpool.Pool
	box       *secretbox.Box
	rdb       *redis.Client
	deps      *program.Deps // nil with -ingest
	ingestURL string
	apiURL    string       // "" until startAPI
	trace     *ledgerTrace // nil unless -trace-ledger

	broker    *embeddedbroker.Broker
	server    *http.Server // the ingest
	apiServer *http.Server
	dataDir   string
	cancel    context.CancelFunc
	wg        sync.WaitGroup
	ledger    *roleRun  // the ledger and the recorder, which -phased stops and restarts
	guard     *pgx.Conn // holds the advisory lock of claimDatabase
	errMu     sync.Mutex
	errs      []error
}

// claimDatabase connects to the server's postgres database and takes a
// session advisory lock named after the bench database, held until the
// connection closes: two benches on one database would drop it under each
// other. It fails when another bench holds the lock.
func claimDatabase(ctx context.Context, url string) (*pgx.Conn, string, error) {
	pcfg, err := pgxpool.ParseConfig(url) // strips pool_* settings, which the server does not know
	if err != nil {
		return nil, "", err
	}
	cfg := pcfg.ConnConfig
	name := cfg.Database
	cfg.Database = "postgres"
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, "", fmt.Errorf("connect to postgres: %w", err)
	}
	var locked bool
	if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock(hashtext($1))`, "convida-bench:"+name).Scan(&locked); err != nil {
		conn.Close(ctx)
		return nil, "", err
	}
	if !locked {
		conn.Close(ctx)
		return nil, "", fmt.Errorf("another bench is running against database %q; wait for it to end", name)
	}
	return conn, name, nil
}

// resetDatabase drops the bench database and leaves its creation to
// program.Open. validate has checked the name's prefix; it is checked
// again here because this is the statement that destroys data.
func resetDatabase(ctx context.Context, conn *pgx.Conn, name string) error {
	if !strings.HasPrefix(name, dbPrefix) {
		return fmt.Errorf("refusing to drop database %q", name)
	}
	_, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)")
	return err
}

// benchConfig is the configuration of the in-process pipeline, read
// through program.LoadConfig so that every setting bench does not name keeps
// the default a deployment gets.
func benchConfig(o options, dataDir string) (program.Config, error) {
	env := map[string]string{
		"DATABASE_URL":     o.Database,
		"REDIS_URL":        o.Redis,
		"KAFKA_PARTITIONS": strconv.Itoa(o.Partitions),
		"LOG_LEVEL":        "warn",
		"DATA_DIR":         dataDir,
		"SECRETS_KEY":      secretbox.NewKey(),
		"LEDGER_GROUP":     "bench-ledger",
		"DISPATCHER_GROUP": "bench-dispatcher",
		// The dispatch phase's receiver is on loopback, with httptest's
		// certificate.
		"WEBHOOK_ALLOW_PRIVATE_NETWORKS": "true",
		// The redeem phase's Guru and Yampi are local fakes (http, loopback).
		"PLATFORM_ALLOW_PRIVATE_NETWORKS": "true",
	}
	// A run may try another linger of the ledger's transactions.
	if v := os.Getenv("LEDGER_LINGER"); v != "" {
		env["LEDGER_LINGER"] = v
	}
	ca, err := receiverCAFile(dataDir)
	if err != nil {
		return program.Config{}, err
	}
	env["WEBHOOK_CA_FILE"] = ca
	return program.LoadConfig(func(k string) string { return env[k] })
}

// startStack starts the pipeline as program.Standalone wires it, minus the
// scheduler, which the load does not use: an embedded persistent broker,
// program.Open, the ingest router on a loopback listener, the ledger and
// the dispatcher. The API router is started later, by startAPI, for the
// phases that call it.
func startStack(ctx context.Context, o options) (_ *stack, err error) {
	s := &stack{}
	defer func() {
		if err != nil {
			s.close()
		}
	}()
	if s.dataDir, err = os.MkdirTemp("", "convida-bench-"); err != nil {
		return nil, err
	}
	cfg, err := benchConfig(o, s.dataDir)
	if err != nil {
		return nil, err
	}
	log, err := program.NewLogger(cfg.LogLevel)
	if err != nil {
		return nil, err
	}
	s.broker, err = embeddedbroker.Start(embeddedbroker.Config{DataDir: filepath.Join(cfg.DataDir, "kafka"),
		Partitions: cfg.KafkaPartitions, Logger: log.Named("broker")})
	if err != nil {
		return nil, fmt.Errorf("embedded broker: %w", err)
	}
	cfg.KafkaBrokers = s.broker.Addrs()
	if s.deps, err = program.Open(ctx, cfg, log, "bench"); err != nil {
		return nil, err
	}
	s.pool, s.box, s.rdb = s.deps.Pool, s.deps.Box, s.deps.Redis
	if s.server, s.ingestURL, err = s.serveLoopback("ingest", program.IngestRouter(s.deps)); err != nil {
		return nil, err
	}
	roles, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	ledger := program.RunLedger
	if o.TraceLedger {
		s.trace = &ledgerTrace{}
		ledger = s.trace.run
	}
	// The ledger program runs the recorder beside the ledger (cmd/ledger),
	// so -phased stops and restarts both.
	s.ledger = &roleRun{parent: roles, role: func(ctx context.Context, d *program.Deps) error {
		return program.RunRoles(ctx, d, ledger, program.RunRecorder)
	}}
	s.startLedger()
	s.run(roles, "dispatcher", program.RunDispatcher)
	return s, nil
}

// serveLoopback serves h on a fresh loopback port, with the timeouts of
// the programs' servers, and returns the server and its base URL.
func (s *stack) serveLoopback(name string, h http.Handler) (*http.Server, string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout: 30 * time.Second, WriteTimeout: 30 * time.Second, IdleTimeout: 120 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.fail(name, err)
		}
	}()
	return srv, "http://" + ln.Addr().String(), nil
}

// startAPI serves program.APIRouter, the router cmd/api and cmd/standalone
// serve, on a loopback listener (in process only).
func (s *stack) startAPI() (err error) {
	s.apiServer, s.apiURL, err = s.serveLoopback("api", program.APIRouter(s.deps))
	return err
}

// roleRun is a role that can be stopped and started again.
type roleRun struct {
	parent context.Context
	role   program.Role
	cancel context.CancelFunc
	done   chan struct{}
}

// startLedger starts the ledger role (again).
func (s *stack) startLedger() {
	ctx, cancel := context.WithCancel(s.ledger.parent)
	s.ledger.cancel, s.ledger.done = cancel, make(chan struct{})
	done := s.ledger.done
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer close(done)
		if err := s.ledger.role(ctx, s.deps); err != nil && !errors.Is(err, context.Canceled) {
			s.fail("ledger", err)
		}
	}()
}

// stopLedger stops the ledger role and waits until it has left its group.
func (s *stack) stopLedger() {
	s.ledger.cancel()
	<-s.ledger.done
}

// connectStack opens the connections to a running deployment (-ingest):
// its database (neither dropped nor migrated), its secrets key and Redis. No role
// runs here.
func connectStack(ctx context.Context, o options) (_ *stack, err error) {
	s := &stack{ingestURL: strings.TrimRight(o.Ingest, "/")}
	defer func() {
		if err != nil {
			s.close()
		}
	}()
	if s.box, err = secretbox.FromBase64(o.SecretsKey); err != nil {
		return nil, fmt.Errorf("SECRETS_KEY: %w", err)
	}
	if s.pool, err = postgres.Open(ctx, o.Database, 8); err != nil {
		return nil, err
	}
	ropt, err := redis.ParseURL(o.Redis)
	if err != nil {
		return nil, fmt.Errorf("-redis: %w", err)
	}
	s.rdb = redis.NewClient(ropt)
	return s, nil
}

func (s *stack) run(ctx context.Context, name string, role program.Role) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		if err := role(ctx, s.deps); err != nil && !errors.Is(err, context.Canceled) {
			s.fail(name, err)
		}
	}()
}

func (s *stack) fail(name string, err error) {
	s.errMu.Lock()
	defer s.errMu.Unlock()
	s.errs = append(s.errs, fmt.Errorf("%s: %w", name, err))
}

// err returns the first error a role stopped with, or nil.
func (s *stack) err() error {
	s.errMu.Lock()
	defer s.errMu.Unlock()
	return errors.Join(s.errs...)
}

// close stops the servers and the roles, then closes the connections and the
// broker, and removes the broker's data directory.
func (s *stack) close() {
	for _, srv := range []*http.Server{s.apiServer, s.server} {
		if srv != nil {
			shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			_ = srv.Shutdown(shutdown)
			cancel()
		}
	}
	if s.cancel != nil {
		s.cancel()
	}
	s.wg.Wait()
	switch {
	case s.deps != nil:
		s.deps.Close()
	default:
		if s.rdb != nil {
			_ = s.rdb.Close()
		}
		if s.pool != nil {
			s.pool.Close()
		}
	}
	if s.broker != nil {
		s.broker.Close()
	}
	if s.dataDir != "" {
		_ = os.RemoveAll(s.dataDir)
	}
	if s.guard != nil {
		_ = s.guard.Close(context.Background())
	}
}
