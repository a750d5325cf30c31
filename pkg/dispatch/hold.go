package dispatch

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/convida/convida/pkg/webhook"
)

// queued is a job in a lane's queue: stored (a row in Postgres) when held
// is nil, else held in memory for the consumer's batch.
type queued struct {
	job  webhook.Job
	held *hold
}

// outcome is a job's outcome on its way to FinishJobs; held is set when the
// job has no row and its batch waits for the outcome to be recorded.
type outcome struct {
	webhook.JobOutcome
	held *hold
}

// heldJob is a held job as its batch sees it.
type heldJob struct {
	job  webhook.Job
	lane *lane
	*hold
}

// hold is the state of a job handed to its lane without a row. Two parties
// race for it: the lane's worker, whose attempt ends and must be recorded,
// and the consumer's batch, which at its deadline writes the row of a job
// still owed. Whichever comes first decides, under mu: once the worker
// settles, no row is written, and the batch waits for the outcome; once the
// batch takes it, the worker records its outcome against the row.
type hold struct {
	mu    sync.Mutex
	state holdState

	storedCh chan struct{}   // closed once the batch's write of the row returned
	storeErr error           // set before storedCh is closed
	done     chan struct{}   // closed once the outcome is recorded or dropped
	err      error           // set before done is closed
	progress chan<- struct{} // the batch's: a token when done is closed
}

type holdState int

const (
	holdWaiting   holdState = iota // queued or in flight
	holdRecording                  // the worker records the outcome; no row is ever written
	holdStoring                    // the batch writes, or wrote, the row
)

func newHold(progress chan<- struct{}) *hold {
	return &hold{storedCh: make(chan struct{}), done: make(chan struct{}), progress: progress}
}

// settle is the worker's claim once its attempt is over (or will not be
// made). It reports whether the job has a row, waiting for the batch's
// write if one is under way; false means the worker must record the
// outcome and call finish. Later calls give the same answer.
func (h *hold) settle() (stored bool) {
	h.mu.Lock()
	if h.state == holdWaiting {
		h.state = holdRecording
	}
	state := h.state
	h.mu.Unlock()
	if state == holdRecording {
		return false
	}
	<-h.storedCh
	// A failed write leaves no row: the worker records as for a held job
	// (the batch comes again anyway).
	return h.storeErr == nil
}

// takeForStore is the batch's claim at its deadline: true if the job's
// attempt is not over, so the batch must write its row.
func (h *hold) takeForStore() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.state != holdWaiting {
		return false
	}
	h.state = holdStoring
	return true
}

// recorded reports whether the outcome is recorded (or dropped).
func (h *hold) recorded() bool {
	select {
	case <-h.done:
		return true
	default:
		return false
	}
}

// isStored reports whether the batch took the job (after takeForStore).
func (h *hold) isStored() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.state == holdStoring
}

// rowWritten reports, without waiting, whether the batch took the job and
// its row is written: from then on the job has a lease to renew.
func (h *hold) rowWritten() bool {
	h.mu.Lock()
	storing := h.state == holdStoring
	h.mu.Unlock()
	if !storing {
		return false
	}
	select {
	case <-h.storedCh:
		return h.storeErr == nil
	default:
		return false
	}
}

// stored publishes the result of the batch's write of the row.
func (h *hold) stored(err error) {
	h.storeErr = err
	close(h.storedCh)
}

// finish publishes the result of recording the outcome of a settled job.
func (h *hold) finish(err error) {
	h.err = err
	close(h.done)
	h.progress <- struct{}{} // never blocks: the channel has a slot per job
}

// batchWait is one batch's patience: it waits for a lane while the lane
// makes attempts (one that made none for Hold is dead or very slow), and
// for MaxHold in all.
type batchWait struct {
	d        *Dispatcher
	deadline time.Time
	watches  map[*lane]*laneWatch
}

type laneWatch struct {
	seen  int64 // the lane's worked count when last looked at
	moved time.Time
}

func (d *Dispatcher) newWait() *batchWait {
	return &batchWait{d: d, deadline: time.Now().Add(d.cfg.MaxHold), watches: map[*lane]*laneWatch{}}
}

// moving reports whether l made an attempt within Hold, or the batch has
// not yet watched it that long.
func (w *batchWait) moving(l *lane, now time.Time) bool {
	lw := w.watches[l]
	if lw == nil {
		lw = &laneWatch{seen: l.worked.Load(), moved: now}
		w.watches[l] = lw
	}
	if n := l.worked.Load(); n != lw.seen {
		lw.seen, lw.moved = n, now
	}
	return now.Sub(lw.moved) < w.d.cfg.Hold
}

// tick is how often a wait looks at its lanes.
func (w *batchWait) tick() time.Duration { return w.d.cfg.Hold / 4 }

// reserve waits for a slot in l while l moves.
func (w *batchWait) reserve(ctx context.Context, l *lane) bool {
	for {
		if l.reserve() {
			return true
		}
		now := time.Now()
		if !now.Before(w.deadline) || !w.moving(l, now) {
			return false
		}
		timer := time.NewTimer(min(w.tick(), w.deadline.Sub(now)))
		select {
		case l.slots <- struct{}{}:
			timer.Stop()
			return true
		case <-timer.C:
		case <-ctx.Done():
			timer.Stop()
			return false
		}
	}
}

// await returns once each held job is delivered and logged, or stored:
// when the lanes holding the ones left stop moving, or at the deadline,
// those whose attempt is not over are written as rows (leased, so the
// sweep leaves them to the lanes that hold them).
func (w *batchWait) await(ctx context.Context, held []heldJob, progress <-chan struct{}) error {
	if len(held) == 0 {
		return nil
	}
	limit := time.NewTimer(time.Until(w.deadline))
	defer limit.Stop()
	tick := time.NewTicker(w.tick())
	defer tick.Stop()
wait:
	for left := len(held); left > 0; {
		select {
		case <-progress:
			left--
			continue
		case <-tick.C:
		case <-limit.C:
			break wait
		case <-ctx.Done():
			return ctx.Err()
		}
		now, moving := time.Now(), false
		for _, hj := range held {
			if !hj.recorded() && w.moving(hj.lane, now) {
				moving = true
				break
			}
		}
		if !moving {
			break
		}
	}
	var store []webhook.Job
	var storing []*hold
	for _, hj := range held {
		if hj.takeForStore() {
			store, storing = append(store, hj.job), append(storing, hj.hold)
		}
	}
	if len(store) > 0 {
		_, err := w.d.cfg.Store.InsertJobs(ctx, store)
		for _, h := range storing {
			h.stored(err)
		}
		if err != nil {
			// The batch comes again; the jobs still in their lanes may then
			// be delivered twice.
			return fmt.Errorf("store webhook jobs: %w", err)
		}
	}
	// The rest are being recorded: a round trip.
	for _, hj := range held {
		if hj.isStored() {
			continue
		}
		select {
		case <-hj.done:
			if hj.err != nil {
				return fmt.Errorf("record webhook outcome: %w", hj.err)
			}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}
