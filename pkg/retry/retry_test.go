package retry_test

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/convida/convida/pkg/retry"
)

func TestParseSchedule(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		in      string
		zeroOK  bool
		want    []time.Duration
		wantErr string
	}{
		{"three steps", "1s,2s,3s", false, []time.Duration{time.Second, 2 * time.Second, 3 * time.Second}, ""},
		{"spaces around items are ignored", " 500ms , 1m30s ", false, []time.Duration{500 * time.Millisecond, 90 * time.Second}, ""},
		{"one step", "1h", false, []time.Duration{time.Hour}, ""},
		{"empty", "", false, nil, "retry schedule is empty"},
		{"blank", "  ", true, nil, "retry schedule is empty"},
		{"empty item", "1s,,2s", false, nil, `retry schedule item 2 "" is not a Go duration (like 5s, 30m, 2h)`},
		{"trailing comma", "1s,", true, nil, `retry schedule item 2 "" is not a Go duration (like 5s, 30m, 2h)`},
		{"zero refused in a schedule", "0s", false, nil, `retry schedule item 1 "0s" is not positive`},
		{"zero accepted in delays", "0s,5s", true, []time.Duration{0, 5 * time.Second}, ""},
		{"negative refused", "-1s", true, nil, `retry schedule item 1 "-1s" is not positive`},
		{"a bare number is no duration", "5", false, nil, `retry schedule item 1 "5" is not a Go duration (like 5s, 30m, 2h)`},
		{"a word is no duration", "5s,soon", true, nil, `retry schedule item 2 "soon" is not a Go duration (like 5s, 30m, 2h)`},
	}
	for _, tt := range tests {
		parse := retry.ParseSchedule
		if tt.zeroOK {
			parse = retry.ParseDelays
		}
		got, err := parse(tt.in)
		gotErr := ""
		if err != nil {
			gotErr = err.Error()
		}
		if gotErr != tt.wantErr || !slices.Equal(got, tt.want) {
			t.Errorf("%s: parse(%q) = %v, %q; want %v, %q", tt.name, tt.in, got, gotErr, tt.want, tt.wantErr)
		}
	}
}

func TestStepAndLongest(t *testing.T) {
	t.Parallel()
	s := []time.Duration{5 * time.Second, time.Minute, 30 * time.Second}
	tests := []struct {
		name   string
		failed int
		want   time.Duration
		ok     bool
	}{
		{"nothing failed yet", 0, 0, false},
		{"after the 1st", 1, 5 * time.Second, true},
		{"after the last", 3, 30 * time.Second, true},
		{"past the end", 4, 0, false},
	}
	for _, tt := range tests {
		if got, ok := retry.Step(s, tt.failed); got != tt.want || ok != tt.ok {
			t.Errorf("%s: Step(%d) = %v, %v; want %v, %v", tt.name, tt.failed, got, ok, tt.want, tt.ok)
		}
	}
	if got := retry.Longest(s); got != time.Minute {
		t.Errorf("Longest = %v, want 1m", got)
	}
	if got := retry.Longest(nil); got != 0 {
		t.Errorf("Longest(nil) = %v, want 0", got)
	}
}

func TestJitter(t *testing.T) {
	t.Parallel()
	fixed := func(f float64) func() float64 { return func() float64 { return f } }
	tests := []struct {
		name   string
		d      time.Duration
		spread float64
		rnd    func() float64
		want   time.Duration
	}{
		{"low end", 10 * time.Second, 0.10, fixed(0), 9 * time.Second},
		{"middle", 10 * time.Second, 0.10, fixed(0.5), 10 * time.Second},
		{"towards the high end", 10 * time.Second, 0.10, fixed(0.75), 10500 * time.Millisecond},
		{"no spread", 10 * time.Second, 0, fixed(0.9), 10 * time.Second},
		{"zero stays zero", 0, 0.10, fixed(1), 0},
	}
	for _, tt := range tests {
		if got := retry.Jitter(tt.d, tt.spread, tt.rnd); got != tt.want {
			t.Errorf("%s: Jitter(%v, %v) = %v, want %v", tt.name, tt.d, tt.spread, got, tt.want)
		}
	}
	for range 1000 {
		if got := retry.Jitter(time.Minute, 0.10, nil); got < 54*time.Second || got >= 66*time.Second {
			t.Fatalf("Jitter(1m, 10%%) with the default source = %v, want [54s, 66s)", got)
		}
	}
}

func TestParseRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		name, value string
		want        time.Duration
	}{
		{"absent", "", 0},
		{"delay-seconds", "7", 7 * time.Second},
		{"delay-seconds with spaces", " 120 ", 2 * time.Minute},
		{"zero", "0", 0},
		{"negative", "-5", 0},
		{"huge seconds are capped", "999999999999999999", retry.MaxRetryAfter},
		{"HTTP date ahead", now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second},
		{"HTTP date past", now.Add(-time.Hour).Format(http.TimeFormat), 0},
		{"HTTP date far ahead is capped", now.Add(30 * 24 * time.Hour).Format(http.TimeFormat), retry.MaxRetryAfter},
		{"garbage", "soon", 0},
		{"fractional seconds are not delay-seconds", "1.5", 0},
	}
	for _, tt := range tests {
		if got := retry.ParseRetryAfter(tt.value, now); got != tt.want {
			t.Errorf("%s: ParseRetryAfter(%q) = %v, want %v", tt.name, tt.value, got, tt.want)
		}
	}
}

func TestBackoff(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		base, max time.Duration
		// want[n] is the d of the n-th wait, which lies in [d/2, d).
		want []time.Duration
	}{
		{"doubles up to the cap", 100 * time.Millisecond, time.Second,
			[]time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond, 800 * time.Millisecond, time.Second, time.Second}},
		{"base above the cap", time.Minute, time.Second, []time.Duration{time.Second, time.Second}},
		{"zero base waits the cap", 0, 10 * time.Millisecond, []time.Duration{10 * time.Millisecond, 10 * time.Millisecond}},
		{"no overflow after many tries", time.Hour, 2 * time.Hour, []time.Duration{time.Hour, 2 * time.Hour, 2 * time.Hour, 2 * time.Hour}},
	}
	for _, tt := range tests {
		for range 100 {
			b := retry.Backoff{Base: tt.base, Max: tt.max}
			for n, d := range tt.want {
				if got := b.Next(); got < d/2 || got >= d {
					t.Fatalf("%s: wait %d = %v, want [%v, %v)", tt.name, n, got, d/2, d)
				}
			}
			b.Reset()
			if got, d := b.Next(), tt.want[0]; got < d/2 || got >= d {
				t.Fatalf("%s: after Reset = %v, want [%v, %v)", tt.name, got, d/2, d)
			}
		}
	}
	many := retry.Backoff{Base: time.Nanosecond, Max: time.Second}
	for range 100 {
		many.Next()
	}
	if got := many.Next(); got < time.Second/2 || got >= time.Second {
		t.Errorf("after 100 waits = %v, want [500ms, 1s)", got)
	}
}

func TestSleep(t *testing.T) {
	t.Parallel()
	if err := retry.Sleep(context.Background(), time.Millisecond); err != nil {
		t.Errorf("full wait: %v, want nil", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	start := time.Now()
	if err := retry.Sleep(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Errorf("ended context: %v, want context.Canceled", err)
	}
	if time.Since(start) > time.Second {
		t.Error("Sleep outlived its context")
	}
}

func TestEveryIsDueOncePerInterval(t *testing.T) {
	t.Parallel()
	e := &retry.Every{Interval: 200 * time.Millisecond}
	if !e.Due() {
		t.Fatal("the first Due is false")
	}
	for range 10 {
		if e.Due() {
			t.Fatal("Due twice within the interval")
		}
	}
	time.Sleep(250 * time.Millisecond)
	if !e.Due() {
		t.Error("Due false once the interval passed")
	}
}
