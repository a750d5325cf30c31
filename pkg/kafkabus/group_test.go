package kafkabus_test

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/kafkabus"
	"github.com/convida/convida/pkg/testenv"
)

// TestRunGroupExactlyOnce: with one member and no failures every message is
// handled exactly once, in key order, in batches, and once the offsets are
// committed a new member of the group sees none of them again.
func TestRunGroupExactlyOnce(t *testing.T) {
	t.Parallel()
	const topic, parts, n = "commands", 16, 10000
	brokers := mustTopic(t, topic, parts)
	publishN(t, newWriter(t, brokers, topic), 0, n, 500)

	reg := prometheus.NewRegistry()
	cfg := fastGroup(t, brokers, "ledger", topic)
	cfg.Metrics = kafkabus.NewMetrics(reg, "test")
	rec := newRecorder()
	start := time.Now()
	stop := startGroup(t, cfg, rec.handle)
	testenv.Eventually(t, 30*time.Second, "10,000 messages handled", func() bool { return rec.handled() >= n })
	elapsed := time.Since(start)
	testenv.Eventually(t, 10*time.Second, "offsets committed", func() bool {
		return mapsEqual(committedOffsets(t, brokers, "ledger", topic, parts), endOffsets(t, brokers, topic, parts))
	})
	stop()

	if got := rec.count(); got != n {
		t.Errorf("distinct messages handled = %d, want %d", got, n)
	}
	if got := rec.handled(); got != n {
		t.Errorf("handler calls × messages = %d, want %d (exactly once)", got, n)
	}
	rec.checkOrder(t)
	if got := metricValue(t, reg, "kafkabus_messages_handled_total", map[string]string{"group": "ledger"}); got != n {
		t.Errorf("kafkabus_messages_handled_total = %v, want %d", got, n)
	}
	t.Logf("10,000 messages over 16 partitions consumed in %v (%d batches, largest %d)",
		elapsed.Round(time.Millisecond), len(rec.batches), slices.Max(rec.batches))

	// A new member starts from the committed offsets: it sees only what is
	// published after.
	again := newRecorder()
	startGroup(t, cfg, again.handle)
	publishN(t, newWriter(t, brokers, topic), n, 1, 500)
	testenv.Eventually(t, 15*time.Second, "the new message", func() bool { return again.handled() >= 1 })
	time.Sleep(200 * time.Millisecond)
	if got := again.handled(); got != 1 {
		t.Errorf("restarted member handled %d messages, want only the 1 new one", got)
	}
}

