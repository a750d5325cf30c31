package kafkabus_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/segmentio/kafka-go"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/convida/convida/pkg/kafkabus"
	"github.com/convida/convida/pkg/testenv"
)

// mustTopic starts a broker and creates topic with the given partitions.
func mustTopic(t *testing.T, topic string, partitions int) []string {
	t.Helper()
	brokers := testenv.MustBroker(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := kafkabus.EnsureTopics(ctx, brokers, kafkabus.TopicSpec{Name: topic, Partitions: partitions}); err != nil {
		t.Fatalf("EnsureTopics: %v", err)
	}
	return brokers
}

func testLogger(t *testing.T) *zap.Logger {
	return zaptest.NewLogger(t, zaptest.Level(zap.WarnLevel))
}

// fastGroup is a group config with timings short enough for tests.
func fastGroup(t *testing.T, brokers []string, group, topic string) kafkabus.GroupConfig {
	return kafkabus.GroupConfig{
		Brokers: brokers, GroupID: group, Topic: topic,
		SessionTimeout:    3 * time.Second,
		HeartbeatInterval: 100 * time.Millisecond,
		RebalanceTimeout:  5 * time.Second,
		RetryBackoff:      10 * time.Millisecond,
		MaxRetryBackoff:   100 * time.Millisecond,
		Logger:            testLogger(t),
	}
}

// startGroup runs RunGroup in the background. The returned stop cancels it,
// waits for it and fails the test if it returned an error; it is also
// registered as cleanup, and calling it twice is fine.
func startGroup(t *testing.T, cfg kafkabus.GroupConfig, h kafkabus.BatchHandler) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- kafkabus.RunGroup(ctx, cfg, h) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("RunGroup(%s) returned %v, want nil", cfg.GroupID, err)
				}
			case <-time.After(20 * time.Second):
				t.Errorf("RunGroup(%s) did not return within 20s of cancel", cfg.GroupID)
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

// publishN publishes n messages key=k<i%keys>, value=<i> in chunks.
func publishN(t *testing.T, w *kafkabus.Writer, from, n, keys int) {
	t.Helper()
	const chunk = 500
	for start := from; start < from+n; start += chunk {
		var msgs []kafkabus.Message
		for i := start; i < min(start+chunk, from+n); i++ {
			msgs = append(msgs, kafkabus.Message{Key: fmt.Appendf(nil, "k%d", i%keys), Value: fmt.Appendf(nil, "%d", i)})
		}
		if err := w.Publish(context.Background(), msgs...); err != nil {
			t.Fatalf("Publish: %v", err)
		}
	}
}

func newWriter(t *testing.T, brokers []string, topic string) *kafkabus.Writer {
	w := kafkabus.NewWriter(kafkabus.WriterConfig{Brokers: brokers, Topic: topic, Logger: testLogger(t)})
	t.Cleanup(func() { _ = w.Close() })
	return w
}

func client(t *testing.T, brokers []string) *kafka.Client {
	tr := &kafka.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	return &kafka.Client{Addr: kafka.TCP(brokers...), Transport: tr, Timeout: 10 * time.Second}
}

func partitionCount(t *testing.T, brokers []string, topic string) int {
	t.Helper()
	meta, err := client(t, brokers).Metadata(context.Background(), &kafka.MetadataRequest{Topics: []string{topic}})
	if err != nil || len(meta.Topics) != 1 || meta.Topics[0].Error != nil {
		t.Fatalf("Metadata(%s): %v %+v", topic, err, meta)
	}
	return len(meta.Topics[0].Partitions)
}

// endOffsets returns each partition's high-water mark.
func endOffsets(t *testing.T, brokers []string, topic string, partitions int) map[int]int64 {
	t.Helper()
	var reqs []kafka.OffsetRequest
	for p := range partitions {
		reqs = append(reqs, kafka.LastOffsetOf(p))
	}
	resp, err := client(t, brokers).ListOffsets(context.Background(), &kafka.ListOffsetsRequest{
		Topics: map[string][]kafka.OffsetRequest{topic: reqs},
	})
	if err != nil {
		t.Fatalf("ListOffsets: %v", err)
	}
	out := map[int]int64{}
	for _, p := range resp.Topics[topic] {
		if p.Error != nil {
			t.Fatalf("ListOffsets partition %d: %v", p.Partition, p.Error)
		}
		out[p.Partition] = p.LastOffset
	}
	return out
}

