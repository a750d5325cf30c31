package dashboard

import "testing"

func TestFormatCount(t *testing.T) {
	for _, c := range []struct {
		lang string
		n    int64
		want string
	}{
		{English, 0, "0"}, {English, 999, "999"}, {English, 1000, "1,000"}, {English, 24843, "24,843"},
		{English, 1234567, "1,234,567"}, {Portuguese, 24843, "24.843"}, {Portuguese, -1234, "-1.234"},
	} {
		if got := FormatCount(c.lang, c.n); got != c.want {
			t.Errorf("FormatCount(%s, %d) = %q, want %q", c.lang, c.n, got, c.want)
		}
	}
}
