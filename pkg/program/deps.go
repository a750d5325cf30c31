package program

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/mux"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"golang.org/x/sync/errgroup"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/kafkabus"
	"github.com/convida/convida/pkg/ledger"
	"github.com/convida/convida/pkg/outbox"
	"github.com/convida/convida/pkg/postgres"
	"github.com/convida/convida/pkg/redisx"
	"github.com/convida/convida/pkg/respond"
	"github.com/convida/convida/pkg/retry"
	"github.com/convida/convida/pkg/secretbox"
	"github.com/convida/convida/pkg/topic"
)

// Deps are the connections every role shares.
type Deps struct {
	Config   Config
	Log      *zap.Logger
	Pool     *pgxpool.Pool
	Redis    *redis.Client
	Box      *secretbox.Box
	Registry *prometheus.Registry
	Now      func() time.Time
	Commands *topic.CommandBus
	Events   *topic.EventBus
	Bus      *kafkabus.Metrics
	Ledger   *ledger.Metrics
	Outbox   *outbox.Metrics

	// RedisBreaker is the one breaker of every Redis user of the process:
	// while Redis is down each of them skips it at once.
	RedisBreaker *redisx.Breaker

	kafka   *kafkabus.Probe // the brokers' answer for /readyz
	started atomic.Bool     // Start prepared PostgreSQL and the topics
	// startedCh is closed when started becomes true (WaitStarted).
	startedOnce, closeOnce sync.Once
	startedCh              chan struct{}
}

// NewLogger returns a JSON logger at level.
func NewLogger(level string) (*zap.Logger, error) {
	cfg := zap.NewProductionConfig()
	lvl, err := zapcore.ParseLevel(level)
	if err != nil {
		return nil, err
	}
	cfg.Level = zap.NewAtomicLevelAt(lvl)
	cfg.EncoderConfig.TimeKey = "time"
	cfg.EncoderConfig.EncodeTime = zapcore.ISO8601TimeEncoder
	return cfg.Build()
}

// New makes the Deps of cfg without reaching any dependency: it checks the
// settings (a missing or malformed one is an error naming it, which Main
// exits 2 with) and makes the pool, the Redis client and its breaker, the
// publishers and the registry, none of which connects before its first
// use. Start waits for the dependencies.
func New(cfg Config, log *zap.Logger, program string) (*Deps, error) {
	if len(cfg.KafkaBrokers) == 0 {
		return nil, errors.New("KAFKA_BROKERS is required (comma-separated host:port list)")
	}
	box, err := NewBox(cfg)
	if err != nil {
		return nil, err
	}
	ropt, err := redis.ParseURL(cfg.RedisURL)
	if err != nil {
		return nil, fmt.Errorf("REDIS_URL: %w", err)
	}
	pool, err := postgres.NewPool(cfg.DatabaseURL, 0) // its error names DATABASE_URL
	if err != nil {
		return nil, err
	}
	rdb := redis.NewClient(redisx.FailFast(ropt))
	brk := redisx.NewBreaker(redisx.BreakerConfig{Ping: redisx.Probe(rdb), Log: log.Named("redis")})
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	d := &Deps{Config: cfg, Log: log, Pool: pool, Redis: rdb, RedisBreaker: brk, Box: box, Registry: reg, Now: time.Now,
		Bus: kafkabus.NewMetrics(reg, program), Ledger: ledger.NewMetrics(reg), Outbox: outbox.NewMetrics(reg),
		kafka: kafkabus.NewProbe(cfg.KafkaBrokers)}
	d.Commands = topic.NewCommandBus(kafkabus.NewWriter(kafkabus.WriterConfig{Brokers: cfg.KafkaBrokers, Topic: topic.Commands, Logger: log, Metrics: d.Bus}))
	d.Events = topic.NewEventBus(kafkabus.NewWriter(kafkabus.WriterConfig{Brokers: cfg.KafkaBrokers, Topic: topic.Events, Logger: log, Metrics: d.Bus}))
	return d, nil
}

// Open is New then Start: the Deps of a test, the bench or a child
// process, ready to use. It waits for the dependencies as long as ctx
// allows.
func Open(ctx context.Context, cfg Config, log *zap.Logger, program string) (*Deps, error) {
	d, err := New(cfg, log, program)
	if err != nil {
		return nil, err
	}
	if err := d.Start(ctx); err != nil {
		d.Close()
		return nil, err
	}
	return d, nil
}

