package e2e

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/convida/convida/pkg/ledger"
	"github.com/convida/convida/pkg/outbox"
	"github.com/convida/convida/pkg/postgres"
	"github.com/convida/convida/pkg/testenv"
)

// watchedStore is the real ledger store with a record of the transactions
// the worker asks of it, and two faults a test can inject: a command the
// database refuses, and gates that hold a transaction until the test opens
// them.
type watchedStore struct {
	ledger.Store
	refused string                   // command id whose transactions fail
	gates   map[string]chan struct{} // command id → closed when its transaction may go on

	mu           sync.Mutex
	transactions [][]string // command ids of each ApplyBatch call
	committed    atomic.Int64
}

var errRefused = errors.New("the database refuses this command")

func (w *watchedStore) ApplyBatch(ctx context.Context, cmds []ledger.Command) (*ledger.Book, error) {
	ids := make([]string, len(cmds))
	for i, c := range cmds {
		ids[i] = c.ID
	}
	w.mu.Lock()
	w.transactions = append(w.transactions, ids)
	w.mu.Unlock()
	for _, id := range ids {
		if gate, ok := w.gates[id]; ok {
			<-gate
		}
	}
	if slices.Contains(ids, w.refused) {
		return nil, errRefused
	}
	book, err := w.Store.ApplyBatch(ctx, cmds)
	if err == nil {
		w.committed.Add(1)
	}
	return book, err
}

func (w *watchedStore) calls() [][]string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.transactions)
}

func (s *stack) newWorker(store ledger.Store) *ledger.Worker {
	relay := outbox.NewRelay(postgres.NewOutboxStore(s.deps.Pool), s.deps.Events)
	return ledger.NewWorker(store, relay, nil, nil, zap.NewNop())
}

// TestLedgerGroupCommit hands the worker the batches of 16 partitions at
// once, as the consumer's partition goroutines do: they share
// transactions, and every wallet is still right to the cent.
func TestLedgerGroupCommit(t *testing.T) {
	t.Parallel()
	s := startStack(t, stackOptions{noLedger: true})
	st := newStream(t, s, 160, 3_200)
	store := &watchedStore{Store: postgres.NewLedgerStore(s.deps.Pool, s.deps.Now)}
	worker := s.newWorker(store)

	const partitions, batchSize = 16, 10
	byPartition := make([][]ledger.Command, partitions)
	for i, c := range st.cmds {
		p := (i % len(st.members)) % partitions // a member's commands stay on one partition
		byPartition[p] = append(byPartition[p], c)
	}
	var wg sync.WaitGroup
	var batches atomic.Int64
	for p := range partitions {
		wg.Go(func() {
			cmds := byPartition[p]
			for i := 0; i < len(cmds); i += batchSize {
				batches.Add(1)
				if err := worker.Handle(context.Background(), cmds[i:min(i+batchSize, len(cmds))]); err != nil {
					t.Errorf("partition %d: Handle: %v", p, err)
					return
				}
			}
		})
	}
	wg.Wait()
	t.Logf("%d partition batches in %d transactions", batches.Load(), store.committed.Load())
	if store.committed.Load() >= batches.Load() {
		t.Errorf("%d transactions for %d batches: concurrent batches did not share transactions", store.committed.Load(), batches.Load())
	}
	st.verify(t, s)
}

// TestLedgerGroupCommitIsolatesAFailure checks that a batch whose
// transaction fails gets its error alone: the batches it shared the
// transaction with are committed, and nothing of its own.
func TestLedgerGroupCommitIsolatesAFailure(t *testing.T) {
	t.Parallel()
	s := startStack(t, stackOptions{noLedger: true})
	st := newStream(t, s, 9, 9)
	c := st.cmds // one sale for each of 9 members
	store := &watchedStore{Store: postgres.NewLedgerStore(s.deps.Pool, s.deps.Now), refused: c[6].ID,
		gates: map[string]chan struct{}{c[0].ID: make(chan struct{}), c[1].ID: make(chan struct{}), c[2].ID: make(chan struct{})}}
	worker := s.newWorker(store)

	handle := func(cmds ...ledger.Command) <-chan error {
		done := make(chan error, 1)
		go func() { done <- worker.Handle(context.Background(), cmds) }()
		return done
	}
	// Three held transactions take every flusher of the worker, so that the
	// three batches sent next wait in its queue together.
	var held []<-chan error
	for i := range 3 {
		held = append(held, handle(c[i]))
		testenv.Eventually(t, 10*time.Second, "a held transaction", func() bool { return len(store.calls()) == i+1 })
	}
	good1, refused, good2 := handle(c[3], c[4]), handle(c[5], c[6]), handle(c[7], c[8])
	time.Sleep(200 * time.Millisecond) // the three are queued by now
	close(store.gates[c[0].ID])        // one flusher frees up and takes the whole queue
	for what, done := range map[string]<-chan error{"first": good1, "second": good2} {
		if err := <-done; err != nil {
			t.Errorf("the %s good batch: %v, want it committed", what, err)
		}
	}
	if err := <-refused; !errors.Is(err, errRefused) {
		t.Errorf("the refused batch: %v, want %v", err, errRefused)
	}
	close(store.gates[c[1].ID])
	close(store.gates[c[2].ID])
	for _, done := range held {
		if err := <-done; err != nil {
			t.Errorf("held batch: %v", err)
		}
	}

	merged := false
	for _, ids := range store.calls() {
		merged = merged || (len(ids) == 6 && slices.Contains(ids, c[6].ID))
	}
	if !merged {
		t.Errorf("transactions %v: the three queued batches never shared one", store.calls())
	}
	for i, cmd := range c {
		want := 1
		if i == 5 || i == 6 {
			want = 0 // the refused batch: nothing of it is committed
		}
		if got := s.count(`SELECT count(*) FROM processed_commands WHERE merchant_id = $1 AND command_id = $2`,
			st.tn.merchant.ID, cmd.ID); got != want {
			t.Errorf("command %d (%s): %d processed, want %d", i, cmd.ID, got, want)
		}
	}
	if err := postgres.CheckLedger(context.Background(), s.deps.Pool); err != nil {
		t.Error(err)
	}
}