func mapsEqual(a, b map[int]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestRunGroupBatches: a backlog is handed over in batches bounded by MaxBatch.
func TestRunGroupBatches(t *testing.T) {
	t.Parallel()
	const topic, n = "backlog", 1000
	brokers := mustTopic(t, topic, 1)
	publishN(t, newWriter(t, brokers, topic), 0, n, 10)

	cfg := fastGroup(t, brokers, "g", topic)
	cfg.MaxBatch = 100
	rec := newRecorder()
	startGroup(t, cfg, rec.handle)
	testenv.Eventually(t, 15*time.Second, "backlog handled", func() bool { return rec.handled() >= n })

	rec.mu.Lock()
	defer rec.mu.Unlock()
	if got := slices.Max(rec.batches); got != 100 {
		t.Errorf("largest batch = %d, want MaxBatch 100 (batches %v)", got, rec.batches)
	}
	if len(rec.batches) >= n/2 {
		t.Errorf("%d messages came in %d batches, want batching", n, len(rec.batches))
	}
}

// TestRunGroupTransientRetry: a failing batch is retried until it succeeds;
// nothing is skipped and each key keeps its order.
func TestRunGroupTransientRetry(t *testing.T) {
	t.Parallel()
	const topic, parts, n = "retry", 4, 400
	brokers := mustTopic(t, topic, parts)
	publishN(t, newWriter(t, brokers, topic), 0, n, 20)

	rec := newRecorder()
	var calls, failures atomic.Int32
	var mu sync.Mutex
	var failedFirst, retriedFirst []int64 // first offsets on partition 0
	h := func(ctx context.Context, msgs []kafkabus.Message) error {
		calls.Add(1)
		if msgs[0].Partition == 0 {
			mu.Lock()
			if len(failedFirst) < 2 {
				failedFirst = append(failedFirst, msgs[0].Offset)
				mu.Unlock()
				failures.Add(1)
				return fmt.Errorf("database busy: %w", errBoom)
			}
			if len(retriedFirst) == 0 {
				retriedFirst = append(retriedFirst, msgs[0].Offset)
			}
			mu.Unlock()
		}
		return rec.handle(ctx, msgs)
	}
	reg := prometheus.NewRegistry()
	cfg := fastGroup(t, brokers, "g", topic)
	cfg.Metrics = kafkabus.NewMetrics(reg, "test")
	startGroup(t, cfg, h)
	testenv.Eventually(t, 15*time.Second, "all handled", func() bool { return rec.count() >= n })

	if got := rec.handled(); got != n {
		t.Errorf("messages handled = %d, want %d (none twice)", got, n)
	}
	rec.checkOrder(t)
	mu.Lock()
	defer mu.Unlock()
	if want := []int64{0, 0}; !slices.Equal(failedFirst, want) || !slices.Equal(retriedFirst, []int64{0}) {
		t.Errorf("partition 0 batches failed at %v then succeeded at %v, want the same batch (offset 0) retried", failedFirst, retriedFirst)
	}
	if got := metricValue(t, reg, "kafkabus_handler_errors_total", map[string]string{"kind": "transient"}); got != 2 {
		t.Errorf("transient handler errors metric = %v, want 2", got)
	}
}

// TestRunGroupPermanentToDeadLetter: one poison message in a batch goes to the
// dead-letter topic with its reason; the others are processed and the offset
// moves past it.
func TestRunGroupPermanentToDeadLetter(t *testing.T) {
	t.Parallel()
	const topic, n, poison = "events", 50, 17
	brokers := mustTopic(t, topic, 1)
	w := newWriter(t, brokers, topic)
	var msgs []kafkabus.Message
	for i := range n {
		m := kafkabus.Message{Key: []byte("k"), Value: fmt.Appendf(nil, "%d", i), Headers: map[string]string{"trace": fmt.Sprint(i)}}
		if i == poison {
			m.Value = []byte("poison")
		}
		msgs = append(msgs, m)
	}
	if err := w.Publish(context.Background(), msgs...); err != nil {
		t.Fatal(err)
	}

	rec := newRecorder()
	var poisonBatches atomic.Int32
	h := func(ctx context.Context, msgs []kafkabus.Message) error {
		for _, m := range msgs {
			if bytes.Equal(m.Value, []byte("poison")) {
				if len(msgs) > 1 {
					poisonBatches.Add(1)
				}
				return apperr.Permanent(apperr.Errorf(apperr.Invalid, "cannot decode %q", m.Value))
			}
		}
		return rec.handle(ctx, msgs)
	}
	reg := prometheus.NewRegistry()
	cfg := fastGroup(t, brokers, "dispatcher", topic)
	cfg.Metrics = kafkabus.NewMetrics(reg, "test")
	startGroup(t, cfg, h)
	testenv.Eventually(t, 15*time.Second, "offset past the poison message", func() bool {
		return committedOffsets(t, brokers, "dispatcher", topic, 1)[0] == n
	})

	if got := rec.count(); got != n-1 {
		t.Errorf("good messages handled = %d, want %d", got, n-1)
	}
	if poisonBatches.Load() == 0 {
		t.Errorf("poison was never in a batch of more than one; the isolation path was not exercised")
	}
	dlq := readAll(t, brokers, topic+".dlq", 1)
	if len(dlq) != 1 {
		t.Fatalf("dead-letter topic holds %d messages, want 1", len(dlq))
	}
	headers := map[string]string{}
	for _, h := range dlq[0].Headers {
		headers[h.Key] = string(h.Value)
	}
	want := map[string]string{
		"dlq-reason":    `validation_error: cannot decode "poison"`,
		"dlq-topic":     topic,
		"dlq-partition": "0",
		"dlq-offset":    fmt.Sprint(poison),
		"dlq-group":     "dispatcher",
		"trace":         fmt.Sprint(poison),
	}
	for k, v := range want {
		if headers[k] != v {
			t.Errorf("dead-letter header %s = %q, want %q", k, headers[k], v)
		}
	}
	if string(dlq[0].Value) != "poison" || string(dlq[0].Key) != "k" {
		t.Errorf("dead-letter record = %q/%q, want k/poison", dlq[0].Key, dlq[0].Value)
	}
	if got := metricValue(t, reg, "kafkabus_dead_lettered_total", nil); got != 1 {
		t.Errorf("dead-lettered metric = %v, want 1", got)
	}
}

// TestRunGroupPanicIsPermanent: a panicking handler does not kill the process;
// the message is dead-lettered.
func TestRunGroupPanicIsPermanent(t *testing.T) {
	t.Parallel()
	const topic = "panics"
	brokers := mustTopic(t, topic, 1)
	publishN(t, newWriter(t, brokers, topic), 0, 3, 1)
	rec := newRecorder()
	startGroup(t, fastGroup(t, brokers, "g", topic), func(ctx context.Context, msgs []kafkabus.Message) error {
		for _, m := range msgs {
			if string(m.Value) == "1" {
				panic("nil map")
			}
		}
		return rec.handle(ctx, msgs)
	})
	testenv.Eventually(t, 15*time.Second, "offset past the panic", func() bool {
		return committedOffsets(t, brokers, "g", topic, 1)[0] == 3
	})
	if dlq := readAll(t, brokers, topic+".dlq", 1); len(dlq) != 1 || string(dlq[0].Value) != "1" {
		t.Errorf("dead-letter topic = %v, want the message that panicked", dlq)
	}
}

// TestRunGroupRebalance: a second member joins mid-stream and the first one
// leaves mid-stream; every message is handled at least once and the
// committed offsets end at the end of every partition.
func TestRunGroupRebalance(t *testing.T) {
	t.Parallel()
	const topic, parts, n = "rebalance", 8, 4000
	brokers := mustTopic(t, topic, parts)
	w := newWriter(t, brokers, topic)

	rec := newRecorder()
	var aHandled, bHandled atomic.Int32
	handler := func(c *atomic.Int32) kafkabus.BatchHandler {
		return func(ctx context.Context, msgs []kafkabus.Message) error {
			// The effects land first, then a little more work that
			// honours ctx: a batch cut short by the rebalance was
			// applied but not committed, and must come again.
			c.Add(int32(len(msgs)))
			_ = rec.handle(ctx, msgs)
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(2 * time.Millisecond):
				return nil
			}
		}
	}
	stopA := startGroup(t, fastGroup(t, brokers, "g", topic), handler(&aHandled))
	var stopB func()
	// 40 rounds of 100 messages over ~3 s: B joins after round 10, A
	// leaves after round 25.
	for round := range 40 {
		publishN(t, w, round*100, 100, 50)
		switch round {
		case 10:
			stopB = startGroup(t, fastGroup(t, brokers, "g", topic), handler(&bHandled))
		case 25:
			stopA()
		}
		time.Sleep(75 * time.Millisecond)
	}
	testenv.Eventually(t, 30*time.Second, "every message handled", func() bool { return rec.count() >= n })
	testenv.Eventually(t, 10*time.Second, "offsets committed to the end", func() bool {
		return mapsEqual(committedOffsets(t, brokers, "g", topic, parts), endOffsets(t, brokers, topic, parts))
	})
	stopB()

	if got := rec.count(); got != n {
		t.Errorf("distinct messages handled = %d, want %d", got, n)
	}
	if aHandled.Load() == 0 || bHandled.Load() == 0 {
		t.Errorf("A handled %d, B handled %d; want both to take part", aHandled.Load(), bHandled.Load())
	}
	rec.checkOrder(t)
	t.Logf("rebalance: %d messages, %d handler deliveries, %d duplicates (A %d, B %d)",
		n, rec.handled(), rec.handled()-n, aHandled.Load(), bHandled.Load())
}

