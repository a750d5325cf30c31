package ingest

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/google/uuid"
	"go.uber.org/zap"

	"github.com/convida/convida/pkg/embeddedbroker"
	"github.com/convida/convida/pkg/inbound"
	"github.com/convida/convida/pkg/kafkabus"
	"github.com/convida/convida/pkg/retry"
	"github.com/convida/convida/pkg/testenv"
	"github.com/convida/convida/pkg/topic"
)

// The queue of records waiting for the broker keeps the newest MaxPendingRecords
// (here 3) in order of arrival, and empties once the broker is there. The
// publisher is the real one, over TCP to a port where the broker starts
// later; pkg/e2e's broker outage test covers the records reaching
// PostgreSQL and the answers meanwhile.
func TestPendingRecordsKeepTheNewestInOrderUntilTheBrokerIsThere(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	port := ln.Addr().(*net.TCPAddr).Port
	_ = ln.Close()
	w := kafkabus.NewWriter(kafkabus.WriterConfig{Brokers: []string{addr}, Topic: topic.Commands})
	t.Cleanup(func() { _ = w.Close() })
	p := newPendingRecords(topic.NewCommandBus(w), zap.NewNop())
	p.backoff = retry.Backoff{Base: 10 * time.Millisecond, Max: 50 * time.Millisecond}
	p.max = 3
	merchant := uuid.New()
	var ids []uuid.UUID
	for range 4 {
		d := inbound.Delivery{ID: uuid.New(), MerchantID: merchant, Provider: "guru", Outcome: inbound.DeliveryUnauthorized,
			HTTPStatus: 401, Body: []byte(`{}`), ReceivedAt: time.Now()}
		ids = append(ids, d.ID)
		p.add(d)
	}
	if !p.brokerDown() {
		t.Error("records are waiting, yet the queue does not report the broker down")
	}
	p.mu.Lock()
	var queued []uuid.UUID
	for _, d := range p.items {
		queued = append(queued, d.ID)
	}
	dropped := p.dropped
	p.mu.Unlock()
	// The oldest record went when the fourth found the queue full.
	if dropped != 1 || len(queued) != 3 || queued[0] != ids[1] || queued[1] != ids[2] || queued[2] != ids[3] {
		t.Errorf("queued %v (dropped %d), want %v (dropped 1)", queued, dropped, ids[1:])
	}

	b, err := embeddedbroker.Start(embeddedbroker.Config{Port: port, DataDir: t.TempDir(), Partitions: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := kafkabus.EnsureTopics(ctx, b.Addrs(), topic.Specs(1)...); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 60*time.Second, "the queue emptied", func() bool { return !p.brokerDown() })
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.items) != 0 || p.draining {
		t.Errorf("%d records still queued, draining %v", len(p.items), p.draining)
	}
}
