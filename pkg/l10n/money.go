package l10n

import (
	"strconv"
	"strings"
	"time"
	_ "time/tzdata" // the zone also on hosts without zoneinfo

	"github.com/convida/convida/pkg/money"
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

// Zone is the time zone the pages show times in: the merchants and their
// members are Brazilian.
var Zone = func() *time.Location {
	loc, err := time.LoadLocation("America/Sao_Paulo")
	if err != nil {
		panic(err) // time/tzdata is linked in: a build defect
	}
	return loc
}()

// dayLayouts are how each language writes a day, with two digits for the
// day and for the month: 01/12/2026 in Portuguese, 12/01/2026 in English.
var dayLayouts = map[string]string{English: "01/02/2006", Portuguese: "02/01/2006"}

// timeLayouts are how each language writes a time of day.
var timeLayouts = map[string]string{English: "3:04 PM", Portuguese: "15:04"}

// DayLayout is lang's layout of a day (English for a language without one).
func DayLayout(lang string) string {
	if l, ok := dayLayouts[lang]; ok {
		return l
	}
	return dayLayouts[English]
}

// TimeLayout is lang's layout of a time of day.
func TimeLayout(lang string) string {
	if l, ok := timeLayouts[lang]; ok {
		return l
	}
	return timeLayouts[English]
}

// FormatDate writes t in loc the way lang writes a date and time
// ("25/11/2026 14:03" or "11/25/2026 2:03 PM"); the zero time is "—".
func FormatDate(lang string, loc *time.Location, t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	return t.In(loc).Format(DayLayout(lang) + " " + TimeLayout(lang))
}

// FormatDay writes t's day in loc the way lang writes one ("25/11/2026");
// the zero time is "—".
func FormatDay(lang string, loc *time.Location, t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	return t.In(loc).Format(DayLayout(lang))
}

// TypedReais writes cents as a form's field shows them for lang to edit:
// "1234,56" or "1234.56", no symbol nor grouping; either reads back
// (money.ParseTypedReais) as the same cents.
func TypedReais(lang string, cents int64) string {
	return DecimalMark(lang, money.FormatReais(cents))
}

// DecimalMark swaps the decimal point of a plain decimal text for a comma
// in Portuguese.
func DecimalMark(lang, text string) string {
	if lang == Portuguese {
		return strings.Replace(text, ".", ",", 1)
	}
	return text
}