// TestRunGroupCancelMidBatchRedelivers: a runner stopped while its handler is
// in the middle of a batch commits nothing for it, and the next member gets
// the same messages.
func TestRunGroupCancelMidBatchRedelivers(t *testing.T) {
	t.Parallel()
	const topic, n = "restart", 20
	brokers := mustTopic(t, topic, 1)
	publishN(t, newWriter(t, brokers, topic), 0, n, 5)

	inHandler := make(chan []kafkabus.Message, 1)
	var abandoned atomic.Bool
	stop := startGroup(t, fastGroup(t, brokers, "g", topic), func(ctx context.Context, msgs []kafkabus.Message) error {
		select {
		case inHandler <- msgs:
		default:
		}
		<-ctx.Done() // never finishes on its own
		abandoned.Store(true)
		return ctx.Err()
	})
	var first []kafkabus.Message
	select {
	case first = <-inHandler:
	case <-time.After(15 * time.Second):
		t.Fatal("handler never called")
	}
	stop()
	if !abandoned.Load() {
		t.Fatal("handler ctx was not cancelled by stopping the runner")
	}
	if got := committedOffsets(t, brokers, "g", topic, 1)[0]; got >= 0 {
		t.Fatalf("committed offset after abandoning the batch = %d, want none", got)
	}

	rec := newRecorder()
	startGroup(t, fastGroup(t, brokers, "g", topic), rec.handle)
	testenv.Eventually(t, 15*time.Second, "redelivery", func() bool { return rec.count() >= n })
	for _, m := range first {
		if rec.seen[string(m.Value)] != 1 {
			t.Errorf("abandoned message %s (offset %d) redelivered %d times, want 1", m.Value, m.Offset, rec.seen[string(m.Value)])
		}
	}
}

