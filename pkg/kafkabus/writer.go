package kafkabus

import (
	"context"
	"errors"
	"time"

	"github.com/segmentio/kafka-go"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/convida/convida/pkg/apperr"
)

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
	w         *kafka.Writer
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
	return &Writer{
		w: &kafka.Writer{
			Addr:                   kafka.TCP(cfg.Brokers...),
			Balancer:               &kafka.Hash{},
			RequiredAcks:           kafka.RequireAll,
			BatchTimeout:           cfg.BatchTimeout,
			BatchSize:              cfg.BatchSize,
			AllowAutoTopicCreation: false,
			Transport:              transport,
			Logger:                 kafkaLogger(log, zapcore.DebugLevel),
			ErrorLogger:            kafkaLogger(log, zapcore.WarnLevel),
		},
		transport: transport,
		topic:     cfg.Topic,
		metrics:   cfg.Metrics,
	}
}

// Publish writes msgs and returns only once the broker has acknowledged every
// one of them (acks=all). Each message goes to its own Topic when set, else
// to the Writer's Topic; the partition is chosen by hashing the Key, so one
// key always lands on one partition, and messages of one call that share a
// partition keep their order.
//
// Publishing nothing is a no-op. A message with no topic at all yields
// apperr.Internal. Any other failure (broker unreachable, topic missing,
// ctx ended) yields apperr.Unavailable wrapping the cause: the caller should
// treat it as transient and may retry. After an error some of the messages
// may nevertheless have been written, so a retry can duplicate them.
func (w *Writer) Publish(ctx context.Context, msgs ...Message) error {
	if len(msgs) == 0 {
		return nil
	}
	out := make([]kafka.Message, len(msgs))
	for i, m := range msgs {
		topic := m.Topic
		if topic == "" {
			topic = w.topic
		}
		if topic == "" {
			return apperr.Errorf(apperr.Internal, "kafka: message %d has no topic and the writer has none", i)
		}
		out[i] = toKafka(m, topic)
	}
	start := time.Now()
	err := w.w.WriteMessages(ctx, out...)
	w.metrics.published(out[0].Topic, start, err)
	if err != nil {
		return apperr.Wrap(apperr.Unavailable, publishCause(err), "kafka: publish failed")
	}
	return nil
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
	err := w.w.Close()
	w.transport.CloseIdleConnections()
	return err
}
