// Package jsontime formats timestamps as the API shows them (decision 6):
// RFC 3339, UTC, millisecond precision, Z suffix.
package jsontime

import "time"

// Layout is the wire layout of every timestamp.
const Layout = "2006-01-02T15:04:05.000Z"

// Format renders t in Layout.
func Format(t time.Time) string { return t.UTC().Format(Layout) }

// Ptr renders t in Layout, or returns nil for the zero time (JSON null).
func Ptr(t time.Time) *string {
	if t.IsZero() {
		return nil
	}
	s := Format(t)
	return &s
}
