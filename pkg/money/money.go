// Package money converts between integer cents, the only representation of
// money inside Convida, and the decimal text of reais that the platforms send
// (the text a json.Number holds). It never goes through float64, so 97.9
// reais is exactly 9790 cents.
package money

import (
	"math"
	"strconv"
	"strings"

	"github.com/convida/convida/pkg/apperr"
)

// maxQuoted bounds how much of a rejected input an error message repeats.
const maxQuoted = 40

// ParseReais parses a non-negative amount of reais written as plain decimal
// text ("97.9", "97.90", "100", "100.0", "0.5", "007.5") into integer cents.
//
// The text is one or more ASCII digits, optionally followed by a '.' and one
// or more digits. Digits beyond the second decimal place are accepted only
// when they are all zeros ("97.900" is 9790), because the value is still an
// exact number of cents. Leading zeros are accepted for the same reason.
//
// Any other text is an *apperr.Error with code apperr.Unprocessable: empty
// text, a sign ('+', and '-' even for "-0"), exponent notation ("1e2"),
// a missing digit on either side of the point (".5", "5."), spaces or other
// non-digits, a non-zero third decimal ("97.999"), or more cents than an
// int64 holds.
func ParseReais(s string) (int64, error) {
	whole, frac, err := split(s)
	if err != nil {
		return 0, err
	}
	if len(frac) > 2 {
		if strings.Trim(frac[2:], "0") != "" {
			return 0, invalid(s, "has more than 2 decimal places")
		}
		frac = frac[:2]
	}
	frac += strings.Repeat("0", 2-len(frac))
	cents, ok := digitsValue(whole + frac)
	if !ok {
		return 0, invalid(s, "is too large")
	}
	return cents, nil
}

// split checks the syntax of s and returns its integer and fraction digits.
func split(s string) (whole, frac string, err error) {
	switch {
	case s == "":
		return "", "", invalid(s, "is empty")
	case s[0] == '-':
		return "", "", invalid(s, "is negative")
	case s[0] == '+':
		return "", "", invalid(s, "has a sign")
	case strings.ContainsAny(s, "eE"):
		return "", "", invalid(s, "uses exponent notation")
	}
	whole, frac, hasPoint := strings.Cut(s, ".")
	if !isDigits(whole) || (hasPoint && !isDigits(frac)) {
		return "", "", invalid(s, "is not a decimal number of reais")
	}
	return whole, frac, nil
}

// digitsValue returns the value of a string of ASCII digits, or false when it
// overflows int64.
func digitsValue(digits string) (int64, bool) {
	var n int64
	for i := 0; i < len(digits); i++ {
		d := int64(digits[i] - '0')
		if n > (math.MaxInt64-d)/10 {
			return 0, false
		}
		n = n*10 + d
	}
	return n, true
}

// isDigits reports whether s is one or more ASCII digits.
func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func invalid(s, problem string) error {
	if len(s) > maxQuoted {
		s = s[:maxQuoted] + "..."
	}
	return apperr.Errorf(apperr.Unprocessable, "amount %q %s", s, problem)
}

// FormatReais renders cents as reais with exactly two decimals: 9790 is
// "97.90", 5 is "0.05", 0 is "0.00". A negative amount gets a leading '-'
// ("-0.05"), which ParseReais rejects; every non-negative result parses back
// to the same cents.
func FormatReais(cents int64) string {
	sign := ""
	u := uint64(cents)
	if cents < 0 {
		sign = "-"
		u = -u // two's complement: also right for math.MinInt64
	}
	frac := strconv.FormatUint(u%100, 10)
	if len(frac) == 1 {
		frac = "0" + frac
	}
	return sign + strconv.FormatUint(u/100, 10) + "." + frac
}
