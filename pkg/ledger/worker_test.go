package ledger

import (
	"context"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/convida/convida/pkg/outbox"
)

// countingStore records the command ids of each transaction and commits
// nothing.
type countingStore struct {
	mu           sync.Mutex
	transactions [][]string
}

func (s *countingStore) ApplyBatch(_ context.Context, cmds []Command) (*Book, error) {
	ids := make([]string, len(cmds))
	for i, c := range cmds {
		ids[i] = c.ID
	}
	s.mu.Lock()
	s.transactions = append(s.transactions, ids)
	s.mu.Unlock()
	return &Book{}, nil
}

func (s *countingStore) calls() [][]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.transactions)
}

type nopRelay struct{}

func (nopRelay) Relay(context.Context, []outbox.Record) error { return nil }

func commands(prefix string, n int) []Command {
	out := make([]Command, n)
	for i := range out {
		out[i] = Command{ID: prefix + strconv.Itoa(i), Type: CmdCreditSale}
	}
	return out
}

func lingeringWorker(linger time.Duration, commands int) (*Worker, *countingStore) {
	store := &countingStore{}
	w := NewWorker(store, nopRelay{}, nil, nil, zap.NewNop())
	w.Linger, w.LingerCommands = linger, commands
	return w, store
}

// TestWorkerLingerGathersBatches checks that partition batches arriving
// one after the other within the linger share one transaction.
func TestWorkerLingerGathersBatches(t *testing.T) {
	t.Parallel()
	w, store := lingeringWorker(500*time.Millisecond, 1000)
	var wg sync.WaitGroup
	for p := range 4 {
		wg.Go(func() {
			if err := w.Handle(context.Background(), commands("p"+strconv.Itoa(p)+"-", 2)); err != nil {
				t.Errorf("partition %d: %v", p, err)
			}
		})
		time.Sleep(20 * time.Millisecond) // each batch arrives alone
	}
	wg.Wait()
	if calls := store.calls(); len(calls) != 1 || len(calls[0]) != 8 {
		t.Errorf("transactions %v: want the 4 batches in one", calls)
	}
}

// TestWorkerLingerIsBounded checks that a lone small batch waits the
// linger and no longer, and that without a linger it goes at once.
func TestWorkerLingerIsBounded(t *testing.T) {
	t.Parallel()
	for _, linger := range []time.Duration{0, 50 * time.Millisecond} {
		w, store := lingeringWorker(linger, 1000)
		start := time.Now()
		if err := w.Handle(context.Background(), commands("a", 1)); err != nil {
			t.Fatal(err)
		}
		took := time.Since(start)
		if took < linger || took > linger+time.Second {
			t.Errorf("linger %v: a lone batch took %v", linger, took)
		}
		if n := len(store.calls()); n != 1 {
			t.Errorf("linger %v: %d transactions, want 1", linger, n)
		}
	}
}

// TestWorkerNoLingerWhenLarge checks that a transaction holding
// LingerCommands commands starts without waiting.
func TestWorkerNoLingerWhenLarge(t *testing.T) {
	t.Parallel()
	w, _ := lingeringWorker(time.Minute, 10)
	done := make(chan error, 1)
	go func() { done <- w.Handle(context.Background(), commands("a", 10)) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a batch of LingerCommands commands waited for the linger")
	}
}
