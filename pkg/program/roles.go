package program

import (
	"context"
	"net"
	"net/http"
	"time"

	"github.com/gorilla/mux"
	"go.uber.org/zap"

	"github.com/convida/convida/pkg/ingest"
	"github.com/convida/convida/pkg/kafkabus"
	"github.com/convida/convida/pkg/ledger"
	"github.com/convida/convida/pkg/postgres"
	"github.com/convida/convida/pkg/redisx"
	"github.com/convida/convida/pkg/respond"
	"github.com/convida/convida/pkg/topic"
)

// Middleware wraps a consumer's batch handler: a test or the bench
// counts, times or crashes around the production handler.
type Middleware func(next kafkabus.BatchHandler) kafkabus.BatchHandler

// wrap returns h wrapped by mw, or h when mw is nil.
func (mw Middleware) wrap(h kafkabus.BatchHandler) kafkabus.BatchHandler {
	if mw == nil {
		return h
	}
	return mw(h)
}

// consumerGroup is the configuration every consumer role shares: the
// brokers, the topic and its dead-letter topic, the session timeouts, the
// metrics, and the database errors retrying cannot fix (their message is
// dead-lettered instead of retried for ever). maxBatch 0 keeps the runner's default.
func (d *Deps) consumerGroup(groupID, t string, maxBatch int, log *zap.Logger) kafkabus.GroupConfig {
	return kafkabus.GroupConfig{
		Brokers: d.Config.KafkaBrokers, GroupID: groupID, Topic: t, DeadLetterTopic: topic.DeadLetter(t),
		MaxBatch: maxBatch, Logger: log, Metrics: d.Bus, Final: postgres.IsPermanent,
		SessionTimeout: d.Config.KafkaSessionTimeout, RebalanceTimeout: d.Config.KafkaSessionTimeout,
	}
}

// Ledger is the ledger role: it consumes ledger.commands, one goroutine
// per assigned partition, applies each batch in one transaction, relays
// its events, and commits the offsets only after the transaction. Its
// fields are built by NewLedger; a test or the bench replaces some before
// Run (a timed store, a crashing middleware).
type Ledger struct {
	Group    kafkabus.GroupConfig
	Store    ledger.Store
	Relay    ledger.Relayer
	Notifier ledger.Notifier
	Metrics  *ledger.Metrics
	Log      *zap.Logger
	Linger   time.Duration // ledger.Worker.Linger
	// Middleware, when set, wraps the batch handler.
	Middleware Middleware
}

// NewLedger returns the ledger role as production runs it.
func NewLedger(d *Deps) *Ledger {
	return &Ledger{
		Group:    d.consumerGroup(d.Config.LedgerGroup, topic.Commands, d.Config.LedgerMaxBatch, d.Log.Named("ledger")),
		Store:    postgres.NewLedgerStore(d.Pool, d.Now),
		Relay:    d.Relay(),
		Notifier: redisx.NewResults(d.Redis, d.RedisBreaker, d.Log),
		Metrics:  d.Ledger,
		Log:      d.Log.Named("ledger"),
		Linger:   d.Config.LedgerLinger,
	}
}

// Handler returns the batch handler: topic decodes, the worker applies
// in one transaction and relays the events.
func (l *Ledger) Handler() kafkabus.BatchHandler {
	worker := ledger.NewWorker(l.Store, l.Relay, l.Notifier, l.Metrics, l.Log)
	worker.Linger = l.Linger
	return l.Middleware.wrap(topic.CommandsHandler(worker.Handle))
}

// Run consumes until ctx ends.
func (l *Ledger) Run(ctx context.Context) error { return kafkabus.RunGroup(ctx, l.Group, l.Handler()) }

// RunLedger runs the ledger role as production does.
func RunLedger(ctx context.Context, d *Deps) error {
	if err := d.WaitStarted(ctx); err != nil {
		return err
	}
	return NewLedger(d).Run(ctx)
}

// Ingest is the ingest role: the platforms' webhook receivers, which turn
// paid and refunded orders into ledger commands.
type Ingest struct {
	Addr string
	// Listener, when set, is served instead of listening on Addr (the
	// standalone binds its ports before it starts: bind).
	Listener net.Listener
	Now      func() time.Time
	d        *Deps
}

// NewIngest returns the ingest role as production runs it.
func NewIngest(d *Deps) *Ingest { return &Ingest{Addr: d.Config.IngestAddr, Now: d.Now, d: d} }

// Router returns the ingest HTTP handler: the receivers and /healthz.
func (in *Ingest) Router() *mux.Router {
	d, s := in.d, newStores(in.d, in.Now)
	svc := ingest.New(ingest.Config{
		Merchants: s.merchants,
		Coupons:   s.members,
		Dedupe:    s.dedupe,
		Publisher: d.Commands,
		Log:       d.Log.Named("ingest"),
		Now:       in.Now,
		Metrics:   ingest.NewMetrics(d.Registry),
		Limiter:   s.limiter,
		RateLimit: d.Config.IngestRateLimit,
		// A nil *redisx.AuthFailures (AUTH_FAILURE_LIMIT=0) limits nothing.
		AuthFailures: authFailures(d, "ingest"),
		Clients:      d.Config.TrustedProxies,
	})
	r := mux.NewRouter()
	svc.Register(r)
	d.AddHealth(r)
	return r
}

// Run serves on Listener, or else on Addr, until ctx ends. A taken Addr
// is an error naming INGEST_ADDR.
func (in *Ingest) Run(ctx context.Context) error {
	l, err := listenUnlessBound(in.Listener, "INGEST_ADDR", in.Addr)
	if err != nil {
		return err
	}
	return in.d.serveStarting(ctx, "ingest", l, respond.Starting(respond.Admin),
		func() http.Handler { return in.d.instrument("ingest", in.Router()) })
}

// IngestRouter returns the ingest router as production serves it.
func IngestRouter(d *Deps) *mux.Router { return NewIngest(d).Router() }

// RunIngest serves the ingest on INGEST_ADDR until ctx ends.
func RunIngest(ctx context.Context, d *Deps) error { return NewIngest(d).Run(ctx) }

// authFailures returns the failed-authentication limit of an edge
// (AUTH_FAILURE_LIMIT per minute per client address), nil when it is off.
func authFailures(d *Deps, edge string) *redisx.AuthFailures {
	if d.Config.AuthFailureLimit <= 0 {
		return nil
	}
	return redisx.NewAuthFailures(d.Redis, d.RedisBreaker, redisx.AuthFailuresConfig{
		Edge: edge, PerMinute: d.Config.AuthFailureLimit, Registry: d.Registry, Now: d.Now})
}
