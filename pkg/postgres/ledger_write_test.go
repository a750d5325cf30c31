package postgres

import (
	"testing"
	"time"
)

// TestTimesLiteral: the recent referral times are written in UTC with
// their microseconds, as PostgreSQL reads a timestamptz.
func TestTimesLiteral(t *testing.T) {
	t.Parallel()
	brt := time.FixedZone("BRT", -3*3600)
	got := timesLiteral([]time.Time{time.Date(2026, 1, 2, 3, 4, 5, 6007000, brt), time.Date(999, 12, 31, 23, 59, 59, 0, time.UTC)})
	if want := "{2026-01-02 06:04:05.006007+00,0999-12-31 23:59:59.000000+00}"; got != want {
		t.Errorf("timesLiteral = %s, want %s", got, want)
	}
	if got := timesLiteral(nil); got != "{}" {
		t.Errorf("no times: %s, want {}", got)
	}
}
