package ingest

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"go.uber.org/zap"

	"github.com/convida/convida/pkg/inbound"
	"github.com/convida/convida/pkg/ledger"
	"github.com/convida/convida/pkg/retry"
)

// flakyBroker refuses every publish while down.
type flakyBroker struct {
	mu   sync.Mutex
	down bool
	got  []inbound.Delivery
}

func (b *flakyBroker) PublishDelivery(_ context.Context, d inbound.Delivery, _ *ledger.Command) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.down {
		return errors.New("broker down")
	}
	b.got = append(b.got, d)
	return nil
}

func (b *flakyBroker) set(down bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.down = down
}

func (b *flakyBroker) records() []inbound.Delivery {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]inbound.Delivery(nil), b.got...)
}

func (b *flakyBroker) published() []uuid.UUID {
	var ids []uuid.UUID
	for _, d := range b.records() {
		ids = append(ids, d.ID)
	}
	return ids
}

func TestPendingRecordsArePublishedInOrderOnceTheBrokerIsBack(t *testing.T) {
	t.Parallel()
	b := &flakyBroker{down: true}
	p := newPendingRecords(b, zap.NewNop())
	p.backoff = retry.Backoff{Base: time.Millisecond, Max: 5 * time.Millisecond}
	p.max = 3
	var ids []uuid.UUID
	for range 4 {
		d := inbound.Delivery{ID: uuid.New()}
		ids = append(ids, d.ID)
		p.add(d)
	}
	deadline := time.Now().Add(5 * time.Second)
	for !p.brokerDown() && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if !p.brokerDown() {
		t.Fatal("the queue does not report the broker down")
	}
	b.set(false)
	for len(b.published()) < 3 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(20 * time.Millisecond)
	got := b.published()
	// The oldest record went when the fourth found the queue full.
	if len(got) != 3 || got[0] != ids[1] || got[1] != ids[2] || got[2] != ids[3] {
		t.Errorf("published %v, want %v", got, ids[1:])
	}
	if p.brokerDown() {
		t.Error("the queue still reports the broker down")
	}
}
