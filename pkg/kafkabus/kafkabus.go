// Package kafkabus is Convida's only door to Kafka: a synchronous, batching
// Writer, EnsureTopics for start-up, and RunGroup, a consumer-group runner that
// hands batches of messages to a handler, one goroutine per assigned partition,
// and commits an offset only after the handler has processed everything before
// it.
//
// Domain packages see only this package's Message, BatchHandler and error
// markers (apperr.Permanent); kafka-go stays inside. Delivery is at least once: a
// message may be handed to a handler again after a rebalance, a crash or a
// cancelled batch, so handlers must be idempotent.
//
// Keys choose partitions through kafka-go's Hash balancer (FNV-1a, as sarama
// does), not Java's murmur2: every producer of a topic must publish through
// this package so that one key always lands on one partition.
package kafkabus

import (
	"time"

	"github.com/segmentio/kafka-go"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/convida/convida/pkg/retry"
)

// Message is a Kafka record as Convida sees it.
//
// On Publish only Topic (optional, see Writer.Publish), Key, Value, Headers
// and Time (zero means now) are used; on consumption every field is set.
type Message struct {
	Topic     string
	Partition int
	Offset    int64
	Key       []byte
	Value     []byte
	// Headers holds the record headers; when a record repeats a header name
	// the last value wins.
	Headers map[string]string
	Time    time.Time
	// Repeat says the message may have been handed to a handler before:
	// its batch is being retried, or it lies within MaxBatch of where this
	// consumer began reading the partition, where the previous owner's
	// last batch may have been handled but not committed (offsets are
	// committed after every batch, so no earlier message can be). A handler
	// whose effects are not idempotent by themselves checks these messages
	// and trusts the others to be new. Every member of a group must use the
	// same MaxBatch.
	Repeat bool
}

func fromKafka(m kafka.Message) Message {
	out := Message{
		Topic:     m.Topic,
		Partition: m.Partition,
		Offset:    m.Offset,
		Key:       m.Key,
		Value:     m.Value,
		Time:      m.Time,
	}
	if len(m.Headers) > 0 {
		out.Headers = make(map[string]string, len(m.Headers))
		for _, h := range m.Headers {
			out.Headers[h.Key] = string(h.Value)
		}
	}
	return out
}

func toKafka(m Message, topic string) kafka.Message {
	out := kafka.Message{Topic: topic, Key: m.Key, Value: m.Value, Time: m.Time}
	if len(m.Headers) > 0 {
		out.Headers = make([]kafka.Header, 0, len(m.Headers))
		for k, v := range m.Headers {
			out.Headers = append(out.Headers, kafka.Header{Key: k, Value: []byte(v)})
		}
	}
	return out
}

func orNop(l *zap.Logger) *zap.Logger {
	if l == nil {
		return zap.NewNop()
	}
	return l
}

// kafkaLogger routes kafka-go's printf logging into zap at one level.
func kafkaLogger(l *zap.Logger, level zapcore.Level) kafka.Logger {
	return sparseLogger(l, func() zapcore.Level { return level })
}

// sparseLogger routes kafka-go's printf logging into zap at the level
// that level gives for each line.
func sparseLogger(l *zap.Logger, level func() zapcore.Level) kafka.Logger {
	s := l.Sugar()
	return kafka.LoggerFunc(func(format string, args ...any) {
		if lvl := level(); l.Core().Enabled(lvl) {
			s.Logf(lvl, format, args...)
		}
	})
}

// outageLevel is warn when w is due (retry.Every), else debug: a warning
// repeated while the brokers are away is one line per
// retry.OutageWarnEvery, not one a second.
func outageLevel(w *retry.Every) zapcore.Level {
	if w.Due() {
		return zapcore.WarnLevel
	}
	return zapcore.DebugLevel
}
