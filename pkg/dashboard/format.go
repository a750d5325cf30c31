package dashboard

import (
	"fmt"
	"strconv"
	"time"

	"github.com/convida/convida/pkg/l10n"
)

// Money formats cents as reais the way lang writes them (l10n.Money).
func Money(lang string, cents int64) string { return l10n.Money(lang, cents) }

// FormatDate writes t in loc the way lang writes a date and time
// (l10n.FormatDate). The dashboard writes a day this way everywhere it
// shows or takes one: tables (FormatDate, FormatDay), date fields
// (dayField, typedDays) and, without the year, the chart's time axis
// (assets/overview.js, 01/12 or 12/01).
func FormatDate(lang string, loc *time.Location, t time.Time) string {
	return l10n.FormatDate(lang, loc, t)
}

// dayLayout is lang's layout of a day (English for a language without one).
func dayLayout(lang string) string { return l10n.DayLayout(lang) }

// TypedReais writes cents as a form's field shows them (l10n.TypedReais).
func TypedReais(lang string, cents int64) string { return l10n.TypedReais(lang, cents) }

// FormatDecimal writes f with the fewest digits and lang's decimal mark
// ("12,5" or "12.5"): a commission percent.
func FormatDecimal(lang string, f float64) string {
	return decimalMark(lang, strconv.FormatFloat(f, 'f', -1, 64))
}

// decimalMark swaps the decimal point for a comma in Portuguese.
func decimalMark(lang, text string) string { return l10n.DecimalMark(lang, text) }

// Count writes an integer of any size the way FormatCount does (the
// templates' "count"); another value as fmt prints it.
func Count(lang string, n any) string {
	switch v := n.(type) {
	case int:
		return FormatCount(lang, int64(v))
	case int32:
		return FormatCount(lang, int64(v))
	case int64:
		return FormatCount(lang, v)
	}
	return fmt.Sprint(n)
}
