package ledger

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/convida/convida/pkg/fraud"
	"github.com/convida/convida/pkg/ids"
	"github.com/convida/convida/pkg/outbox"
	"github.com/convida/convida/pkg/redemption"
)

// Store applies a batch of commands in one transaction (pkg/postgres).
type Store interface {
	ApplyBatch(ctx context.Context, cmds []Command) (*Book, error)
}

// Relayer publishes committed outbox records (outbox.Relay). A record the
// broker refuses for itself is set aside there, not returned as an error,
// so the batch's other events are published at once; an error is
// transient and leaves the records to the outbox sweep.
type Relayer interface {
	Relay(ctx context.Context, recs []outbox.Record) error
}

// Notifier tells waiting callers (the API) the outcomes of their commands.
// It is best effort: callers fall back to reading processed_commands.
type Notifier interface {
	Notify(ctx context.Context, outcomes []Outcome)
}

// Worker applies the batches of the partitions a ledger process owns.
//
// Batches that partitions hand it at the same moment share one transaction
// (group commit): with 16 partitions each partition's batch is small, and a
// transaction costs a dozen statements and a commit whatever its size, so
// one transaction per partition batch spends PostgreSQL on per-statement
// work. Merging is safe because a partition has at most one batch in flight
// and a member's commands all travel on one partition: the batches of one
// transaction touch disjoint members, each in its partition's order.
type Worker struct {
	store    Store
	relay    Relayer
	notifier Notifier
	metrics  *Metrics
	log      *zap.Logger
	// Linger is how long a transaction holding fewer than LingerCommands
	// commands waits for more partition batches before it starts (zero:
	// never). At a modest arrival rate the partitions' batches are a few
	// commands each and come one by one, and without it each would get a
	// transaction of its own. Set both before the first Handle.
	Linger         time.Duration
	LingerCommands int

	start      sync.Once
	queue      chan pending
	collecting sync.Mutex  // one transaction collects its batches at a time
	retries    *relayRetry // the events of a relay that failed after its commit
}

// pending is a partition batch waiting for its transaction.
type pending struct {
	ctx  context.Context
	cmds []Command
	done chan error
}

// Group commit: transactions in flight at once, partition batches at most
// in one, and the defaults of Linger and LingerCommands.
const (
	groupTransactions     = 3
	groupBatches          = 16
	DefaultLinger         = 20 * time.Millisecond
	DefaultLingerCommands = 256
)

// NewWorker returns a Worker with the default linger; notifier and metrics
// may be nil.
func NewWorker(store Store, relay Relayer, notifier Notifier, metrics *Metrics, log *zap.Logger) *Worker {
	// The disposable-domain list takes tens of milliseconds to load: in the
	// background now, rather than in the first batch's transaction.
	go fraud.Warm()
	return &Worker{store: store, relay: relay, notifier: notifier, metrics: metrics, log: log,
		Linger: DefaultLinger, LingerCommands: DefaultLingerCommands,
		queue: make(chan pending, groupTransactions*groupBatches), retries: newRelayRetry(relay, log)}
}