// Start waits until PostgreSQL and the brokers answer, then prepares them
// — creates the database and applies the migrations (under goose's session
// lock, so every program may), creates the topics — and marks the Deps
// started (/readyz). While a dependency does not answer it tries again
// with capped exponential backoff (startBackoff), logging a warning at
// most every retry.OutageWarnEvery (30 s) naming its setting (DATABASE_URL,
// KAFKA_BROKERS); the two are waited for at once. Redis is not waited
// for: without it the service runs degraded (its breaker).
//
// Start returns nil once both are prepared, ctx's error when ctx ends
// first, and at once any error a retry cannot fix (a migration the
// database refuses, credentials it refuses). A check that needs the
// database, such as of stored data against the settings, runs after it.
func (d *Deps) Start(ctx context.Context) error {
	if err := d.RedisBreaker.Do(ctx, redisx.Probe(d.Redis)); err != nil { // down: the breaker opens and probes
		d.Log.Warn("redis unavailable at start; continuing degraded (REDIS_URL)", zap.Error(err))
	}
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		return d.await(gctx, dependency{name: "postgres", setting: "DATABASE_URL", transient: postgres.Unavailable},
			func(ctx context.Context) error {
				if err := postgres.EnsureDatabase(ctx, d.Config.DatabaseURL); err != nil {
					return err
				}
				return postgres.Migrate(ctx, d.Pool)
			})
	})
	g.Go(func() error {
		return d.await(gctx, dependency{name: "kafka", setting: "KAFKA_BROKERS", transient: kafkaUnavailable},
			func(ctx context.Context) error {
				return kafkabus.EnsureTopics(ctx, d.Config.KafkaBrokers, topic.Specs(d.Config.KafkaPartitions)...)
			})
	})
	if err := g.Wait(); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return err
	}
	// A key that cannot open this database's secrets would fail every
	// integration and webhook later, one by one: it stops the program now
	// (postgres.ErrWrongSecretsKey, which Main exits 2 with).
	if err := postgres.CheckSecretsKey(ctx, d.Pool, d.Box); err != nil {
		return err
	}
	d.started.Store(true)
	d.closeOnce.Do(func() { close(d.startedChan()) })
	return nil
}

// dependency is what Start waits for: its name in /readyz and the log,
// the setting that points to it, and which of its errors say it did not
// answer (the others stop the program).
type dependency struct {
	name, setting string
	transient     func(error) bool
}

// Start's patience: the backoff between tries (a warning at most every
// retry.OutageWarnEvery while a dependency does not answer).
const (
	startBackoff = 100 * time.Millisecond
	startMaxWait = 5 * time.Second
)

// await runs prepare until it succeeds, again after each error dep says is
// transient; another error is returned naming the setting.
func (d *Deps) await(ctx context.Context, dep dependency, prepare func(context.Context) error) error {
	waits := &retry.Backoff{Base: startBackoff, Max: startMaxWait}
	warn := &retry.Every{Interval: retry.OutageWarnEvery}
	var since time.Time
	for {
		err := prepare(ctx)
		switch {
		case err == nil:
			if !since.IsZero() {
				d.Log.Info(dep.name+" answers again; starting", zap.String("dependency", dep.name),
					zap.Duration("waited", time.Since(since).Round(time.Millisecond)))
			}
			return nil
		case ctx.Err() != nil:
			return ctx.Err()
		case !dep.transient(err):
			return fmt.Errorf("%s: %w", dep.setting, err)
		}
		if since.IsZero() {
			since = time.Now()
		}
		if warn.Due() {
			d.Log.Warn(dep.name+" does not answer; waiting for it (check "+dep.setting+")", zap.String("dependency", dep.name),
				zap.String("setting", dep.setting), zap.Error(err))
		}
		if retry.Sleep(ctx, waits.Next()) != nil {
			return ctx.Err()
		}
	}
}

// kafkaUnavailable reports whether err of EnsureTopics says the brokers did
// not answer (apperr.Unavailable); an invalid topic spec is not.
func kafkaUnavailable(err error) bool { return apperr.Is(err, apperr.Unavailable) }

// Started reports whether Start has prepared the dependencies.
func (d *Deps) Started() bool { return d.started.Load() }

