package kafkabus_test

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/convida/convida/pkg/kafkabus"
	"github.com/convida/convida/pkg/testenv"
)

// TestRunGroupReportsLag: while a handler is stuck, the lag gauge climbs to
// every message published (nothing is committed, and the group has never
// committed on these partitions); once the handler goes on, it falls back
// to zero. The runner's counters exist at zero before anything happened,
// so that increase() sees the first dead letter.
func TestRunGroupReportsLag(t *testing.T) {
	t.Parallel()
	const topic, parts, n = "commands", 4, 120
	brokers := mustTopic(t, topic, parts)
	reg := prometheus.NewRegistry()
	cfg := fastGroup(t, brokers, "ledger", topic)
	cfg.Metrics = kafkabus.NewMetrics(reg, "test")
	cfg.LagInterval = 50 * time.Millisecond

	release := make(chan struct{})
	rec := newRecorder()
	startGroup(t, cfg, func(ctx context.Context, msgs []kafkabus.Message) error {
		select {
		case <-release:
		case <-ctx.Done():
			return ctx.Err()
		}
		return rec.handle(ctx, msgs)
	})
	labels := map[string]string{"group": "ledger", "topic": topic, "program": "test"}
	testenv.Eventually(t, 10*time.Second, "the lag gauge at 0 on an empty topic", func() bool {
		return len(series(t, reg, "convida_consumer_lag_messages", labels)) == 1 &&
			metricValue(t, reg, "convida_consumer_lag_messages", labels) == 0
	})
	for _, name := range []string{"kafkabus_dead_lettered_total", "kafkabus_handler_errors_total", "kafkabus_messages_handled_total"} {
		if len(series(t, reg, name, map[string]string{"group": "ledger", "topic": topic})) == 0 {
			t.Errorf("%s{group=ledger} is not exported before the first message", name)
		}
	}

	publishN(t, newWriter(t, brokers, topic), 0, n, 40)
	testenv.Eventually(t, 10*time.Second, "the lag gauge at every message published", func() bool {
		return metricValue(t, reg, "convida_consumer_lag_messages", labels) == n
	})
	close(release)
	testenv.Eventually(t, 15*time.Second, "the lag gauge back at 0", func() bool {
		return metricValue(t, reg, "convida_consumer_lag_messages", labels) == 0 && rec.handled() >= n
	})

	// GroupLag is the same figure for any group: one that never read the
	// topic is behind by everything in it.
	lag, err := kafkabus.GroupLag(context.Background(), client(t, brokers), "nobody", topic)
	if err != nil || lag != n {
		t.Errorf("GroupLag(nobody) = %d, %v; want %d", lag, err, n)
	}
}
