package webhook_test

import (
	"slices"
	"testing"
	"time"

	"github.com/convida/convida/pkg/webhook"
)

func TestDefaultSchedule(t *testing.T) {
	t.Parallel()
	want := []time.Duration{5 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 5 * time.Hour, 10 * time.Hour, 10 * time.Hour}
	if !slices.Equal(webhook.DefaultSchedule, want) {
		t.Errorf("DefaultSchedule = %v, want %v", webhook.DefaultSchedule, want)
	}
	if got := webhook.MaxAttempts(webhook.DefaultSchedule); got != 8 {
		t.Errorf("MaxAttempts = %d, want 8", got)
	}
	var total time.Duration
	for _, d := range webhook.DefaultSchedule {
		total += d
	}
	if total < 27*time.Hour || total > 28*time.Hour {
		t.Errorf("schedule spans %s, want about 27.5 h", total)
	}
}

func TestParseSchedule(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		want    []time.Duration
		wantErr bool
	}{
		{"1s,2s,3s", []time.Duration{time.Second, 2 * time.Second, 3 * time.Second}, false},
		{" 500ms , 1m30s ", []time.Duration{500 * time.Millisecond, 90 * time.Second}, false},
		{"5s,5m,30m,2h,5h,10h,10h", webhook.DefaultSchedule, false},
		{"1h", []time.Duration{time.Hour}, false},
		{"", nil, true},
		{"  ", nil, true},
		{"1s,,2s", nil, true},
		{"1s,", nil, true},
		{"0s", nil, true},
		{"-1s", nil, true},
		{"5", nil, true},
		{"soon", nil, true},
	}
	for _, tt := range tests {
		got, err := webhook.ParseSchedule(tt.in)
		if (err != nil) != tt.wantErr || !slices.Equal(got, tt.want) {
			t.Errorf("ParseSchedule(%q) = %v, %v; want %v, error %v", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestNextAttemptAt(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	fixed := func(f float64) func() float64 { return func() float64 { return f } }
	s := webhook.DefaultSchedule
	tests := []struct {
		name       string
		made       int
		retryAfter time.Duration
		rnd        func() float64
		want       time.Duration // after now
		ok         bool
	}{
		{"nothing tried yet", 0, 0, fixed(0.5), 0, true},
		{"after the 1st, middle of the jitter", 1, 0, fixed(0.5), 5 * time.Second, true},
		{"after the 1st, low end", 1, 0, fixed(0), 4500 * time.Millisecond, true},
		{"after the 2nd, high end", 2, 0, fixed(1), 330 * time.Second, true},
		{"after the 4th", 4, 0, fixed(0.5), 2 * time.Hour, true},
		{"after the 7th, last step", 7, 0, fixed(0.5), 10 * time.Hour, true},
		{"after the 8th, exhausted", 8, 0, fixed(0.5), 0, false},
		{"far past the end", 20, 0, fixed(0.5), 0, false},
		{"Retry-After below the step is exact", 2, 3 * time.Second, fixed(0), 3 * time.Second, true},
		{"Retry-After above the step is capped", 1, time.Hour, fixed(1), 5 * time.Second, true},
		{"Retry-After does not revive an exhausted job", 8, 3 * time.Second, fixed(0.5), 0, false},
	}
	for _, tt := range tests {
		got, ok := webhook.NextAttemptAt(s, tt.made, now, tt.retryAfter, tt.rnd)
		if ok != tt.ok || (ok && got.Sub(now) != tt.want) {
			t.Errorf("%s: got %v, %v; want now+%s, %v", tt.name, got.Sub(now), ok, tt.want, tt.ok)
		}
	}
	// The default source stays within ±10 %.
	for range 1000 {
		got, ok := webhook.NextAttemptAt(s, 3, now, 0, nil)
		if d := got.Sub(now); !ok || d < 27*time.Minute || d > 33*time.Minute {
			t.Fatalf("with the default source: now+%s, %v; want 27–33 min", d, ok)
		}
	}
	// A short schedule (WEBHOOK_RETRY_SCHEDULE in tests) ends sooner.
	short := []time.Duration{time.Second}
	if webhook.MaxAttempts(short) != 2 {
		t.Errorf("MaxAttempts(1 step) = %d, want 2", webhook.MaxAttempts(short))
	}
	if _, ok := webhook.NextAttemptAt(short, 2, now, 0, fixed(0.5)); ok {
		t.Error("a 1-step schedule allows a 3rd attempt")
	}
}

func TestFailingTooLong(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 10, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name  string
		since time.Time
		want  bool
	}{
		{"never failed", time.Time{}, false},
		{"failing for 12 h", now.Add(-12 * time.Hour), false},
		{"failing for 4 days 23 h", now.Add(-(5*24 - 1) * time.Hour), false},
		{"failing for exactly 5 days", now.Add(-5 * 24 * time.Hour), true},
		{"failing for 6 days", now.Add(-6 * 24 * time.Hour), true},
	}
	for _, tt := range tests {
		if got := webhook.FailingTooLong(tt.since, now); got != tt.want {
			t.Errorf("%s: got %v, want %v", tt.name, got, tt.want)
		}
	}
}
