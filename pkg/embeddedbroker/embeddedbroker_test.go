package embeddedbroker_test

import (
	"context"
	"fmt"
	"maps"
	"net"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/convida/convida/pkg/embeddedbroker"
	"github.com/convida/convida/pkg/kafkabus"
)

// TestRestartKeepsMessagesAndOffsets: a broker restarted on the same DataDir
// (and port) still has its topics, messages and committed group offsets.
func TestRestartKeepsMessagesAndOffsets(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	log := zaptest.NewLogger(t, zaptest.Level(zap.WarnLevel))
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()

	b := mustStart(t, embeddedbroker.Config{DataDir: dir, Partitions: 4, Logger: log})
	brokers := b.Addrs()
	if err := kafkabus.EnsureTopics(ctx, brokers, kafkabus.TopicSpec{Name: "t"}); err != nil {
		t.Fatal(err)
	}
	publish(ctx, t, brokers, 0, 100)
	if got := consume(ctx, t, brokers, 100); len(got) != 100 {
		t.Fatalf("first run consumed %d messages, want 100", len(got))
	}
	b.Close()

	_, port, _ := net.SplitHostPort(brokers[0])
	p, _ := strconv.Atoi(port)
	b = mustStart(t, embeddedbroker.Config{DataDir: dir, Port: p, Logger: log})
	if got := b.Addrs(); !slices.Equal(got, brokers) {
		t.Errorf("restarted broker listens on %v, want %v", got, brokers)
	}
	meta, err := (&kafka.Client{Addr: kafka.TCP(brokers...)}).Metadata(ctx, &kafka.MetadataRequest{Topics: []string{"t"}})
	if err != nil || len(meta.Topics) != 1 || meta.Topics[0].Error != nil {
		t.Fatalf("topic t after restart: %v %+v", err, meta)
	}
	if got := len(meta.Topics[0].Partitions); got != 4 {
		t.Errorf("topic t has %d partitions after restart, want 4 (Config.Partitions)", got)
	}
	if got, want := readValues(ctx, t, brokers, 4), seq(100); !slices.Equal(got, want) {
		t.Errorf("messages after restart = %v, want 0..99", got)
	}
	if got, want := offsets(ctx, t, brokers, 4, "g"), offsets(ctx, t, brokers, 4); !maps.Equal(got, want) {
		t.Errorf("committed offsets after restart = %v, want the end offsets %v", got, want)
	}

	// The group resumes from its committed offsets: only new messages.
	publish(ctx, t, brokers, 100, 10)
	got := consume(ctx, t, brokers, 10)
	slices.Sort(got)
	want := []int{100, 101, 102, 103, 104, 105, 106, 107, 108, 109}
	if !slices.Equal(got, want) {
		t.Errorf("after restart the group consumed %v, want only the new %v", got, want)
	}
}

func TestCloseTwiceAndInMemory(t *testing.T) {
	t.Parallel()
	b := mustStart(t, embeddedbroker.Config{})
	if len(b.Addrs()) != 1 {
		t.Fatalf("Addrs = %v, want one address", b.Addrs())
	}
	conn, err := net.DialTimeout("tcp", b.Addrs()[0], time.Second)
	if err != nil {
		t.Fatalf("broker not listening: %v", err)
	}
	conn.Close()
	b.Close()
	b.Close()
	if _, err := embeddedbroker.Start(embeddedbroker.Config{Port: -1}); err == nil {
		t.Error("Start(Port -1) succeeded, want an error")
	}
}

func mustStart(t *testing.T, cfg embeddedbroker.Config) *embeddedbroker.Broker {
	t.Helper()
	b, err := embeddedbroker.Start(cfg)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(b.Close)
	return b
}

func publish(ctx context.Context, t *testing.T, brokers []string, from, n int) {
	t.Helper()
	w := kafkabus.NewWriter(kafkabus.WriterConfig{Brokers: brokers, Topic: "t"})
	defer w.Close()
	var msgs []kafkabus.Message
	for i := from; i < from+n; i++ {
		msgs = append(msgs, kafkabus.Message{Key: fmt.Appendf(nil, "k%d", i), Value: []byte(strconv.Itoa(i))})
	}
	if err := w.Publish(ctx, msgs...); err != nil {
		t.Fatalf("Publish: %v", err)
	}
}

