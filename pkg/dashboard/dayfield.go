package dashboard

import (
	"net/http"
	"time"
)

// Date fields are text fields showing and taking a day in the reader's
// language (27/11/2026, 11/27/2026): a browser's own date picker writes
// the day in the browser's language, whatever the page's. Queries and
// links keep the day as YYYY-MM-DD; typedDays turns a typed day into that
// form before a handler reads it.

// dayFields are the query parameters that hold a day.
var dayFields = []string{"from", "to"}

// typedDays rewrites the day fields of r's query typed in lang's layout
// as YYYY-MM-DD; a value in neither form is left for the handler to
// refuse.
func typedDays(r *http.Request, lang string) {
	q := r.URL.Query()
	changed := false
	for _, name := range dayFields {
		v := q.Get(name)
		if v == "" {
			continue
		}
		if _, err := time.Parse(time.DateOnly, v); err == nil {
			continue
		}
		if day, err := time.Parse(dayLayout(lang), v); err == nil {
			q.Set(name, day.Format(time.DateOnly))
			changed = true
		}
	}
	if changed {
		r.URL.RawQuery = q.Encode()
	}
}

// dayField shows a YYYY-MM-DD day in lang's layout, for a date field; a
// value that is not a day is shown as it was typed.
func dayField(lang, iso string) string {
	day, err := time.Parse(time.DateOnly, iso)
	if err != nil {
		return iso
	}
	return day.Format(dayLayout(lang))
}

// dayPlaceholder is the layout of a date field, in lang's words.
func dayPlaceholder(lang string) string { return translate(lang, "field.day_layout") }
