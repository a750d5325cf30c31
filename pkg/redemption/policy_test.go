package redemption

import (
	"testing"
	"time"
)

func TestRetryPolicy(t *testing.T) {
	t.Parallel()
	d := DefaultRetryPolicy()
	var total time.Duration
	for _, x := range d.Delays {
		total += x
	}
	if d.Attempts != 5 || len(d.Delays) != d.Attempts-1 || total < 100*time.Second || total > 140*time.Second {
		t.Errorf("DefaultRetryPolicy = %+v (total %v), want 5 attempts over about 2 minutes", d, total)
	}
	if z := (RetryPolicy{}).WithDefaults(); z.Attempts != d.Attempts || len(z.Delays) != len(d.Delays) {
		t.Errorf("zero policy with defaults = %+v, want %+v", z, d)
	}
	p := RetryPolicy{Attempts: 6, Delays: []time.Duration{time.Second, 2 * time.Second}}
	for failed, want := range map[int]time.Duration{1: time.Second, 2: 2 * time.Second, 3: 2 * time.Second, 5: 2 * time.Second} {
		if got := p.base(failed); got != want {
			t.Errorf("base(%d) = %v, want %v", failed, got, want)
		}
		for range 50 {
			if got := p.Pause(failed, 0); got < want*9/10 || got > want*11/10 {
				t.Fatalf("pause(%d) = %v, want %v ±10%%", failed, got, want)
			}
		}
	}
}
