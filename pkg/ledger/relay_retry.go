package ledger

import (
	"context"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/convida/convida/pkg/outbox"
	"github.com/convida/convida/pkg/retry"
)

// relayRetry relays again, in the background, the events of committed
// transactions whose relay failed (a broker that did not answer for a
// moment): they go out within a second or two of its return instead of at
// the outbox sweep, 30 s later. The queue is bounded (relayRetryMax
// events): what does not fit, or is still queued when the process stops,
// is left to the sweep, which stays the safety net. Relaying again is safe:
// delivery is at least once, so an event the sweep relays meanwhile may be
// published twice, and receivers deduplicate by event id.
type relayRetry struct {
	relay Relayer
	log   *zap.Logger

	start sync.Once
	wake  chan struct{} // a token when the queue got records
	mu    sync.Mutex
	queue []outbox.Record
}

// The retry's limits: the events it holds, the backoff between tries (the
// first within Base), how long a try may take.
const (
	relayRetryMax     = 10_000
	relayRetryBase    = 500 * time.Millisecond
	relayRetryCap     = 5 * time.Second
	relayRetryTimeout = 10 * time.Second
)

func newRelayRetry(relay Relayer, log *zap.Logger) *relayRetry {
	if log == nil {
		log = zap.NewNop()
	}
	return &relayRetry{relay: relay, log: log, wake: make(chan struct{}, 1)}
}

// add queues recs for another relay and reports how many of them fit; the
// rest wait for the sweep.
func (r *relayRetry) add(recs []outbox.Record) int {
	r.start.Do(func() { go r.run() })
	r.mu.Lock()
	n := min(len(recs), relayRetryMax-len(r.queue))
	r.queue = append(r.queue, recs[:n]...)
	r.mu.Unlock()
	select {
	case r.wake <- struct{}{}:
	default:
	}
	return n
}

// take empties the queue.
func (r *relayRetry) take() []outbox.Record {
	r.mu.Lock()
	defer r.mu.Unlock()
	recs := r.queue
	r.queue = nil
	return recs
}

// putBack returns recs, whose relay failed again, to the queue's front, as
// far as the bound allows.
func (r *relayRetry) putBack(recs []outbox.Record) {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := min(len(recs), relayRetryMax-len(r.queue))
	r.queue = append(recs[:n:n], r.queue...)
}

// run relays what is queued, with capped exponential backoff while the
// relay fails, for the life of the process.
func (r *relayRetry) run() {
	warn := &retry.Every{Interval: retry.OutageWarnEvery}
	for range r.wake {
		waits := &retry.Backoff{Base: relayRetryBase, Max: relayRetryCap}
		for {
			time.Sleep(waits.Next())
			recs := r.take()
			if len(recs) == 0 {
				break
			}
			ctx, cancel := context.WithTimeout(context.Background(), relayRetryTimeout)
			err := r.relay.Relay(ctx, recs)
			cancel()
			if err == nil {
				r.log.Info("events relayed again after a failed relay", zap.Int("events", len(recs)))
				waits.Reset()
				continue
			}
			r.putBack(recs)
			if warn.Due() {
				r.log.Warn("relaying events again failed; retrying (the outbox sweep is the safety net)",
					zap.Int("events", len(recs)), zap.Error(err))
			}
		}
	}
}
