package ledger

import (
	"context"

	"github.com/convida/convida/pkg/outbox"
	"go.uber.org/zap"
)

// Store applies a batch of commands in one transaction (pkg/postgres).
type Store interface {
	ApplyBatch(ctx context.Context, cmds []Command) (*Book, error)
}

// Relayer publishes committed outbox records.
type Relayer interface {
	Relay(ctx context.Context, recs []outbox.Record) error
}

// Notifier tells waiting callers (the API) the outcomes of their commands.
// It is best effort: callers fall back to reading processed_commands.
type Notifier interface {
	Notify(ctx context.Context, outcomes []Outcome)
}

// Worker applies batches of commands from one partition.
type Worker struct {
	store    Store
	relay    Relayer
	notifier Notifier
	log      *zap.Logger
}

// NewWorker returns a Worker; notifier may be nil.
func NewWorker(store Store, relay Relayer, notifier Notifier, log *zap.Logger) *Worker {
	return &Worker{store: store, relay: relay, notifier: notifier, log: log}
}

// Handle applies cmds in one transaction, then relays their events. It is
// safe to call again with the same commands: applied ones are skipped. An
// error means nothing was committed and the batch must be retried; a relay
// failure after the commit is not an error (the outbox sweep relays later).
func (w *Worker) Handle(ctx context.Context, cmds []Command) error {
	book, err := w.store.ApplyBatch(ctx, cmds)
	if err != nil {
		return err
	}
	if err := w.relay.Relay(ctx, book.Records); err != nil {
		w.log.Warn("relay after commit failed; the outbox sweep will publish", zap.Int("events", len(book.Records)), zap.Error(err))
	}
	if w.notifier != nil {
		w.notifier.Notify(ctx, book.Outcomes)
	}
	return nil
}
