package kafkabus_test

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/convida/convida/pkg/kafkabus"
	"github.com/convida/convida/pkg/testenv"
)

// BenchmarkPublishOneByOne: 32 concurrent callers, each publishing one
// message per call and waiting for its ack, as ingest does per request.
func BenchmarkPublishOneByOne(b *testing.B) {
	brokers := testenv.MustBroker(b)
	ctx := context.Background()
	if err := kafkabus.EnsureTopics(ctx, brokers, kafkabus.TopicSpec{Name: "bench", Partitions: 16}); err != nil {
		b.Fatal(err)
	}
	w := kafkabus.NewWriter(kafkabus.WriterConfig{Brokers: brokers, Topic: "bench"})
	defer w.Close()
	var n atomic.Int64
	value := make([]byte, 200)
	b.SetParallelism(max(1, 32/runtime.GOMAXPROCS(0))) // 32 goroutines
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := n.Add(1)
			if err := w.Publish(ctx, kafkabus.Message{Key: fmt.Appendf(nil, "member-%d", i%1000), Value: value}); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "msgs/s")
}

// BenchmarkRunGroupConsume: a backlog of b.N messages over 16 partitions,
// consumed by one member with a no-op handler, commits included.
func BenchmarkRunGroupConsume(b *testing.B) {
	brokers := testenv.MustBroker(b)
	ctx := context.Background()
	if err := kafkabus.EnsureTopics(ctx, brokers, kafkabus.TopicSpec{Name: "bench", Partitions: 16}); err != nil {
		b.Fatal(err)
	}
	w := kafkabus.NewWriter(kafkabus.WriterConfig{Brokers: brokers, Topic: "bench"})
	defer w.Close()
	value := make([]byte, 200)
	for start := 0; start < b.N; start += 1000 {
		var msgs []kafkabus.Message
		for i := start; i < min(start+1000, b.N); i++ {
			msgs = append(msgs, kafkabus.Message{Key: fmt.Appendf(nil, "member-%d", i%1000), Value: value})
		}
		if err := w.Publish(ctx, msgs...); err != nil {
			b.Fatal(err)
		}
	}
	var handled atomic.Int64
	done := make(chan struct{})
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	b.ResetTimer()
	start := time.Now()
	go func() {
		_ = kafkabus.RunGroup(runCtx, kafkabus.GroupConfig{Brokers: brokers, GroupID: "bench", Topic: "bench", HeartbeatInterval: 100 * time.Millisecond},
			func(_ context.Context, msgs []kafkabus.Message) error {
				if handled.Add(int64(len(msgs))) >= int64(b.N) {
					select {
					case <-done:
					default:
						close(done)
					}
				}
				return nil
			})
	}()
	<-done
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "msgs/s")
}
