package kafkabus

import (
	"fmt"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// TestKafkaErrorLevels feeds kafka-go's error lines, formatted as
// kafka-go formats them, through the error logger of a reader, a group and
// a writer: the connections it retries by itself and the failures our
// code reports when they persist are logged at debug (and counted), lost
// messages at warn, and an error it does not know keeps the client's level.
func TestKafkaErrorLevels(t *testing.T) {
	t.Parallel()
	timeout := fmt.Errorf("read tcp 127.0.0.1:52814->127.0.0.1:9092: i/o timeout")
	cases := []struct {
		client string
		level  zapcore.Level // the client's level
		format string
		args   []any
		want   zapcore.Level
	}{
		{"reader", zapcore.InfoLevel, "the kafka reader got an unknown error reading partition %d of %s at offset %d: %s",
			[]any{3, "ledger.commands", 1042, timeout}, zapcore.DebugLevel},
		{"reader", zapcore.InfoLevel, "the kafka reader got an unknown error reading partition %d of %s at offset %d: %s",
			[]any{3, "events", 7, fmt.Errorf("unexpected EOF")}, zapcore.DebugLevel},
		{"reader", zapcore.InfoLevel, "error initializing the kafka reader for partition %d of %s: %s",
			[]any{0, "events", fmt.Errorf("dial tcp 127.0.0.1:9092: connect: connection refused")}, zapcore.DebugLevel},
		{"reader", zapcore.InfoLevel, "failed to read from current broker for partition %d of %s at offset %d: %v",
			[]any{1, "events", 5, fmt.Errorf("[6] Not Leader For Partition")}, zapcore.DebugLevel},
		{"reader", zapcore.InfoLevel, "the kafka reader is reading before the first offset for partition %d of %s, skipping from offset %d to %d (%d messages)",
			[]any{2, "events", 10, 510, 500}, zapcore.WarnLevel},
		{"reader", zapcore.InfoLevel, "the kafka reader got an unknown error reading partition %d of %s at offset %d: %s",
			[]any{3, "events", 7, fmt.Errorf("something new")}, zapcore.InfoLevel},
		{"group", zapcore.InfoLevel, "Failed to join group %s: %v", []any{"ledger", timeout}, zapcore.DebugLevel},
		{"group", zapcore.InfoLevel, "Problem getting partitions while checking for changes, %v", []any{timeout}, zapcore.DebugLevel},
		{"writer", zapcore.WarnLevel, "error writing messages to %s (partition %d, attempt %d): %s",
			[]any{"events", 0, 1, fmt.Errorf("[7] Request Timed Out")}, zapcore.DebugLevel},
		{"writer", zapcore.WarnLevel, "something the writer never said: %v", []any{"boom"}, zapcore.WarnLevel},
	}
	for _, c := range cases {
		core, logs := observer.New(zap.DebugLevel)
		m := NewMetrics(prometheus.NewRegistry(), "test")
		kafkaErrorLogger(zap.New(core), c.level, m, c.client).Printf(c.format, c.args...)
		entries := logs.All()
		want := fmt.Sprintf(c.format, c.args...)
		if len(entries) != 1 || entries[0].Level != c.want || entries[0].Message != want {
			t.Errorf("%s: %q logged %+v, want one line at %s", c.client, want, entries, c.want)
		}
		var counted dto.Metric
		if err := m.clientErrs.WithLabelValues(c.client, c.want.String()).Write(&counted); err != nil {
			t.Fatal(err)
		}
		if n := counted.GetCounter().GetValue(); n != 1 {
			t.Errorf("%s: %q counted %v times at %s, want 1", c.client, want, n, c.want)
		}
	}

	// At info, a debug line costs no formatting and writes nothing.
	core, logs := observer.New(zap.InfoLevel)
	kafkaErrorLogger(zap.New(core), zapcore.InfoLevel, nil, "reader").Printf(cases[0].format, cases[0].args...)
	if logs.Len() != 0 {
		t.Errorf("at info, the reader's i/o timeout was logged: %+v", logs.All())
	}
}
