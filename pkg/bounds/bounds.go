// Package bounds holds the length bounds of every text a client or a
// platform gives Convida (issue 17): one unbounded value in an event once
// blocked every merchant's webhooks, so each stored string has a bound,
// checked in the domain before anything is stored or published.
//
// Lengths are counted in characters (runes), not bytes: a bound is what a
// person can type, and at most four bytes a character it also bounds the
// bytes (a 255-character id fits a PostgreSQL btree entry). Values the
// service is sent by clients are refused over their bound (Check); values
// copied from platform webhooks are cut to it (Cut), since a platform cannot
// fix its payload.
package bounds

import (
	"encoding/json"
	"unicode/utf8"

	"github.com/convida/convida/pkg/apperr"
)

// The bounds, in characters, by kind of value. The OpenAPI document gives
// each request string its kind's bound as maxLength.
const (
	// Name bounds a name or label: a member's, a campaign's, a buyer's.
	Name = 200
	// Email bounds an e-mail address (RFC 5321's path limit).
	Email = 254
	// ID bounds an identifier, code, token, alias, document or phone
	// number.
	ID = 255
	// Note bounds a free text a person writes: a decision's notes, a
	// reason.
	Note = 2000
	// URL bounds a URL.
	URL = 2048
	// Metadata bounds a member's metadata, in bytes once JSON-encoded
	// (16 KiB).
	Metadata = 16 << 10
)

// Check refuses value when it has more than max characters, with an
// apperr.Invalid whose message names field as the interface at hand spells
// it: "name: must be at most 200 characters".
func Check(field, value string, max int) error {
	if utf8.RuneCountInString(value) > max {
		return TooLong(field, max)
	}
	return nil
}

// TooLong is the error of a value of field over max characters, for a
// caller that measured it itself.
func TooLong(field string, max int) error {
	return apperr.Invalidf(field, apperr.RuleTooLong, "must be at most %d characters", max).WithLimit(int64(max))
}

// CheckJSON refuses v when its JSON encoding is over max bytes, with an
// apperr.Invalid naming field ("metadata: must be at most 16384 bytes once
// encoded as JSON"). A value that does not encode is refused too.
func CheckJSON(field string, v any, max int) error {
	b, err := json.Marshal(v)
	if err != nil {
		return apperr.Invalidf(field, apperr.RuleFormat, "must be JSON")
	}
	if len(b) > max {
		return apperr.Invalidf(field, apperr.RuleTooLong, "must be at most %d bytes once encoded as JSON", max).WithLimit(int64(max))
	}
	return nil
}

// Cut returns s cut to its first max characters, at a character boundary;
// s itself when it is not longer. Invalid UTF-8 counts one character a byte.
func Cut(s string, max int) string {
	if len(s) <= max { // at least one byte a character: not longer
		return s
	}
	n := 0
	for i := range s {
		if n == max {
			return s[:i]
		}
		n++
	}
	return s
}
