package kafkabus_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/kafkabus"
	"github.com/convida/convida/pkg/testenv"
)

func TestPublishSameKeySamePartitionAndAcked(t *testing.T) {
	t.Parallel()
	const topic, parts = "orders", 16
	brokers := mustTopic(t, topic, parts)
	w := newWriter(t, brokers, topic)

	// 8 concurrent publishers, 40 keys, 25 single-message calls each.
	const publishers, perPublisher, keys = 8, 25, 40
	var wg sync.WaitGroup
	errs := make(chan error, publishers*perPublisher)
	for g := range publishers {
		wg.Go(func() {
			for i := range perPublisher {
				n := g*perPublisher + i
				msg := kafkabus.Message{
					Key:     fmt.Appendf(nil, "member-%d", n%keys),
					Value:   fmt.Appendf(nil, "%d", n),
					Headers: map[string]string{"h": "v"},
				}
				if err := w.Publish(context.Background(), msg); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("Publish: %v", err)
	}

	// Publish returned after the ack: everything is in the log now.
	var total int64
	for _, end := range endOffsets(t, brokers, topic, parts) {
		total += end
	}
	if want := int64(publishers * perPublisher); total != want {
		t.Fatalf("messages in topic after Publish returned = %d, want %d", total, want)
	}

	partOf := map[string]int{}
	used := map[int]bool{}
	for _, m := range readAll(t, brokers, topic, parts) {
		k := string(m.Key)
		if p, ok := partOf[k]; ok && p != m.Partition {
			t.Errorf("key %s in partitions %d and %d, want one", k, p, m.Partition)
		}
		partOf[k] = m.Partition
		used[m.Partition] = true
		if len(m.Headers) != 1 || m.Headers[0].Key != "h" || string(m.Headers[0].Value) != "v" {
			t.Errorf("headers = %v, want h=v", m.Headers)
		}
	}
	if len(partOf) != keys {
		t.Errorf("distinct keys read = %d, want %d", len(partOf), keys)
	}
	if len(used) < 8 {
		t.Errorf("%d keys used only %d of %d partitions; hash balancer not spreading", keys, len(used), parts)
	}
}

func TestPublishTopicOverrideAndErrors(t *testing.T) {
	t.Parallel()
	brokers := mustTopic(t, "a", 2)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := kafkabus.EnsureTopics(ctx, brokers, kafkabus.TopicSpec{Name: "b", Partitions: 2}); err != nil {
		t.Fatal(err)
	}

	w := newWriter(t, brokers, "a")
	if err := w.Publish(ctx, kafkabus.Message{Value: []byte("to-a")}, kafkabus.Message{Topic: "b", Value: []byte("to-b")}); err != nil {
		t.Fatalf("Publish: %v", err)
	}
	for _, topic := range []string{"a", "b"} {
		got := readAll(t, brokers, topic, 2)
		if len(got) != 1 || string(got[0].Value) != "to-"+topic {
			t.Errorf("topic %s holds %d messages (%v), want the one sent to it", topic, len(got), got)
		}
	}

	tests := []struct {
		name   string
		writer string
		msg    kafkabus.Message
		want   apperr.Code
	}{
		{"no topic anywhere", "", kafkabus.Message{Value: []byte("x")}, apperr.Internal},
		{"missing topic", "nope", kafkabus.Message{Value: []byte("x")}, apperr.Unavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWriter(t, brokers, tt.writer)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			err := w.Publish(ctx, tt.msg)
			if got := apperr.CodeOf(err); got != tt.want {
				t.Errorf("Publish error = %v (code %q), want code %q", err, got, tt.want)
			}
		})
	}
}

func TestEnsureTopicsConcurrentAndIdempotent(t *testing.T) {
	t.Parallel()
	brokers := testenv.MustBroker(t)
	specs := []kafkabus.TopicSpec{
		{Name: "x", Partitions: 3}, {Name: "y"},
		{Name: "z", Partitions: 1, ReplicationFactor: 1}, {Name: "w", Partitions: 2, ReplicationFactor: -1},
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() { errs[i] = kafkabus.EnsureTopics(ctx, brokers, specs...) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("EnsureTopics #%d: %v", i, err)
		}
	}
	if err := kafkabus.EnsureTopics(ctx, brokers, specs...); err != nil {
		t.Errorf("EnsureTopics again: %v", err)
	}
	for _, tt := range []struct {
		topic string
		parts int
	}{{"x", 3}, {"y", 16}, {"z", 1}, {"w", 2}} {
		if got := partitionCount(t, brokers, tt.topic); got != tt.parts {
			t.Errorf("topic %s has %d partitions, want %d", tt.topic, got, tt.parts)
		}
	}
	for _, bad := range []kafkabus.TopicSpec{{Name: "bad", Partitions: -1}, {Name: "bad", ReplicationFactor: -2}, {}} {
		if err := kafkabus.EnsureTopics(ctx, brokers, bad); apperr.CodeOf(err) != apperr.Invalid {
			t.Errorf("EnsureTopics(%+v) = %v, want code %q", bad, err, apperr.Invalid)
		}
	}
}

// TestPublishEachRefusesOnlyTheOversizedMessage: a message over BatchBytes
// is refused before anything is sent, and the others of the call, one of
// them exactly BatchBytes as kafka-go counts it, are written.
func TestPublishEachRefusesOnlyTheOversizedMessage(t *testing.T) {
	t.Parallel()
	const topic, parts = "sized", 4
	brokers := mustTopic(t, topic, parts)
	w := newWriter(t, brokers, topic)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	headers := map[string]string{"event-type": "member.created"}
	// kafka-go's size: 22 + key + value + headers (1 count, 1+10 key, 1+14 value).
	sized := func(key string, size int) kafkabus.Message {
		return kafkabus.Message{Key: []byte(key), Headers: headers, Value: make([]byte, size-22-len(key)-1-11-15)}
	}
	msgs := []kafkabus.Message{
		{Key: []byte("k0"), Value: []byte("small-0")},
		sized("k1", kafkabus.BatchBytes+1),
		sized("k2", kafkabus.BatchBytes),
		{Key: []byte("k3"), Value: []byte("small-3")},
	}
	refused, err := w.PublishEach(ctx, msgs...)
	if err != nil {
		t.Fatalf("PublishEach: %v", err)
	}
	if len(refused) != 1 || refused[0].Index != 1 || !errors.Is(refused[0].Err, kafkabus.ErrTooLarge) {
		t.Fatalf("refused = %+v, want only message 1, ErrTooLarge", refused)
	}
	got := map[string]int{}
	for _, m := range readAll(t, brokers, topic, parts) {
		got[string(m.Key)] = len(m.Value)
	}
	want := map[string]int{"k0": 7, "k2": len(msgs[2].Value), "k3": 7}
	if !maps.Equal(got, want) {
		t.Errorf("written (key → value bytes) = %v, want %v", got, want)
	}

	// Publish treats the refusal as a failure, after writing the others.
	if err := w.Publish(ctx, msgs[1]); apperr.CodeOf(err) != apperr.Unavailable || !errors.Is(err, kafkabus.ErrTooLarge) {
		t.Errorf("Publish(oversized) = %v, want apperr.Unavailable wrapping ErrTooLarge", err)
	}

	// Full batches of small messages on one partition stay under the
	// broker's default message.max.bytes (1,048,588): BatchBytes leaves
	// room for what kafka-go does not count.
	full := make([]kafkabus.Message, 1000)
	for i := range full {
		full[i] = kafkabus.Message{Key: []byte("same"), Value: make([]byte, 1990)}
	}
	if refused, err := w.PublishEach(ctx, full...); err != nil || len(refused) > 0 {
		t.Errorf("PublishEach(1000 x 2 kB on one partition) = %v, %v; want all written", refused, err)
	}
}

// TestPublishEachIsolatesABrokerRefusal: the broker refuses a whole
// partition batch when a record is over the topic's max.message.bytes; the
// writer tries each message again alone, so the neighbours in that batch
// are written and only the culprit is refused.
func TestPublishEachIsolatesABrokerRefusal(t *testing.T) {
	t.Parallel()
	const topic = "strict"
	brokers := testenv.MustBroker(t)
	limit := "2000"
	resp, err := client(t, brokers).CreateTopics(context.Background(), &kafka.CreateTopicsRequest{Topics: []kafka.TopicConfig{{
		Topic: topic, NumPartitions: 1, ReplicationFactor: 1,
		ConfigEntries: []kafka.ConfigEntry{{ConfigName: "max.message.bytes", ConfigValue: limit}},
	}}})
	if err != nil || resp.Errors[topic] != nil {
		t.Fatalf("CreateTopics: %v %v", err, resp)
	}
	w := newWriter(t, brokers, topic)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	msgs := []kafkabus.Message{
		{Key: []byte("a"), Value: []byte("before")},
		{Key: []byte("b"), Value: make([]byte, 5000)},
		{Key: []byte("c"), Value: []byte("after")},
	}
	refused, err := w.PublishEach(ctx, msgs...)
	if err != nil {
		t.Fatalf("PublishEach: %v", err)
	}
	if len(refused) != 1 || refused[0].Index != 1 || !errors.Is(refused[0].Err, kafka.MessageSizeTooLarge) {
		t.Fatalf("refused = %+v, want only message 1, MessageSizeTooLarge", refused)
	}
	var got []string
	for _, m := range readAll(t, brokers, topic, 1) {
		got = append(got, string(m.Key)+"="+string(m.Value))
	}
	if want := []string{"a=before", "c=after"}; !slices.Equal(got, want) {
		t.Errorf("written = %v, want %v", got, want)
	}
}
