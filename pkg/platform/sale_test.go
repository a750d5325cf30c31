package platform

import (
	"encoding/json"
	"testing"
	"time"
)

func TestMorePages(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		total     json.Number
		n, got    int
		want      bool
		situation string
	}{
		{"3", 1, 50, true, "page 1 of 3"},
		{"3", 3, 50, false, "the last page"},
		{"1", 1, 0, false, "an empty list"},
		{"", 1, 50, true, "no total, a full page"},
		{"", 2, 49, false, "no total, a short page"},
		{"2", 1, 0, false, "an empty page before the stated end"},
	} {
		if got := morePages(tc.total, tc.n, tc.got, 50); got != tc.want {
			t.Errorf("%s: morePages = %v, want %v", tc.situation, got, tc.want)
		}
	}
}

// TestAmountsAndDates: reais are read from the JSON's decimal text, never
// through a float; dates in seconds or milliseconds, as numbers or text.
func TestAmountsAndDates(t *testing.T) {
	t.Parallel()
	for raw, want := range map[string]int64{`97.9`: 9790, `"97.90"`: 9790, `0.1`: 10, `1234567.89`: 123456789, `7`: 700, `19.999999999999998`: -1,
		`1e2`: -1, `-5`: -1, `null`: -1, `"R$ 5"`: -1} {
		got, err := reais(json.RawMessage(raw), "value")
		if want < 0 && err == nil || want >= 0 && (err != nil || got != want) {
			t.Errorf("reais(%s) = %d, %v; want %d", raw, got, err, want)
		}
	}
	for raw, want := range map[string]time.Time{
		`1795580000`:             time.Unix(1795580000, 0).UTC(),
		`"1795580000"`:           time.Unix(1795580000, 0).UTC(),
		`"2026-11-26T10:00:00Z"`: time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC),
		`null`:                   {},
	} {
		if got, err := epoch(json.RawMessage(raw), time.Second, "d"); err != nil || !got.Equal(want) {
			t.Errorf("epoch(%s, s) = %v, %v; want %v", raw, got, err, want)
		}
	}
	if got, err := epoch(json.RawMessage(`1795580000123`), time.Millisecond, "d"); err != nil || got != time.UnixMilli(1795580000123).UTC() {
		t.Errorf("epoch in ms = %v, %v", got, err)
	}
	if _, err := epoch(json.RawMessage(`"soon"`), time.Second, "d"); err == nil {
		t.Error("epoch(soon) accepted")
	}
}