// WaitStarted waits until Start has prepared the dependencies (nil) or ctx
// ends (its error). The roles Main runs begin with it, since Start runs
// beside them (AfterStart).
func (d *Deps) WaitStarted(ctx context.Context) error {
	select {
	case <-d.startedChan():
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (d *Deps) startedChan() chan struct{} {
	d.startedOnce.Do(func() { d.startedCh = make(chan struct{}) })
	return d.startedCh
}

// Relay returns the outbox relay of every role that publishes committed
// events (the ledger, the member store, the scheduler's sweep): a record
// the broker refuses is set aside with a warning and counted.
func (d *Deps) Relay() *outbox.Relay {
	r := outbox.NewRelay(postgres.NewOutboxStore(d.Pool), d.Events)
	r.Log, r.Metrics = d.Log.Named("outbox"), d.Outbox
	return r
}

// NewBox returns the secrets box of cfg: it seals with SECRETS_KEY and
// opens with it or SECRETS_KEY_PREVIOUS, the key being rotated away from.
// A missing SECRETS_KEY, or either key malformed, is an error naming the
// setting (never its value).
func NewBox(cfg Config) (*secretbox.Box, error) {
	if cfg.SecretsKey == "" {
		return nil, errors.New("SECRETS_KEY is required (base64 of 32 random bytes: openssl rand -base64 32)")
	}
	return secretbox.FromBase64(cfg.SecretsKey, cfg.SecretsKeyPrevious)
}

// Close releases every connection.
func (d *Deps) Close() {
	_ = d.Commands.Close()
	_ = d.Events.Close()
	d.kafka.Close()
	d.RedisBreaker.Close()
	_ = d.Redis.Close()
	d.Pool.Close()
}

// AddHealth adds the public ports' /healthz: a plain "ok" while the
// process serves HTTP. Readiness and metrics tell how the pipeline is
// doing, which is the operator's to know, not a merchant's: they are on
// METRICS_ADDR only (OpsRouter).
func (d *Deps) AddHealth(r *mux.Router) {
	r.HandleFunc("/healthz", serveHealth).Methods(http.MethodGet)
}

func serveHealth(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = w.Write([]byte("ok\n"))
}

// OpsRouter is the operator's router: /healthz, the detailed /readyz and
// /metrics.
func (d *Deps) OpsRouter() *mux.Router {
	r := mux.NewRouter()
	d.AddHealth(r)
	r.HandleFunc("/readyz", d.serveReady).Methods(http.MethodGet)
	r.Handle("/metrics", promhttp.HandlerFor(d.Registry, promhttp.HandlerOpts{})).Methods(http.MethodGet)
	r.NotFoundHandler, r.MethodNotAllowedHandler = respond.Unrouted(r, func(h http.Handler) http.Handler { return h })
	return r
}

// RunOps serves OpsRouter on METRICS_ADDR (by default 127.0.0.1:9090, a
// private interface): every program runs it beside its roles. An address
// already taken (several programs on one host left at the default) is
// logged at error and the program goes on without it: the operator's
// endpoints must never stop the service they observe.
func RunOps(ctx context.Context, d *Deps, name string) error {
	l, err := listen("METRICS_ADDR", d.Config.MetricsAddr)
	if err != nil {
		d.Log.Error("the operator's server is not running: set METRICS_ADDR to a free address (one per program on a host)",
			zap.String("server", name+"-ops"), zap.String("METRICS_ADDR", d.Config.MetricsAddr), zap.Error(err))
		return nil
	}
	return serveOn(ctx, d.Log, name+"-ops", l, d.OpsRouter())
}

// serveReady answers 200 "ready" when every dependency answers, 200
// "degraded" when only Redis is down (the service keeps working without
// it; while the breaker is open Redis is not even asked), 503
// "unavailable" when PostgreSQL or the brokers are down, and 503
// "starting" until Start has prepared them (the program waits for them),
// with the state of each in checks.
func (d *Deps) serveReady(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	checks := map[string]string{"postgres": "ok", "kafka": "ok", "redis": "ok"}
	status, code := "ready", http.StatusOK
	if err := d.Pool.Ping(ctx); err != nil {
		checks["postgres"] = "unavailable"
		status, code = "unavailable", http.StatusServiceUnavailable
	}
	if err := d.kafka.Check(ctx); err != nil {
		checks["kafka"] = "unavailable"
		status, code = "unavailable", http.StatusServiceUnavailable
	}
	if err := d.RedisBreaker.Do(ctx, func(ctx context.Context) error { return d.Redis.Ping(ctx).Err() }); err != nil {
		checks["redis"] = "unavailable"
		if code == http.StatusOK {
			status = "degraded"
		}
	}
	if !d.Started() {
		status, code = "starting", http.StatusServiceUnavailable
	}
	respond.JSON(w, code, map[string]any{"status": status, "checks": checks})
}

// serveStarting serves on l at once (a listener of its caller, bound
// before Start) and, until Start has prepared the dependencies, answers
// every request but /healthz with unready (a 503 with Retry-After); then
// it serves the handler build returns. A platform posting a webhook while
// the program waits for PostgreSQL is told to try again rather than
// refused, and /readyz says ready only once the port is open.
func (d *Deps) serveStarting(ctx context.Context, name string, l net.Listener, unready http.Handler, build func() http.Handler) error {
	starting := http.NewServeMux()
	starting.HandleFunc("GET /healthz", serveHealth)
	starting.Handle("/", unready)
	// The handler is built once, by whichever comes first after Start: the
	// goroutine below or the first request, so no request in between is
	// answered 503.
	var once sync.Once
	var handler http.Handler
	built := func() http.Handler {
		once.Do(func() { handler = build() })
		return handler
	}
	go func() {
		if d.WaitStarted(ctx) == nil {
			built()
		}
	}()
	return serveOn(ctx, d.Log, name, l, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !d.Started() {
			starting.ServeHTTP(w, r)
			return
		}
		built().ServeHTTP(w, r)
	}))
}

// serveOn serves h on l until ctx ends, then drains it.
func serveOn(ctx context.Context, log *zap.Logger, name string, l net.Listener, h http.Handler) error {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second,
		WriteTimeout: 30 * time.Second, IdleTimeout: 120 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(l) }()
	log.Info("listening", zap.String("server", name), zap.String("addr", l.Addr().String()))
	select {
	case err := <-errc:
		return fmt.Errorf("%s server on %s: %w", name, l.Addr(), err)
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return srv.Shutdown(shutdown)
}