// Handle applies cmds, the next batch of one partition, in one transaction,
// maybe shared with other partitions' batches, then relays their events. It
// is safe to call again with the same commands: applied ones are skipped.
// An error means nothing of cmds was committed and the batch must be
// retried; a relay failure after the commit is not an error: the worker
// relays those events again in the background within a second or two
// (relayRetry), and the outbox sweep relays whatever it could not. When ctx ends first Handle returns its error, and
// the batch may still be committed: the caller abandons it uncommitted in
// Kafka, and its redelivery is skipped.
func (w *Worker) Handle(ctx context.Context, cmds []Command) error {
	w.start.Do(func() {
		for range groupTransactions {
			go w.transactions()
		}
	})
	p := pending{ctx: ctx, cmds: cmds, done: make(chan error, 1)}
	select {
	case w.queue <- p:
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case err := <-p.done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// transactions is one of the groupTransactions loops: collect, apply,
// answer each batch's caller.
func (w *Worker) transactions() {
	for {
		batches := w.collect()
		cmds := make([][]Command, len(batches))
		for i, p := range batches {
			cmds[i] = p.cmds
		}
		// The transaction outlives any one caller's context: others wait on it.
		errs := w.applyTogether(context.WithoutCancel(batches[0].ctx), cmds)
		for i, p := range batches {
			p.done <- errs[i]
		}
	}
}

// collect takes the next transaction's batches: the first to arrive, then
// every one already queued, up to groupBatches. While they hold fewer than
// LingerCommands commands it waits up to Linger after the first for more.
// One loop collects at a time, so that while it lingers the batches
// arriving join its transaction instead of starting others; under load the
// queue holds LingerCommands at once and nothing waits.
func (w *Worker) collect() []pending {
	w.collecting.Lock()
	defer w.collecting.Unlock()
	first := <-w.queue
	batches, n := []pending{first}, len(first.cmds)
	var timeout <-chan time.Time
	for len(batches) < groupBatches {
		select {
		case p := <-w.queue:
			batches, n = append(batches, p), n+len(p.cmds)
			continue
		default:
		}
		if n >= w.LingerCommands || w.Linger <= 0 {
			break
		}
		if timeout == nil {
			t := time.NewTimer(w.Linger)
			defer t.Stop()
			timeout = t.C
		}
		select {
		case p := <-w.queue:
			batches, n = append(batches, p), n+len(p.cmds)
		case <-timeout:
			return batches
		}
	}
	return batches
}

// applyTogether applies the batches in one transaction. When that fails,
// each batch is applied alone, so that an error (a command the database
// refuses for good, say) is returned to the partition that sent it and the
// others go on.
func (w *Worker) applyTogether(ctx context.Context, batches [][]Command) []error {
	errs := make([]error, len(batches))
	if len(batches) == 1 {
		errs[0] = w.apply(ctx, batches[0])
		return errs
	}
	var all []Command
	for _, b := range batches {
		all = append(all, b...)
	}
	if err := w.apply(ctx, all); err == nil {
		return errs
	}
	for i, b := range batches {
		errs[i] = w.apply(ctx, b)
	}
	return errs
}

func (w *Worker) apply(ctx context.Context, cmds []Command) error {
	book, err := w.store.ApplyBatch(ctx, cmds)
	if err != nil {
		return err
	}
	w.metrics.committed(len(cmds))
	if err := w.relay.Relay(ctx, book.Records); err != nil {
		queued := w.retries.add(book.Records)
		w.log.Warn("relay after commit failed; relaying again in the background (the outbox sweep publishes what is left)",
			zap.Int("events", len(book.Records)), zap.Int("queued", queued), zap.Error(err))
	}
	if w.notifier != nil {
		var awaited []Outcome
		for _, o := range book.Outcomes {
			if Awaited(o.Kind) {
				awaited = append(awaited, o)
			}
		}
		w.notifier.Notify(ctx, awaited)
	}
	w.logOutcomes(book.Outcomes)
	return nil
}

// logOutcomes writes an info line per committed command that changed
// something or was refused (a no-op is a debug line), with the API's
// prefixed ids. With info off it costs a level check per batch.
func (w *Worker) logOutcomes(outcomes []Outcome) {
	if w.log == nil || !w.log.Core().Enabled(zapcore.InfoLevel) {
		return
	}
	for _, o := range outcomes {
		var res struct {
			ReferralID   uuid.UUID `json:"referral_id"`
			RedemptionID uuid.UUID `json:"redemption_id"`
			Status       string    `json:"status"`
		}
		if len(o.Result) > 0 {
			_ = json.Unmarshal(o.Result, &res) // best effort: the line goes out without the ids
		}
		level, msg := zapcore.InfoLevel, appliedMessages[o.Kind]
		switch {
		case o.Status == OutcomeRejected:
			msg = "ledger command refused"
		case o.Status != OutcomeApplied:
			level, msg = zapcore.DebugLevel, "ledger command without effect"
		case o.Kind == CmdRedemptionResult && res.Status == redemption.StatusCompleted:
			msg = "redemption completed"
		case o.Kind == CmdRedemptionResult && res.Status == redemption.StatusFailed:
			msg = "redemption failed"
		case msg == "":
			msg = "ledger command applied"
		}
		ce := w.log.Check(level, msg)
		if ce == nil {
			continue
		}
		fields := []zap.Field{zap.String("merchant", o.MerchantID.String()),
			zap.String("member", ids.Format(ids.Member, o.MemberID)), zap.String("command", o.CommandID),
			zap.String("kind", o.Kind), zap.String("reason", o.Reason)}
		if o.ErrorCode != "" {
			fields = append(fields, zap.String("code", o.ErrorCode))
		}
		if res.ReferralID != uuid.Nil {
			fields = append(fields, zap.String("referral", ids.Format(ids.Referral, res.ReferralID)))
		}
		if res.RedemptionID != uuid.Nil {
			fields = append(fields, zap.String("redemption", ids.Format(ids.Redemption, res.RedemptionID)))
		}
		if res.Status != "" {
			fields = append(fields, zap.String("state", res.Status)) // not "status": the access lines' is a number
		}
		ce.Write(fields...)
	}
}

// appliedMessages name what an applied command did, for the log.
var appliedMessages = map[string]string{
	CmdCreditSale:       "sale credited",
	CmdRefund:           "refund applied",
	CmdRelease:          "referral released",
	CmdApprove:          "referral approved",
	CmdReject:           "referral rejected",
	CmdRedeem:           "redemption debited",
	CmdRedemptionResult: "redemption result applied", // completed or failed, by its status
}

// Metrics describes the ledger's transactions.
type Metrics struct{ commands prometheus.Histogram }

// NewMetrics registers the ledger metrics on reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{commands: prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "convida_ledger_transaction_commands",
		Help:    "Commands per committed ledger transaction, all partition batches sharing it together.",
		Buckets: prometheus.ExponentialBuckets(1, 2, 12),
	})}
	reg.MustRegister(m.commands)
	return m
}

func (m *Metrics) committed(commands int) {
	if m != nil {
		m.commands.Observe(float64(commands))
	}
}
