package scheduler

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/reconcile"
)

// The sharing of the reconciliation slots, as a pure rule: which waiting
// work starts in the free slots, given the runs going on.
func TestFairShare(t *testing.T) {
	a, b, c := uuid.New(), uuid.New(), uuid.New()
	name := map[uuid.UUID]string{a: "A", b: "B", c: "C"}
	asked := func(m uuid.UUID, provider string) waiting {
		return waiting{merchant: m, requested: &reconcile.Run{MerchantID: m, Provider: provider}}
	}
	due := func(m uuid.UUID, provider string) waiting {
		return waiting{merchant: m, due: &reconcile.Due{MerchantID: m, Provider: provider}}
	}
	show := func(ws []waiting) string {
		var out []string
		for _, w := range ws {
			p := ""
			if w.requested != nil {
				p = w.requested.Provider
			} else {
				p = w.due.Provider + "(due)"
			}
			out = append(out, name[w.merchant]+":"+p)
		}
		return strings.Join(out, " ")
	}
	for _, tc := range []struct {
		name    string
		queue   []waiting
		running map[uuid.UUID]int
		free    int
		want    string
	}{
		{"alone, a merchant uses every slot but the last",
			[]waiting{asked(a, "guru"), asked(a, "yampi"), asked(a, "hotmart"), asked(a, "kiwify")}, nil, 4,
			"A:guru A:yampi A:hotmart"},
		{"one slot: a merchant's first run only",
			[]waiting{asked(a, "guru"), asked(a, "yampi")}, nil, 1, "A:guru"},
		{"merchants take turns, each one's oldest request first; the last slot stays free",
			[]waiting{asked(a, "guru"), asked(a, "yampi"), asked(a, "hotmart"), asked(b, "guru"), asked(b, "kiwify"), due(c, "yampi")}, nil, 4,
			"A:guru B:guru C:yampi(due)"},
		{"a second round when slots are plenty",
			[]waiting{asked(a, "guru"), asked(a, "yampi"), asked(b, "guru"), asked(b, "kiwify")}, nil, 8,
			"A:guru B:guru A:yampi B:kiwify"},
		{"a newcomer gets the slot kept free, while the busy merchant waits",
			[]waiting{asked(a, "kiwify"), asked(b, "guru")}, map[uuid.UUID]int{a: 3}, 1, "B:guru"},
		{"a merchant with a run going waits while one slot is left",
			[]waiting{asked(a, "kiwify")}, map[uuid.UUID]int{a: 1}, 1, ""},
		{"the merchant with fewer runs going is served first",
			[]waiting{asked(a, "kiwify"), asked(b, "yampi"), asked(b, "kiwify")}, map[uuid.UUID]int{a: 2, b: 1}, 3,
			"B:yampi A:kiwify"},
		{"requests come before the merchant's due integrations",
			[]waiting{asked(a, "yampi"), due(a, "guru")}, nil, 4, "A:yampi A:guru(due)"},
		{"nothing free", []waiting{asked(a, "guru")}, nil, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var turns turns
			if got := show(turns.share(tc.queue, tc.running, tc.free)); got != tc.want {
				t.Errorf("share = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestFairShareTakesTurns: one slot frees at a time; the merchants that
// keep waiting are served in turn, never the same twice while another
// waits, however many requests the first has queued.
func TestFairShareTakesTurns(t *testing.T) {
	a, b, c := uuid.New(), uuid.New(), uuid.New()
	name := map[uuid.UUID]string{a: "A", b: "B", c: "C"}
	var queue []waiting
	for i := range 6 {
		queue = append(queue, waiting{merchant: a, requested: &reconcile.Run{MerchantID: a, Provider: fmt.Sprint(i)}})
	}
	queue = append(queue, waiting{merchant: b, requested: &reconcile.Run{MerchantID: b}},
		waiting{merchant: c, requested: &reconcile.Run{MerchantID: c}},
		waiting{merchant: b, requested: &reconcile.Run{MerchantID: b}})
	var turns turns
	var served []string
	for range 5 {
		// Two slots: one holds a run of another merchant (D), one is free.
		picks := turns.share(queue, map[uuid.UUID]int{uuid.Nil: 1}, 1)
		if len(picks) != 1 {
			t.Fatalf("picks = %d, want 1", len(picks))
		}
		served = append(served, name[picks[0].merchant])
		for i, w := range queue { // it ran and ended
			if w.requested == picks[0].requested {
				queue = append(queue[:i:i], queue[i+1:]...)
				break
			}
		}
	}
	if got := strings.Join(served, " "); got != "A B C A B" {
		t.Errorf("served %s, want A B C A B", got)
	}
}
