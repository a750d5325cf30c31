package money

import (
	"errors"
	"math"
	"math/big"
	"strings"
	"testing"

	"github.com/convida/convida/pkg/apperr"
)

func TestParseReais(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want int64
	}{
		{"97.9", 9790},
		{"97.90", 9790},
		{"97.900", 9790},
		{"97.90000000000000000000", 9790},
		{"100", 10000},
		{"100.0", 10000},
		{"0.5", 50},
		{"0.05", 5},
		{"0", 0},
		{"0.00", 0},
		{"007.5", 750},
		{"92233720368547758.07", math.MaxInt64},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			got, err := ParseReais(tt.in)
			if err != nil {
				t.Fatalf("ParseReais(%q) error = %v, want %d", tt.in, err, tt.want)
			}
			if got != tt.want {
				t.Errorf("ParseReais(%q) = %d, want %d", tt.in, got, tt.want)
			}
		})
	}
}

func TestParseReaisRejects(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, wantMessage string
	}{
		{"", "is empty"},
		{"97.999", "more than 2 decimal places"},
		{"97.901", "more than 2 decimal places"},
		{"-1", "is negative"},
		{"-0", "is negative"},
		{"+1", "has a sign"},
		{"1e2", "exponent"},
		{"1.5E-1", "exponent"},
		{".5", "not a decimal number"},
		{"5.", "not a decimal number"},
		{".", "not a decimal number"},
		{" 1", "not a decimal number"},
		{"1 ", "not a decimal number"},
		{"1,50", "not a decimal number"},
		{"1.2.3", "not a decimal number"},
		{"NaN", "not a decimal number"},
		{"Infinity", "not a decimal number"},
		{"0x10", "not a decimal number"},
		{"١٢", "not a decimal number"}, // non-ASCII digits
		{"92233720368547758.08", "too large"},
		{"99999999999999999999", "too large"},
		{strings.Repeat("9", 200), "too large"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			got, err := ParseReais(tt.in)
			if err == nil {
				t.Fatalf("ParseReais(%q) = %d, want an error", tt.in, got)
			}
			var e *apperr.Error
			if !errors.As(err, &e) || e.Code != apperr.Unprocessable {
				t.Fatalf("ParseReais(%q) error = %#v, want an *apperr.Error with code %q", tt.in, err, apperr.Unprocessable)
			}
			if !strings.Contains(e.Message, tt.wantMessage) {
				t.Errorf("ParseReais(%q) message = %q, want it to contain %q", tt.in, e.Message, tt.wantMessage)
			}
			if len(e.Message) > 100 {
				t.Errorf("ParseReais(%q) message is %d bytes, want it short", tt.in, len(e.Message))
			}
		})
	}
}

func TestFormatReais(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   int64
		want string
	}{
		{9790, "97.90"},
		{5, "0.05"},
		{50, "0.50"},
		{0, "0.00"},
		{100, "1.00"},
		{10000, "100.00"},
		{-5, "-0.05"},
		{-9790, "-97.90"},
		{math.MaxInt64, "92233720368547758.07"},
		{math.MinInt64, "-92233720368547758.08"},
	}
	for _, tt := range tests {
		if got := FormatReais(tt.in); got != tt.want {
			t.Errorf("FormatReais(%d) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// FuzzParseReais checks that ParseReais never panics, fails only with
// Unprocessable, agrees with exact rational arithmetic, and that
// FormatReais(ParseReais(x)) is a fixed point of the round trip.
func FuzzParseReais(f *testing.F) {
	for _, s := range []string{"97.9", "97.90", "97.900", "97.999", "100", "0.5", "-1", "1e2", "", ".5",
		"92233720368547758.07", "92233720368547758.08", "007.10"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		cents, err := ParseReais(s)
		if err != nil {
			if apperr.CodeOf(err) != apperr.Unprocessable {
				t.Fatalf("ParseReais(%q) error = %v, want code %q", s, err, apperr.Unprocessable)
			}
			return
		}
		if cents < 0 {
			t.Fatalf("ParseReais(%q) = %d, want >= 0", s, cents)
		}
		exact, ok := new(big.Rat).SetString(s)
		if !ok {
			t.Fatalf("ParseReais(%q) = %d, but big.Rat rejects the text", s, cents)
		}
		if want := exact.Mul(exact, big.NewRat(100, 1)); want.Cmp(new(big.Rat).SetInt64(cents)) != 0 {
			t.Fatalf("ParseReais(%q) = %d, want %s cents", s, cents, want.RatString())
		}
		text := FormatReais(cents)
		again, err := ParseReais(text)
		if err != nil || again != cents {
			t.Fatalf("ParseReais(FormatReais(%d)) = %d, %v; want %d, nil", cents, again, err, cents)
		}
		if FormatReais(again) != text {
			t.Fatalf("FormatReais is not stable for %d: %q then %q", cents, text, FormatReais(again))
		}
	})
}
