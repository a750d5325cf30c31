package report_test

import (
	"testing"
	"time"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/report"
)

func mustZone(t *testing.T, name string) *time.Location {
	t.Helper()
	z, err := report.LoadZone(name)
	if err != nil {
		t.Fatal(err)
	}
	return z
}

func TestLastDays(t *testing.T) {
	sp := mustZone(t, "")
	ny := mustZone(t, "America/New_York")
	tests := []struct {
		name     string
		now      string
		n        int
		zone     *time.Location
		from, to string
		days     int
	}{
		// 01:30 UTC is still the previous evening in São Paulo (UTC−3).
		{"today is the zone's date", "2026-11-25T01:30:00Z", 7, sp, "2026-11-18T03:00:00Z", "2026-11-25T03:00:00Z", 7},
		{"thirty days", "2026-11-25T15:00:00Z", 30, sp, "2026-10-27T03:00:00Z", "2026-11-26T03:00:00Z", 30},
		{"one day", "2026-11-25T15:00:00Z", 1, sp, "2026-11-25T03:00:00Z", "2026-11-26T03:00:00Z", 1},
		// New York leaves DST on 2026-11-01: the range's days are calendar
		// days, one of them 25 hours long.
		{"across a DST change", "2026-11-03T12:00:00Z", 7, ny, "2026-10-28T04:00:00Z", "2026-11-04T05:00:00Z", 7},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			now, _ := time.Parse(time.RFC3339, tt.now)
			r, err := report.LastDays(now, tt.n, tt.zone)
			if err != nil {
				t.Fatal(err)
			}
			if got := r.From.UTC().Format(time.RFC3339); got != tt.from {
				t.Errorf("From = %s, want %s", got, tt.from)
			}
			if got := r.To.UTC().Format(time.RFC3339); got != tt.to {
				t.Errorf("To = %s, want %s", got, tt.to)
			}
			if got := r.DayCount(); got != tt.days {
				t.Errorf("DayCount = %d, want %d", got, tt.days)
			}
		})
	}
	for _, n := range []int{0, -1, report.MaxDays + 1} {
		if _, err := report.LastDays(time.Now(), n, sp); !apperr.Is(err, apperr.Invalid) {
			t.Errorf("LastDays(%d) error = %v, want validation_error", n, err)
		}
	}
}

func TestDays(t *testing.T) {
	sp := mustZone(t, "")
	r, err := report.Days("2026-11-01", "2026-11-30", sp)
	if err != nil {
		t.Fatal(err)
	}
	if r.From.UTC().Format(time.RFC3339) != "2026-11-01T03:00:00Z" || r.To.UTC().Format(time.RFC3339) != "2026-12-01T03:00:00Z" || r.DayCount() != 30 {
		t.Errorf("Days(Nov) = [%v, %v) %d days, want [Nov 1 03:00Z, Dec 1 03:00Z) 30 days", r.From.UTC(), r.To.UTC(), r.DayCount())
	}
	for _, bad := range [][2]string{{"2026-11-30", "2026-11-01"}, {"2026-13-01", "2026-12-01"}, {"", "2026-11-01"},
		{"2026-11-01", "nope"}, {"2025-01-01", "2026-11-01"}} {
		if _, err := report.Days(bad[0], bad[1], sp); !apperr.Is(err, apperr.Invalid) {
			t.Errorf("Days(%q, %q) error = %v, want validation_error", bad[0], bad[1], err)
		}
	}
}

func TestLoadZoneAndParseMetric(t *testing.T) {
	if z := mustZone(t, ""); z.String() != "America/Sao_Paulo" {
		t.Errorf("default zone = %s", z)
	}
	for _, bad := range []string{"Local", "Mars/Olympus", "../etc/passwd"} {
		if _, err := report.LoadZone(bad); !apperr.Is(err, apperr.Invalid) {
			t.Errorf("LoadZone(%q) error = %v, want validation_error", bad, err)
		}
	}
	if m, err := report.ParseMetric(""); m != report.MetricReferrals || err != nil {
		t.Errorf("ParseMetric(\"\") = %q, %v; want referrals", m, err)
	}
	for _, m := range report.Metrics {
		if got, err := report.ParseMetric(string(m)); got != m || err != nil {
			t.Errorf("ParseMetric(%q) = %q, %v", m, got, err)
		}
	}
	if _, err := report.ParseMetric("revenue; drop"); !apperr.Is(err, apperr.Invalid) {
		t.Errorf("ParseMetric of an unknown metric: %v, want validation_error", err)
	}
}

func TestRangeValidate(t *testing.T) {
	sp := mustZone(t, "")
	ok, _ := report.Days("2026-11-01", "2026-11-30", sp)
	if err := ok.Validate(); err != nil {
		t.Errorf("Validate of Days = %v", err)
	}
	for name, r := range map[string]report.Range{
		"zero":          {},
		"no zone":       {From: ok.From, To: ok.To},
		"end not after": {From: ok.To, To: ok.From, Zone: sp},
		"too long":      {From: ok.From, To: ok.From.AddDate(2, 0, 0), Zone: sp},
	} {
		if err := r.Validate(); !apperr.Is(err, apperr.Invalid) {
			t.Errorf("Validate of %s range = %v, want validation_error", name, err)
		}
	}
}

func TestTabsTotal(t *testing.T) {
	tabs := report.Tabs{"pending": 3, "approved": report.TabCap, "rejected": 0}
	for status, want := range map[string]int{"": 3 + report.TabCap, "pending": 3, "rejected": 0, "cancelled": 0} {
		if got := tabs.Total(status); got != want {
			t.Errorf("Total(%q) = %d, want %d", status, got, want)
		}
	}
}
