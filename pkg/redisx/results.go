package redisx

import (
	"context"
	"encoding/json"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"

	"github.com/convida/convida/pkg/ledger"
)

// Results carries command outcomes from the ledger to the API instance
// waiting for them, over Redis pub/sub. It is a fast path only: a message
// published while nobody listens is lost, and the waiter falls back to
// reading processed_commands. While the Breaker is open nothing is
// published and Subscribe fails at once.
type Results struct {
	rdb redis.UniversalClient
	brk *Breaker
	log *zap.Logger
}

// NewResults returns Results on rdb that skip Redis while brk is open.
func NewResults(rdb redis.UniversalClient, brk *Breaker, log *zap.Logger) *Results {
	return &Results{rdb: rdb, brk: brk, log: log}
}

func resultChannel(merchantID uuid.UUID, commandID string) string {
	return "convida:cmd:" + merchantID.String() + ":" + commandID
}

// Notify publishes every outcome on its command's channel (ledger.Notifier),
// pipelined in one round trip. Failures are logged, not returned.
func (r *Results) Notify(ctx context.Context, outcomes []ledger.Outcome) {
	if len(outcomes) == 0 || r.brk.Open() {
		return
	}
	pipe := r.rdb.Pipeline()
	for _, o := range outcomes {
		raw, err := json.Marshal(o)
		if err != nil {
			continue
		}
		pipe.Publish(ctx, resultChannel(o.MerchantID, o.CommandID), raw)
	}
	if err := r.brk.Do(ctx, func(ctx context.Context) error { _, err := pipe.Exec(ctx); return err }); err != nil {
		r.log.Debug("publishing command results failed; waiters fall back to the database", zap.Error(err))
	}
}

// Subscribe listens for the outcome of one command. The returned channel
// receives at most one outcome; stop ends the subscription. An error means
// Redis is unavailable: the caller polls the database instead.
func (r *Results) Subscribe(ctx context.Context, merchantID uuid.UUID, commandID string) (<-chan ledger.Outcome, func(), error) {
	var sub *redis.PubSub
	// Receive waits for the subscription's confirmation, so a message
	// published after Subscribe returns is not missed.
	if err := r.brk.Do(ctx, func(ctx context.Context) error {
		sub = r.rdb.Subscribe(ctx, resultChannel(merchantID, commandID))
		_, err := sub.Receive(ctx)
		return err
	}); err != nil {
		if sub != nil {
			_ = sub.Close()
		}
		return nil, func() {}, err
	}
	out := make(chan ledger.Outcome, 1)
	go func() {
		for msg := range sub.Channel() {
			var o ledger.Outcome
			if json.Unmarshal([]byte(msg.Payload), &o) == nil {
				out <- o
				return
			}
		}
	}()
	return out, func() { _ = sub.Close() }, nil
}
