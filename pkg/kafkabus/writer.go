package kafkabus

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/segmentio/kafka-go"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/retry"
)

// BatchBytes is the most bytes the writer puts in one partition's batch,
// and so the largest message it publishes, as kafka-go counts them: key,
// value and headers plus 22 bytes of framing (messageSize).
//
// The broker refuses a record batch larger than its message.max.bytes
// (Kafka's default 1,048,588; a topic may lower it with max.message.bytes).
// kafka-go does not count the batch's 61-byte header, nor a few bytes of
// varint framing per record, so BatchBytes keeps a margin under the
// broker's limit: a batch the writer builds is never refused for its size,
// and a message over BatchBytes is refused by Publish itself before
// anything is sent. A cluster with a smaller message.max.bytes must raise
// it (docker-compose.yml sets it explicitly).
const BatchBytes = 1_000_000

// ErrTooLarge is the cause of a Refusal for a message over BatchBytes.
var ErrTooLarge = errors.New("kafka: message larger than the writer's batch limit")

// WriterConfig configures NewWriter.
type WriterConfig struct {
	Brokers []string
	// Topic is the topic of every message that does not name its own.
	Topic string
	// BatchTimeout is how long a partition's batch waits for more messages
	// before it is sent; 0 means 2 ms. It is what lets concurrent Publish
	// calls share one produce request without adding noticeable latency.
	BatchTimeout time.Duration
	// BatchSize is the most messages per partition batch; 0 means 500.
	BatchSize int
	Logger    *zap.Logger
	Metrics   *Metrics // optional
}

// Writer publishes messages with acks from all in-sync replicas. It is safe
// for concurrent use, and concurrent callers are batched together.
type Writer struct {
	w *kafka.Writer
	// solo writes batches of one message: it tries again, alone, the
	// messages the broker refused in a batch, since a broker refuses a
	// whole partition batch for what one of its messages is.
	solo      *kafka.Writer
	transport *kafka.Transport
	topic     string
	metrics   *Metrics
}

// NewWriter returns a Writer. It does not connect: the first Publish does,
// and configuration errors surface there.
func NewWriter(cfg WriterConfig) *Writer {
	if cfg.BatchTimeout <= 0 {
		cfg.BatchTimeout = 2 * time.Millisecond
	}
	if cfg.BatchSize <= 0 {
		cfg.BatchSize = 500
	}
	log := orNop(cfg.Logger).Named("kafka-writer")
	transport := &kafka.Transport{ClientID: "convida-kafkabus"}
	// kafka-go logs every failed attempt (ten per message while the broker
	// is away); the caller gets the error. One warning per 30 s says the
	// brokers are away, the rest is debug.
	warn := &retry.Every{Interval: retry.OutageWarnEvery}
	errs := countedLogger(log, cfg.Metrics, "writer", func(string) zapcore.Level { return outageLevel(warn) })
	return &Writer{
		w:         newKafkaWriter(cfg, cfg.BatchSize, transport, log, errs),
		solo:      newKafkaWriter(cfg, 1, transport, log, errs),
		transport: transport,
		topic:     cfg.Topic,
		metrics:   cfg.Metrics,
	}
}

func newKafkaWriter(cfg WriterConfig, batchSize int, transport *kafka.Transport, log *zap.Logger, errs kafka.Logger) *kafka.Writer {
	return &kafka.Writer{
		Addr:                   kafka.TCP(cfg.Brokers...),
		Balancer:               &kafka.Hash{},
		RequiredAcks:           kafka.RequireAll,
		BatchTimeout:           cfg.BatchTimeout,
		BatchSize:              batchSize,
		BatchBytes:             BatchBytes,
		AllowAutoTopicCreation: false,
		Transport:              transport,
		Logger:                 kafkaLogger(log, zapcore.DebugLevel),
		ErrorLogger:            errs,
	}
}

// Refusal is a message PublishEach did not write for a reason of its own,
// which publishing it again would meet again: it is over BatchBytes, or
// the broker refused it with a per-message error (too large for the
// topic, invalid or corrupt record, timestamp out of range) when it was
// sent alone.
type Refusal struct {
	Index int   // the message's position in the call
	Err   error // ErrTooLarge or the broker's kafka.Error, wrapped
}

// Publish writes msgs and returns only once the broker has acknowledged every
// one of them (acks=all). Each message goes to its own Topic when set, else
// to the Writer's Topic; the partition is chosen by hashing the Key, so one
// key always lands on one partition, and messages of one call that share a
// partition keep their order.
//
// Publishing nothing is a no-op. A message with no topic at all yields
// apperr.Internal. Any other failure (broker unreachable, topic missing,
// ctx ended, a message refused: see PublishEach) yields apperr.Unavailable
// wrapping the cause: the caller should treat it as transient and may
// retry. After an error some of the messages may nevertheless have been
// written, so a retry can duplicate them.
func (w *Writer) Publish(ctx context.Context, msgs ...Message) error {
	refused, err := w.PublishEach(ctx, msgs...)
	if err == nil && len(refused) > 0 {
		err = apperr.Wrap(apperr.Unavailable, refused[0].Err, fmt.Sprintf("kafka: %d of %d messages refused", len(refused), len(msgs)))
	}
	return err
}

