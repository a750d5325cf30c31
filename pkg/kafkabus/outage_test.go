package kafkabus_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/kafkabus"
	"github.com/convida/convida/pkg/testenv"
)

// TestRunGroupWaitsForTheBrokers: a consumer started while its broker is
// down does not return (a program would stop); once the broker is back on
// its address it consumes. The Probe says the same about the broker.
func TestRunGroupWaitsForTheBrokers(t *testing.T) {
	t.Parallel()
	broker := testenv.StartBrokerServer(t)
	brokers := broker.Addrs()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := kafkabus.EnsureTopics(ctx, brokers, kafkabus.TopicSpec{Name: "later", Partitions: 1}); err != nil {
		t.Fatal(err)
	}
	probe := kafkabus.NewProbe(brokers)
	defer probe.Close()
	if err := probe.Check(ctx); err != nil {
		t.Fatalf("Probe with the broker up: %v", err)
	}
	broker.Stop()
	time.Sleep(kafkabus.ProbeTTL)
	if err := probe.Check(ctx); !apperr.Is(err, apperr.Unavailable) {
		t.Fatalf("Probe with the broker down = %v, want apperr.Unavailable", err)
	}

	var got atomic.Int64
	run, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	core, logs := observer.New(zap.WarnLevel)
	cfg := fastGroup(t, brokers, "waits", "later")
	cfg.Logger = zap.New(core)
	go func() {
		done <- kafkabus.RunGroup(run, cfg, func(_ context.Context, msgs []kafkabus.Message) error {
			got.Add(int64(len(msgs)))
			return nil
		})
	}()
	select {
	case err := <-done:
		stop()
		t.Fatalf("RunGroup returned %v with the broker down, want it to wait", err)
	case <-time.After(2 * time.Second):
	}
	// Tried again every 100 ms at most (MaxRetryBackoff), said once.
	if n := logs.Len(); n != 1 {
		t.Errorf("%d warnings in 2 s of waiting for the broker, want 1 (at most one every 30 s): %v", n, logs.All())
	}
	defer func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("RunGroup returned %v after its cancel, want nil", err)
		}
	}()

	broker.Start()
	publishN(t, newWriter(t, brokers, "later"), 0, 3, 1)
	deadline := time.Now().Add(30 * time.Second)
	for got.Load() < 3 {
		if time.Now().After(deadline) {
			t.Fatalf("consumed %d of 3 messages 30s after the broker came back", got.Load())
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(kafkabus.ProbeTTL)
	if err := probe.Check(ctx); err != nil {
		t.Errorf("Probe with the broker back: %v", err)
	}
}
