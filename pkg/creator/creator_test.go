package creator_test

import (
	"strings"
	"testing"
	"time"

	"github.com/convida/convida/pkg/creator"
)

var ladder = creator.Tiers{{"Bronze", 0, 1000}, {"Silver", 3, 1500}, {"Gold", 10, 2000}}

func TestTierFor(t *testing.T) {
	for _, tt := range []struct {
		sales    int
		want     string
		next     string
		toNext   int
		hasTier  bool
		hasAbove bool
	}{
		{0, "Bronze", "Silver", 3, true, true},
		{2, "Bronze", "Silver", 1, true, true},
		{3, "Silver", "Gold", 7, true, true}, // the month's 3rd sale already earns Silver
		{4, "Silver", "Gold", 6, true, true},
		{10, "Gold", "", 0, true, false},
		{99, "Gold", "", 0, true, false},
	} {
		got, ok := ladder.For(tt.sales)
		if ok != tt.hasTier || got.Name != tt.want {
			t.Errorf("For(%d) = %q, %v; want %q", tt.sales, got.Name, ok, tt.want)
		}
		next, needed, ok := ladder.Next(tt.sales)
		if ok != tt.hasAbove || next.Name != tt.next || needed != tt.toNext {
			t.Errorf("Next(%d) = %q, %d, %v; want %q, %d", tt.sales, next.Name, needed, ok, tt.next, tt.toNext)
		}
	}
	if _, ok := (creator.Tiers{{"Silver", 3, 1500}}).For(2); ok {
		t.Error("below the first tier: For gave a tier")
	}
	if _, ok := creator.Tiers(nil).For(5); ok {
		t.Error("no tiers: For gave a tier")
	}
}

func TestCommission(t *testing.T) {
	for _, tt := range []struct {
		bp          int
		order, want int64
		rate        float64
	}{
		{1500, 9790, 1468, 0.15}, // 1468.5 rounded down
		{1000, 9790, 979, 0.10},
		{2000, 1, 0, 0.20},
		{0, 100000, 0, 0},
		{10000, 4321, 4321, 1},
		{1250, 10000, 1250, 0.125},
	} {
		tier := creator.Tier{CommissionBP: tt.bp}
		if got := tier.Commission(tt.order); got != tt.want {
			t.Errorf("%d bp of %d = %d, want %d", tt.bp, tt.order, got, tt.want)
		}
		if tier.Rate() != tt.rate {
			t.Errorf("%d bp: Rate = %v, want %v", tt.bp, tier.Rate(), tt.rate)
		}
	}
}

func TestTiersValidate(t *testing.T) {
	for _, tt := range []struct {
		name  string
		tiers creator.Tiers
		field string
	}{
		{"the ladder", ladder, ""},
		{"empty", creator.Tiers{}, ""},
		{"blank name", creator.Tiers{{" ", 0, 100}}, "tiers[0].name"},
		{"a name of 100 characters", creator.Tiers{{strings.Repeat("ç", creator.MaxTierName), 0, 100}}, ""},
		{"a name over 100 characters", creator.Tiers{{"A", 0, 100}, {strings.Repeat("ç", creator.MaxTierName+1), 1, 100}}, "tiers[1].name"},
		{"duplicate name", creator.Tiers{{"Gold", 0, 100}, {"gold", 1, 200}}, "tiers[1].name"},
		{"not increasing", creator.Tiers{{"A", 3, 100}, {"B", 3, 200}}, "tiers[1].min_sales"},
		{"negative sales", creator.Tiers{{"A", -1, 100}}, "tiers[0].min_sales"},
		{"over 100 %", creator.Tiers{{"A", 0, 10001}}, "tiers[0].commission_percent"},
		{"negative percent", creator.Tiers{{"A", 0, -1}}, "tiers[0].commission_percent"},
	} {
		err := tt.tiers.Validate()
		if (tt.field == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.field+":")) {
			t.Errorf("%s: Validate() = %v, want %q", tt.name, err, tt.field)
		}
	}
}

func TestMaskEmail(t *testing.T) {
	for in, want := range map[string]string{
		"joao@example.com":   "j***@example.com",
		" Maria@Loja.com.br": "M***@Loja.com.br",
		"é@x.io":             "é***@x.io",
		"":                   "",
		"no-at-sign":         "***",
		"@example.com":       "***",
	} {
		if got := creator.MaskEmail(in); got != want {
			t.Errorf("MaskEmail(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestTokenAndMonth(t *testing.T) {
	a, b := creator.NewToken(), creator.NewToken()
	if len(a) < 32 || a == b || strings.ContainsAny(a, "+/=") {
		t.Errorf("tokens %q, %q: want 32+ distinct URL-safe characters", a, b)
	}
	if string(creator.HashToken(a)) == string(creator.HashToken(b)) {
		t.Error("two tokens hash alike")
	}
	at := time.Date(2026, 11, 30, 23, 30, 0, 0, time.FixedZone("BRT", -3*3600)) // Dec 1st 02:30 UTC
	if got := creator.MonthStart(at); !got.Equal(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("MonthStart = %v, want 2026-12-01 UTC", got)
	}
}