// PublishEach is Publish that tells apart the messages refused for
// themselves: it returns them, in the order of msgs, and writes every
// other message. A message over BatchBytes is refused before anything is
// sent; messages the broker refuses with a per-message error are tried
// again alone (each in a batch of its own, so that one message does not
// get its batch's neighbours refused), and only those refused alone are
// returned.
//
// The error is as Publish's: apperr.Internal for a message with no topic
// (and nothing is sent), apperr.Unavailable when some message that was
// not refused may not have been written. It is nil when every message but
// the refused ones was acknowledged.
func (w *Writer) PublishEach(ctx context.Context, msgs ...Message) ([]Refusal, error) {
	if len(msgs) == 0 {
		return nil, nil
	}
	out := make([]kafka.Message, 0, len(msgs))
	var refused []Refusal
	var sent []int // the index in msgs of each out message; nil while it is the same
	for i, m := range msgs {
		topic := m.Topic
		if topic == "" {
			topic = w.topic
		}
		if topic == "" {
			return nil, apperr.Errorf(apperr.Internal, "kafka: message %d has no topic and the writer has none", i)
		}
		k := toKafka(m, topic)
		if n := messageSize(&k); n > BatchBytes {
			if sent == nil {
				sent = make([]int, i, len(msgs))
				for j := range sent {
					sent[j] = j
				}
			}
			refused = append(refused, Refusal{Index: i, Err: fmt.Errorf("%w: %d bytes, the limit is %d", ErrTooLarge, n, BatchBytes)})
			continue
		}
		if sent != nil {
			sent = append(sent, i)
		}
		out = append(out, k)
	}
	if len(out) == 0 {
		return refused, nil
	}
	start := time.Now()
	err := w.w.WriteMessages(ctx, out...)
	if err != nil {
		var broker []Refusal
		broker, err = w.isolate(ctx, out, err)
		for _, r := range broker {
			if sent != nil {
				r.Index = sent[r.Index]
			}
			refused = append(refused, r)
		}
		slices.SortFunc(refused, func(a, b Refusal) int { return a.Index - b.Index })
	}
	w.metrics.published(out[0].Topic, start, err, len(refused) > 0)
	if err != nil {
		return refused, apperr.Wrap(apperr.Unavailable, publishCause(err), "kafka: publish failed")
	}
	return refused, nil
}

// isolate sorts out the failure of writing out: it returns the messages
// the broker refuses for themselves (indexes in out) and the error of the
// others, nil when they were all written.
func (w *Writer) isolate(ctx context.Context, out []kafka.Message, err error) ([]Refusal, error) {
	var werrs kafka.WriteErrors
	if !errors.As(err, &werrs) || len(werrs) != len(out) {
		return nil, err // the call failed as a whole (ctx, metadata, closed)
	}
	var suspects []int
	var transient error
	for i, e := range werrs {
		switch {
		case e == nil:
		case refusesItself(e):
			suspects = append(suspects, i)
		case transient == nil:
			transient = e
		}
	}
	if len(suspects) == 0 {
		return nil, transient
	}
	alone := make([]kafka.Message, len(suspects))
	for x, i := range suspects {
		alone[x] = out[i]
	}
	err = w.solo.WriteMessages(ctx, alone...)
	if err == nil {
		return nil, transient
	}
	var again kafka.WriteErrors
	if !errors.As(err, &again) || len(again) != len(alone) {
		return nil, err
	}
	var refused []Refusal
	for x, e := range again {
		switch {
		case e == nil:
		case refusesItself(e):
			refused = append(refused, Refusal{Index: suspects[x], Err: fmt.Errorf("kafka: the broker refused the message: %w", e)})
		case transient == nil:
			transient = e
		}
	}
	return refused, transient
}

// refusesItself reports whether a broker error is about the records sent
// (Kafka's CorruptRecord, RecordTooLarge, RecordBatchTooLarge,
// InvalidTimestamp, InvalidRecord), not about the broker, the topic or the
// connection. The broker answers for a whole partition batch, so the
// records concerned are not known until they are sent alone.
func refusesItself(err error) bool {
	var code kafka.Error
	if !errors.As(err, &code) {
		return false
	}
	switch code {
	case kafka.InvalidMessage, kafka.InvalidMessageSize, kafka.MessageSizeTooLarge, kafka.RecordListTooLarge,
		kafka.InvalidTimestamp, kafka.InvalidRecord:
		return true
	}
	return false
}

// messageSize is the size kafka-go gives m when it fills a batch and
// compares with BatchBytes: key, value and headers, and 22 bytes of
// framing. kafka-go refuses a message over BatchBytes for the whole call,
// so PublishEach measures each one first, the same way.
func messageSize(m *kafka.Message) int {
	n := 22 + len(m.Key) + len(m.Value) + varintLen(len(m.Headers))
	for _, h := range m.Headers {
		n += varintLen(len(h.Key)) + len(h.Key) + varintLen(len(h.Value)) + len(h.Value)
	}
	return n
}

// varintLen is the length of n as a zig-zag varint.
func varintLen(n int) int {
	u := uint64(n) << 1 // n ≥ 0
	size := 1
	for u >= 0x80 {
		u >>= 7
		size++
	}
	return size
}

// publishCause flattens kafka-go's per-message WriteErrors to their first
// error so the logged cause says what went wrong.
func publishCause(err error) error {
	var werrs kafka.WriteErrors
	if errors.As(err, &werrs) {
		for _, e := range werrs {
			if e != nil {
				return errors.Join(err, e)
			}
		}
	}
	return err
}

// Close releases the Writer's connections; later Publish calls fail. There is
// nothing to flush, since Publish is synchronous.
func (w *Writer) Close() error {
	err := errors.Join(w.w.Close(), w.solo.Close())
	w.transport.CloseIdleConnections()
	return err
}
