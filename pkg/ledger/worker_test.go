package ledger

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
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

// flakyRelay fails its first failures calls, then records what it relays.
type flakyRelay struct {
	mu       sync.Mutex
	failures int
	relayed  []outbox.Record
}

func (r *flakyRelay) Relay(_ context.Context, recs []outbox.Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.failures > 0 {
		r.failures--
		return errors.New("kafka: publish failed")
	}
	r.relayed = append(r.relayed, recs...)
	return nil
}

func (r *flakyRelay) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.relayed)
}

// recordsStore commits nothing and returns a book with n events per call.
type recordsStore struct{ n int }

func (s recordsStore) ApplyBatch(context.Context, []Command) (*Book, error) {
	b := &Book{}
	for range s.n {
		b.Records = append(b.Records, outbox.Record{EventID: uuid.New()})
	}
	return b, nil
}

// TestWorkerRelaysAgainAfterAFailedRelay: the events of a transaction whose
// relay failed after the commit (the broker away for a moment, twice) are
// relayed by the worker itself within about two seconds — not left to the
// outbox sweep's 30 s — and the batch is not failed for it.
func TestWorkerRelaysAgainAfterAFailedRelay(t *testing.T) {
	t.Parallel()
	relay := &flakyRelay{failures: 2}
	w := NewWorker(recordsStore{n: 3}, relay, nil, nil, zap.NewNop())
	start := time.Now()
	if err := w.Handle(context.Background(), commands("c", 1)); err != nil {
		t.Fatalf("Handle = %v, want nil: the commit stands", err)
	}
	for relay.count() < 3 {
		if time.Since(start) > 3*time.Second {
			t.Fatalf("%d of 3 events relayed 3 s after a failed relay, want them within about 2 s", relay.count())
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Logf("relayed %v after the failed relay", time.Since(start).Round(time.Millisecond))
	time.Sleep(time.Second)
	if n := relay.count(); n != 3 {
		t.Errorf("%d events relayed, want each of the 3 once", n)
	}
}

// TestAwaitedKinds: the outcomes the edges wait for are published on the
// fast path; those of the pipeline's own commands, which nobody waits
// for, are not.
func TestAwaitedKinds(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{CmdApprove, CmdReject, CmdRedeem, CmdRedemptionResult} {
		if !Awaited(kind) {
			t.Errorf("%s: not awaited; the API waits for it", kind)
		}
	}
	for _, kind := range []string{CmdCreditSale, CmdRefund, CmdRelease} {
		if Awaited(kind) {
			t.Errorf("%s: awaited; nobody waits for it", kind)
		}
	}
}
