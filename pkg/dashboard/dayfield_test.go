package dashboard

import (
	"net/http/httptest"
	"testing"
)

func TestDayFieldsInTheReadersLanguage(t *testing.T) {
	for _, tc := range []struct {
		lang, iso, shown string
	}{
		{Portuguese, "2026-11-27", "27/11/2026"},
		{English, "2026-11-27", "11/27/2026"},
		{Portuguese, "", ""},
		{English, "yesterday", "yesterday"}, // shown as typed, for the refusal beside it
	} {
		if got := dayField(tc.lang, tc.iso); got != tc.shown {
			t.Errorf("dayField(%s, %q) = %q, want %q", tc.lang, tc.iso, got, tc.shown)
		}
	}
	for _, tc := range []struct {
		lang, query, want string
	}{
		{Portuguese, "from=27/11/2026&to=03/12/2026&page=2", "from=2026-11-27&page=2&to=2026-12-03"},
		{English, "from=11/27/2026", "from=2026-11-27"},
		{English, "from=27/11/2026", "from=27/11/2026"}, // no 27th month: left for the handler to refuse
		{Portuguese, "from=2026-11-27", "from=2026-11-27"},
	} {
		r := httptest.NewRequest("GET", "/dashboard/referrals?"+tc.query, nil)
		typedDays(r, tc.lang)
		if r.URL.RawQuery != tc.want {
			t.Errorf("typedDays(%s, %q) = %q, want %q", tc.lang, tc.query, r.URL.RawQuery, tc.want)
		}
	}
}
