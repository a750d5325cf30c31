package money

import "testing"

func TestParseTypedReais(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"15", 1500, true},
		{"15,00", 1500, true},
		{"15.00", 1500, true},
		{" R$ 15,5 ", 1550, true},
		{"R$1.234,56", 123456, true},
		{"1,234.56", 123456, true},
		{"0,01", 1, true},
		{"15,001", 0, false},
		{"-15,00", 0, false},
		{"1e3", 0, false},
		{"abc", 0, false},
		{"", 0, false},
		{",50", 0, false},
	} {
		got, err := ParseTypedReais(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParseTypedReais(%q) = %d, %v; want %d ok=%v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}
