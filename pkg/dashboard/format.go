package dashboard

import (
	"strconv"
	"time"
)

// Money formats cents as reais the way lang writes them: "R$ 1.234,56" in
// Portuguese, "R$1,234.56" in English; a negative amount leads with "-".
func Money(lang string, cents int64) string {
	sign := ""
	u := uint64(cents)
	if cents < 0 {
		sign, u = "-", uint64(-(cents+1))+1 // math.MinInt64 has no positive twin
	}
	thousands, decimal, symbol := ",", ".", "R$"
	if lang == Portuguese {
		thousands, decimal, symbol = ".", ",", "R$ "
	}
	whole := strconv.FormatUint(u/100, 10)
	grouped := make([]byte, 0, len(whole)+len(whole)/3)
	for i := range len(whole) {
		if i > 0 && (len(whole)-i)%3 == 0 {
			grouped = append(grouped, thousands...)
		}
		grouped = append(grouped, whole[i])
	}
	frac := u % 100
	return sign + symbol + string(grouped) + decimal + string(rune('0'+frac/10)) + string(rune('0'+frac%10))
}

// FormatDate writes t in loc the way lang writes a date and time
// ("25/11/2026 14:03" or "Nov 25, 2026 2:03 PM"); the zero time is "—".
func FormatDate(lang string, loc *time.Location, t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	if lang == Portuguese {
		return t.In(loc).Format("02/01/2006 15:04")
	}
	return t.In(loc).Format("Jan 2, 2006 3:04 PM")
}
