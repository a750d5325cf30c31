package main

import (
	"context"
	"sort"
	"sync"
	"time"

	"github.com/convida/convida/pkg/ledger"
	"github.com/convida/convida/pkg/outbox"
	"github.com/convida/convida/pkg/program"
)

// ledgerTrace is the -trace-ledger diagnostic: program.Ledger, the ledger
// role of production, with its store and relay timed, so that the report
// can say how long a batch spends in ApplyBatch and in the relay.
type ledgerTrace struct {
	mu      sync.Mutex
	applies []batchTiming
	relays  []time.Duration
}

type batchTiming struct {
	size int
	took time.Duration
}

func (t *ledgerTrace) run(ctx context.Context, d *program.Deps) error {
	l := program.NewLedger(d)
	l.Store = timedStore{next: l.Store, trace: t}
	l.Relay = timedRelay{next: l.Relay, trace: t}
	return l.Run(ctx)
}

type timedStore struct {
	next  ledger.Store
	trace *ledgerTrace
}

func (s timedStore) ApplyBatch(ctx context.Context, cmds []ledger.Command) (*ledger.Book, error) {
	start := time.Now()
	book, err := s.next.ApplyBatch(ctx, cmds)
	if err == nil {
		s.trace.mu.Lock()
		s.trace.applies = append(s.trace.applies, batchTiming{size: len(cmds), took: time.Since(start)})
		s.trace.mu.Unlock()
	}
	return book, err
}

type timedRelay struct {
	next  ledger.Relayer
	trace *ledgerTrace
}

func (r timedRelay) Relay(ctx context.Context, recs []outbox.Record) error {
	start := time.Now()
	err := r.next.Relay(ctx, recs)
	r.trace.mu.Lock()
	r.trace.relays = append(r.trace.relays, time.Since(start))
	r.trace.mu.Unlock()
	return err
}

// traceSummary is what the report prints of a trace.
type traceSummary struct {
	Batches                        int
	MeanSize                       float64
	SizeP50, SizeMax               int
	ApplyP50, ApplyP99, ApplyMax   time.Duration
	ApplyTotal                     time.Duration
	RelayP50, RelayP99, RelayTotal time.Duration
	PerCommand                     time.Duration // ApplyTotal / commands
}

func (t *ledgerTrace) summary() traceSummary {
	t.mu.Lock()
	defer t.mu.Unlock()
	var s traceSummary
	if len(t.applies) == 0 {
		return s
	}
	sizes := make([]int, len(t.applies))
	took := make([]time.Duration, len(t.applies))
	cmds := 0
	for i, a := range t.applies {
		sizes[i], took[i] = a.size, a.took
		cmds += a.size
		s.ApplyTotal += a.took
	}
	sort.Ints(sizes)
	s.Batches, s.MeanSize = len(sizes), float64(cmds)/float64(len(sizes))
	s.SizeP50, s.SizeMax = sizes[len(sizes)/2], sizes[len(sizes)-1]
	s.ApplyP50, s.ApplyP99, s.ApplyMax = percentiles(took)
	s.PerCommand = s.ApplyTotal / time.Duration(cmds)
	relays := append([]time.Duration(nil), t.relays...)
	for _, r := range relays {
		s.RelayTotal += r
	}
	s.RelayP50, s.RelayP99, _ = percentiles(relays)
	return s
}