// committedOffsets returns the group's committed offset per partition (-1
// when none).
func committedOffsets(t *testing.T, brokers []string, group, topic string, partitions int) map[int]int64 {
	t.Helper()
	var ps []int
	for p := range partitions {
		ps = append(ps, p)
	}
	resp, err := client(t, brokers).OffsetFetch(context.Background(), &kafka.OffsetFetchRequest{
		GroupID: group, Topics: map[string][]int{topic: ps},
	})
	out := map[int]int64{}
	if err == nil && errors.Is(resp.Error, kafka.GroupIdNotFound) {
		for _, p := range ps {
			out[p] = -1
		}
		return out
	}
	if err != nil || resp.Error != nil {
		t.Fatalf("OffsetFetch: %v %v", err, resp.Error)
	}
	for _, p := range resp.Topics[topic] {
		out[p.Partition] = p.CommittedOffset
	}
	return out
}

// readAll reads every message of topic up to its current end, one reader
// per partition, without a consumer group.
func readAll(t *testing.T, brokers []string, topic string, partitions int) []kafka.Message {
	t.Helper()
	ends := endOffsets(t, brokers, topic, partitions)
	var out []kafka.Message
	for p := range partitions {
		if ends[p] == 0 {
			continue
		}
		r := kafka.NewReader(kafka.ReaderConfig{Brokers: brokers, Topic: topic, Partition: p, MaxWait: 100 * time.Millisecond})
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		for {
			m, err := r.ReadMessage(ctx)
			if err != nil {
				cancel()
				r.Close()
				t.Fatalf("reading %s/%d: %v", topic, p, err)
			}
			out = append(out, m)
			if m.Offset+1 >= ends[p] {
				break
			}
		}
		cancel()
		r.Close()
	}
	return out
}

// recorder is a handler that records what it was given.
type recorder struct {
	mu      sync.Mutex
	seen    map[string]int // value → times handled
	byKey   map[string][]int
	batches []int
	total   int
}

func newRecorder() *recorder {
	return &recorder{seen: map[string]int{}, byKey: map[string][]int{}}
}

func (r *recorder) handle(_ context.Context, msgs []kafkabus.Message) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.batches = append(r.batches, len(msgs))
	for _, m := range msgs {
		r.seen[string(m.Value)]++
		var v int
		fmt.Sscan(string(m.Value), &v)
		r.byKey[string(m.Key)] = append(r.byKey[string(m.Key)], v)
		r.total++
	}
	return nil
}

func (r *recorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.seen)
}

func (r *recorder) handled() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.total
}

// checkOrder fails if some key's values were first seen out of order.
func (r *recorder) checkOrder(t *testing.T) {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	for k, vs := range r.byKey {
		max := -1
		for _, v := range vs {
			if v < max && r.seen[fmt.Sprint(v)] == 1 {
				t.Errorf("key %s: value %d handled after %d", k, v, max)
				return
			}
			if v > max {
				max = v
			}
		}
	}
}

var errBoom = errors.New("boom")

// metricValue sums the counter or gauge, or the histogram's sample count,
// of the series of name whose labels include labels.
func metricValue(t *testing.T, reg *prometheus.Registry, name string, labels map[string]string) float64 {
	t.Helper()
	var sum float64
	for _, m := range series(t, reg, name, labels) {
		if c := m.GetCounter(); c != nil {
			sum += c.GetValue()
		}
		if g := m.GetGauge(); g != nil {
			sum += g.GetValue()
		}
		if h := m.GetHistogram(); h != nil {
			sum += float64(h.GetSampleCount())
		}
	}
	return sum
}

// series returns the series of name whose labels include labels.
func series(t *testing.T, reg *prometheus.Registry, name string, labels map[string]string) []*dto.Metric {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var out []*dto.Metric
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
	series:
		for _, m := range f.GetMetric() {
			have := map[string]string{}
			for _, l := range m.GetLabel() {
				have[l.GetName()] = l.GetValue()
			}
			for k, v := range labels {
				if have[k] != v {
					continue series
				}
			}
			out = append(out, m)
		}
	}
	return out
}