// consume runs group "g" until it has handled want messages (and committed
// them), then stops it and returns the values it saw.
func consume(ctx context.Context, t *testing.T, brokers []string, want int) []int {
	t.Helper()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var mu sync.Mutex
	var got []int
	done := make(chan struct{})
	h := func(_ context.Context, msgs []kafkabus.Message) error {
		mu.Lock()
		defer mu.Unlock()
		for _, m := range msgs {
			v, _ := strconv.Atoi(string(m.Value))
			got = append(got, v)
		}
		if len(got) >= want {
			select {
			case <-done:
			default:
				close(done)
			}
		}
		return nil
	}
	errc := make(chan error, 1)
	go func() {
		errc <- kafkabus.RunGroup(ctx, kafkabus.GroupConfig{
			Brokers: brokers, GroupID: "g", Topic: "t",
			HeartbeatInterval: 100 * time.Millisecond, SessionTimeout: 3 * time.Second,
		}, h)
	}()
	select {
	case <-done:
	case err := <-errc:
		t.Fatalf("RunGroup returned early: %v", err)
	case <-ctx.Done():
		t.Fatalf("consumed %d messages before timeout, want %d", len(got), want)
	}
	// The commit follows the handler's return: wait for it before leaving.
	for !maps.Equal(offsets(ctx, t, brokers, 4, "g"), offsets(ctx, t, brokers, 4)) {
		if ctx.Err() != nil {
			t.Fatal("offsets never committed")
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	if err := <-errc; err != nil {
		t.Fatalf("RunGroup: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	return slices.Clone(got)
}

// readValues reads every message of topic t with one plain reader per
// partition and returns their values.
func readValues(ctx context.Context, t *testing.T, brokers []string, partitions int) []int {
	t.Helper()
	ends := offsets(ctx, t, brokers, partitions)
	var got []int
	for p := range partitions {
		if ends[p] == 0 {
			continue
		}
		r := kafka.NewReader(kafka.ReaderConfig{Brokers: brokers, Topic: "t", Partition: p, MaxWait: 100 * time.Millisecond})
		for {
			m, err := r.ReadMessage(ctx)
			if err != nil {
				r.Close()
				t.Fatalf("reading partition %d: %v", p, err)
			}
			v, _ := strconv.Atoi(string(m.Value))
			got = append(got, v)
			if m.Offset+1 >= ends[p] {
				break
			}
		}
		r.Close()
	}
	slices.Sort(got)
	return got
}

// offsets returns each partition's end offset, or with group set, the
// group's committed offset.
func offsets(ctx context.Context, t *testing.T, brokers []string, partitions int, group ...string) map[int]int64 {
	t.Helper()
	tr := &kafka.Transport{}
	defer tr.CloseIdleConnections()
	c := &kafka.Client{Addr: kafka.TCP(brokers...), Transport: tr}
	out := map[int]int64{}
	if len(group) > 0 {
		resp, err := c.OffsetFetch(ctx, &kafka.OffsetFetchRequest{GroupID: group[0], Topics: map[string][]int{"t": seq(partitions)}})
		if err != nil {
			t.Fatalf("OffsetFetch: %v", err)
		}
		for _, p := range resp.Topics["t"] {
			out[p.Partition] = p.CommittedOffset
		}
		return out
	}
	var reqs []kafka.OffsetRequest
	for _, p := range seq(partitions) {
		reqs = append(reqs, kafka.LastOffsetOf(p))
	}
	resp, err := c.ListOffsets(ctx, &kafka.ListOffsetsRequest{Topics: map[string][]kafka.OffsetRequest{"t": reqs}})
	if err != nil {
		t.Fatalf("ListOffsets: %v", err)
	}
	for _, p := range resp.Topics["t"] {
		if p.Error != nil {
			t.Fatalf("ListOffsets partition %d: %v", p.Partition, p.Error)
		}
		out[p.Partition] = p.LastOffset
	}
	return out
}

func seq(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}