func TestRunGroupConfigErrors(t *testing.T) {
	t.Parallel()
	brokers := mustTopic(t, "exists", 1)
	nop := func(context.Context, []kafkabus.Message) error { return nil }
	tests := []struct {
		name    string
		cfg     kafkabus.GroupConfig
		handler kafkabus.BatchHandler
		want    apperr.Code
	}{
		{"no group", kafkabus.GroupConfig{Brokers: brokers, Topic: "exists"}, nop, apperr.Invalid},
		{"nil handler", kafkabus.GroupConfig{Brokers: brokers, GroupID: "g", Topic: "exists"}, nil, apperr.Invalid},
		{"negative batch", kafkabus.GroupConfig{Brokers: brokers, GroupID: "g", Topic: "exists", MaxBatch: -1}, nop, apperr.Invalid},
		{"missing topic", kafkabus.GroupConfig{Brokers: brokers, GroupID: "g", Topic: "typo"}, nop, apperr.NotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			err := kafkabus.RunGroup(ctx, tt.cfg, tt.handler)
			if got := apperr.CodeOf(err); got != tt.want {
				t.Errorf("RunGroup = %v (code %q), want code %q", err, got, tt.want)
			}
		})
	}
}

// TestRunGroupMarksRepeats: a consumer that starts a partition marks the
// first MaxBatch messages as possible repeats (the previous owner's last
// batch may have been handled, not committed), a retried batch as repeats,
// and trusts the rest to be new.
func TestRunGroupMarksRepeats(t *testing.T) {
	t.Parallel()
	const topic, maxBatch = "repeats", 10
	brokers := mustTopic(t, topic, 1)
	w := newWriter(t, brokers, topic)
	publishN(t, w, 0, 25, 1)

	type seen struct {
		offset int64
		repeat bool
	}
	var mu sync.Mutex
	var got []seen
	failed := false
	cfg := fastGroup(t, brokers, "g", topic)
	cfg.MaxBatch = maxBatch
	handle := func(_ context.Context, msgs []kafkabus.Message) error {
		mu.Lock()
		defer mu.Unlock()
		// The batch holding offset 15 fails once; the whole retry repeats.
		if !failed && msgs[0].Offset <= 15 && 15 <= msgs[len(msgs)-1].Offset {
			failed = true
			return errBoom
		}
		for _, m := range msgs {
			got = append(got, seen{m.Offset, m.Repeat})
		}
		return nil
	}
	stop := startGroup(t, cfg, handle)
	count := func() int { mu.Lock(); defer mu.Unlock(); return len(got) }
	testenv.Eventually(t, 15*time.Second, "25 messages", func() bool { return count() >= 25 })
	stop()

	mu.Lock()
	var retried []int64
	for _, s := range got {
		if s.offset >= maxBatch && s.repeat {
			retried = append(retried, s.offset)
		}
		if s.offset < maxBatch && !s.repeat {
			t.Errorf("offset %d not marked as a repeat: the consumer started at 0 with MaxBatch %d", s.offset, maxBatch)
		}
	}
	mu.Unlock()
	if !slices.Contains(retried, 15) {
		t.Errorf("retried batch not marked as repeats (repeats past the first batch: %v)", retried)
	}
	if len(retried) > maxBatch {
		t.Errorf("%d messages past the first batch marked as repeats (%v), want only the retried batch", len(retried), retried)
	}

	// A new consumer (the group's committed offset is 25) marks the first
	// MaxBatch of what follows, and no more.
	publishN(t, w, 25, 25, 1)
	mu.Lock()
	got, failed = nil, true
	mu.Unlock()
	startGroup(t, cfg, handle)
	testenv.Eventually(t, 15*time.Second, "25 more messages", func() bool { return count() >= 25 })
	mu.Lock()
	defer mu.Unlock()
	for _, s := range got {
		if want := s.offset < 25+maxBatch; s.repeat != want {
			t.Errorf("after a restart, offset %d Repeat = %v, want %v", s.offset, s.repeat, want)
		}
	}
}
