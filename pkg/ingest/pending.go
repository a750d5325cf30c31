package ingest

import (
	"context"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/convida/convida/pkg/inbound"
	"github.com/convida/convida/pkg/intake"
	"github.com/convida/convida/pkg/retry"
)

// MaxPendingRecords bounds the records kept in memory while the broker is
// unreachable; past it the oldest are dropped (and logged).
const MaxPendingRecords = 10_000

// pendingRecords keeps the records of deliveries answered while the
// broker could not take them (the 503s of an outage, the 4xx answered
// meanwhile) and publishes them in the background once it can. They live
// in memory only: a process that dies while the broker is down loses them
// (docs/architecture.md). One goroutine drains the queue, started when the
// queue stops being empty and ending when it is empty again, so a burst of
// refused deliveries never spawns a goroutine each.
type pendingRecords struct {
	pub intake.Publisher
	log *zap.Logger
	max int
	// backoff bounds the waits between attempts of the drainer.
	backoff retry.Backoff

	mu       sync.Mutex
	items    []inbound.Delivery
	draining bool
	failing  bool // the drainer's last attempt failed
	dropped  int
}

func newPendingRecords(pub intake.Publisher, log *zap.Logger) *pendingRecords {
	return &pendingRecords{pub: pub, log: log, max: MaxPendingRecords,
		backoff: retry.Backoff{Base: 100 * time.Millisecond, Max: 5 * time.Second}}
}

// brokerDown reports whether the drainer's last attempt failed or records
// are waiting: a record then joins the queue at once instead of waiting
// for a broker known or likely to be down (a 503 queued its record: the
// drainer's first attempt may take PublishTimeout to fail, which would
// delay the answer of a refused delivery that long), and does not overtake
// the records queued before it.
func (p *pendingRecords) brokerDown() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.failing || len(p.items) > 0
}

// add queues d and starts the drainer unless it runs.
func (p *pendingRecords) add(d inbound.Delivery) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.items) >= p.max {
		p.items = p.items[1:]
		p.dropped++
		if p.dropped == 1 || p.dropped%1000 == 0 {
			p.log.Error("delivery records dropped: the broker is unreachable and the queue is full",
				zap.Int("dropped", p.dropped), zap.Int("max", p.max))
		}
	}
	p.items = append(p.items, d)
	if !p.draining {
		p.draining = true
		go p.drain()
	}
}

// drain publishes the queued records in order, waiting with backoff after
// each failure, until the queue is empty.
func (p *pendingRecords) drain() {
	b := p.backoff
	for {
		p.mu.Lock()
		if len(p.items) == 0 {
			p.draining, p.failing = false, false
			p.mu.Unlock()
			return
		}
		d := p.items[0]
		p.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), PublishTimeout)
		err := p.pub.PublishDelivery(ctx, d, nil)
		cancel()
		if err != nil {
			p.log.Debug("delivery record still waiting for the broker", zap.Error(err))
			p.mu.Lock()
			p.failing = true
			p.mu.Unlock()
			time.Sleep(b.Next())
			continue
		}
		b.Reset()
		p.mu.Lock()
		p.failing = false
		// add may have dropped the head meanwhile: remove d only if it is
		// still there.
		if len(p.items) > 0 && p.items[0].ID == d.ID {
			p.items = p.items[1:]
		}
		p.mu.Unlock()
	}
}
