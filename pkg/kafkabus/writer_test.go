package kafkabus_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

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
