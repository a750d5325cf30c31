package scheduler

import (
	"github.com/google/uuid"

	"github.com/convida/convida/pkg/reconcile"
)

// How the reconciliation slots are shared between merchants: one
// merchant whose platform answers slowly, or with pages that never end,
// must not keep the others' runs waiting.

// waiting is a reconciliation waiting for a slot: a run the API asked for
// (requested) or an integration due for its scheduled run (due).
type waiting struct {
	merchant  uuid.UUID
	requested *reconcile.Run
	due       *reconcile.Due
}

// turns remembers the turn at which each merchant was last handed a slot,
// so that merchants take turns. Its zero value is ready; it is not safe
// for concurrent use.
type turns struct {
	last map[uuid.UUID]uint64
	n    uint64
}

// share picks from queue (in the order each merchant's work should go:
// runs asked for oldest first, then due integrations) the work to start
// in free slots, given the runs going on by merchant. A slot
// goes to the waiting merchant with the fewest runs going, then to the
// one whose last turn is the oldest (never served first), then to the
// one whose work came first in queue; it takes that merchant's first
// waiting work. A merchant that has a run going gets another only while
// a slot would stay free after it: the last free slot is kept for a
// merchant with none. So a merchant runs one run at a time while others
// wait, and any newcomer finds a slot at once unless every slot holds a
// different merchant's run.
func (t *turns) share(queue []waiting, running map[uuid.UUID]int, free int) []waiting {
	if t.last == nil {
		t.last = map[uuid.UUID]uint64{}
	}
	byMerchant := map[uuid.UUID][]waiting{}
	var order []uuid.UUID // merchants in order of their first work in queue
	for _, w := range queue {
		if _, seen := byMerchant[w.merchant]; !seen {
			order = append(order, w.merchant)
		}
		byMerchant[w.merchant] = append(byMerchant[w.merchant], w)
	}
	t.forgetIdle(byMerchant, running)
	going := make(map[uuid.UUID]int, len(running))
	for m, n := range running {
		going[m] = n
	}
	var picks []waiting
	for ; free > 0; free-- {
		best, found := uuid.Nil, false
		for _, m := range order {
			if len(byMerchant[m]) > 0 && (!found || t.before(m, best, going)) {
				best, found = m, true
			}
		}
		if !found || going[best] > 0 && free < 2 {
			break // nothing waits, or only merchants with a run going and one slot left
		}
		picks = append(picks, byMerchant[best][0])
		byMerchant[best] = byMerchant[best][1:]
		going[best]++
		t.n++
		t.last[best] = t.n
	}
	return picks
}

// before reports whether merchant a is served before b: fewer runs going,
// then an older last turn. Equal merchants keep their order in queue.
func (t *turns) before(a, b uuid.UUID, going map[uuid.UUID]int) bool {
	if going[a] != going[b] {
		return going[a] < going[b]
	}
	return t.last[a] < t.last[b]
}

// forgetIdle drops the turns of merchants that neither wait nor run, so
// that the memory stays bounded by the work at hand; such a merchant
// comes back as one never served.
func (t *turns) forgetIdle(waitingBy map[uuid.UUID][]waiting, running map[uuid.UUID]int) {
	for m := range t.last {
		if _, w := waitingBy[m]; !w && running[m] == 0 {
			delete(t.last, m)
		}
	}
}
