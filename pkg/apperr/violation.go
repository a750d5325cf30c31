package apperr

import (
	"errors"
	"fmt"
)

// Rule names what an input breaks, machine-readable: the dashboard words
// a refusal from its field and rule, never from the English Message.
type Rule string

// The rules. Limit is the bound the rule names, in the field's own unit
// (characters, bytes, cents, a count), or 0.
const (
	RuleRequired     Rule = "required"      // missing or blank
	RuleTooLong      Rule = "too_long"      // longer than Limit characters (bytes for JSON)
	RuleOutOfRange   Rule = "out_of_range"  // a number outside 0 (or 1) … Limit
	RulePercent      Rule = "percent"       // not a whole percent from 1 to 100
	RuleFormat       Rule = "format"        // not the expected form: an e-mail, a URL, a date, a number
	RuleHTTPS        Rule = "https"         // a URL that is not https
	RuleNotPublic    Rule = "not_public"    // a URL naming a loopback, private or local address (netguard.CheckURL)
	RuleNotAllowed   Rule = "not_allowed"   // not one of the values the field takes
	RuleUnknown      Rule = "unknown"       // names something that does not exist (a campaign)
	RuleDuplicate    Rule = "duplicate"     // the same value twice in a list
	RuleNotAscending Rule = "not_ascending" // not above the previous item's
	RuleNeedsOther   Rule = "needs_other"   // set without the field it depends on
)

// Violation is the input an Invalid error refuses: its name as the API
// spells it ("reward_value", "tiers[1].name"), the rule and its limit.
type Violation struct {
	Field string
	Rule  Rule
	Limit int64
}

// Invalidf returns an Invalid error refusing field for rule, whose
// message is the API's: "field: " and the formatted problem. Limit is
// set with WithLimit.
func Invalidf(field string, rule Rule, format string, args ...any) *Error {
	return &Error{Code: Invalid, Message: field + ": " + fmt.Sprintf(format, args...),
		Violation: Violation{Field: field, Rule: rule}}
}

// WithLimit sets the bound of e's rule and returns e.
func (e *Error) WithLimit(limit int64) *Error {
	e.Violation.Limit = limit
	return e
}

// WithCause sets e's cause (never shown) and returns e.
func (e *Error) WithCause(err error) *Error {
	e.Err = err
	return e
}

// ViolationOf returns the Violation of the first *Error in err's chain;
// false when it names no field.
func ViolationOf(err error) (Violation, bool) {
	var e *Error
	if errors.As(err, &e) && e.Violation.Field != "" {
		return e.Violation, true
	}
	return Violation{}, false
}
