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
	"fmt"
	"strings"
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

// kafkaErrorLogger routes kafka-go's error logging into zap at the level
// errorLevel chooses for each line (level for the lines it does not
// know), and counts the lines by client and level, so that what goes to
// debug can still be watched as a rate.
func kafkaErrorLogger(l *zap.Logger, level zapcore.Level, m *Metrics, client string) kafka.Logger {
	return countedLogger(l, m, client, func(msg string) zapcore.Level { return errorLevel(msg, level) })
}

// countedLogger routes kafka-go's error logging into zap at the level
// levelOf gives each line, counting the lines by client and level.
func countedLogger(l *zap.Logger, m *Metrics, client string, levelOf func(msg string) zapcore.Level) kafka.Logger {
	s := l.Sugar()
	return kafka.LoggerFunc(func(format string, args ...any) {
		msg := fmt.Sprintf(format, args...)
		lvl := levelOf(msg)
		m.clientError(client, lvl)
		if l.Core().Enabled(lvl) {
			s.Logf(lvl, "%s", msg)
		}
	})
}

// lostMessages are the error lines that say messages were skipped: the
// reader was behind the partition's retention. An operator must know.
var lostMessages = []string{"reading before the first offset"}

// reportedByUs are the error lines of failures that kafka-go retries and
// that our own code reports at warn when they persist, so that kafka-go's
// line of each attempt is noise:
//   - a reader that cannot connect tries 3 times, then FetchMessage
//     returns the error and the partition loop warns "reading partition
//     failed; reopening";
//   - a partition whose leader moved is read again from the new leader;
//   - a consumer group's join, sync or offset fetch that fails is
//     returned by Next, and RunGroup warns "joining consumer group failed;
//     retrying";
//   - a write is tried again, and Publish returns the last attempt's error
//     to its caller (an ingest answers 503, the relay warns).
var reportedByUs = []string{
	"error initializing the kafka reader",
	"failed to read from current broker",
	"Unable to establish connection to consumer group coordinator",
	"Failed to join group", "Failed to sync group", "Failed to fetch offsets",
	"Problem getting partitions",
	"leave group failed",
	"error writing messages to",
}

// transientErrors mark a connection that timed out or closed: kafka-go
// drops the connection and opens another, and on an idle topic a fetch
// held for its whole MaxWait meets its read deadline now and then (the
// "unknown error … i/o timeout" lines that were most of a quiet log).
var transientErrors = []string{"i/o timeout", "EOF", "connection reset by peer", "broken pipe",
	"use of closed network connection", "connection refused", "context canceled", "context deadline exceeded"}

// errorLevel is the level of one of kafka-go's error lines: warn for lost
// messages; debug for the failures it retries itself (transientErrors),
// and for those our code reports when they persist (reportedByUs); level
// for the others.
func errorLevel(msg string, level zapcore.Level) zapcore.Level {
	switch {
	case containsAny(msg, lostMessages):
		return zapcore.WarnLevel
	case containsAny(msg, reportedByUs), containsAny(msg, transientErrors):
		return zapcore.DebugLevel
	}
	return level
}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
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
