package creator

import (
	"errors"
	"strconv"
	"strings"
)

// ParsePercent reads a commission percent from 0 to 100 with at most two
// decimals (trailing zeros aside) as basis points, from its decimal text,
// never a float: "15.5" is 1550. The error is the field's problem, for a
// message naming the field.
func ParsePercent(text string) (int, error) {
	whole, frac, hasDot := strings.Cut(text, ".")
	if !digits(whole) || (hasDot && !digits(frac)) {
		return 0, errors.New("must be a number from 0 to 100 with at most 2 decimals")
	}
	if frac = strings.TrimRight(frac, "0"); len(frac) > 2 {
		return 0, errors.New("must have at most 2 decimals")
	}
	if len(whole) > 3 {
		return 0, errors.New("must be from 0 to 100")
	}
	w, _ := strconv.Atoi(whole)
	f, _ := strconv.Atoi((frac + "00")[:2])
	if bp := w*100 + f; bp <= 10000 {
		return bp, nil
	}
	return 0, errors.New("must be from 0 to 100")
}

// digits reports whether s is a non-empty run of ASCII digits.
func digits(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}
