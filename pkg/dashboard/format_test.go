package dashboard

import (
	"math"
	"testing"
	"time"
)

func TestMoney(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		cents  int64
		pt, en string
	}{
		{979, "R$ 9,79", "R$9.79"},
		{0, "R$ 0,00", "R$0.00"},
		{5, "R$ 0,05", "R$0.05"},
		{100, "R$ 1,00", "R$1.00"},
		{123456, "R$ 1.234,56", "R$1,234.56"},
		{100000000, "R$ 1.000.000,00", "R$1,000,000.00"},
		{-979, "-R$ 9,79", "-R$9.79"},
		{-123456, "-R$ 1.234,56", "-R$1,234.56"},
		{math.MinInt64, "-R$ 92.233.720.368.547.758,08", "-R$92,233,720,368,547,758.08"},
	} {
		if got := Money(Portuguese, tc.cents); got != tc.pt {
			t.Errorf("Money(pt-BR, %d) = %q, want %q", tc.cents, got, tc.pt)
		}
		if got := Money(English, tc.cents); got != tc.en {
			t.Errorf("Money(en, %d) = %q, want %q", tc.cents, got, tc.en)
		}
	}
}

func TestFormatDate(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 25, 17, 3, 0, 0, time.UTC) // 14:03 in São Paulo (UTC-3)
	for _, tc := range []struct {
		lang string
		at   time.Time
		want string
	}{
		{Portuguese, at, "25/11/2026 14:03"},
		{English, at, "11/25/2026 2:03 PM"},
		{English, time.Time{}, "—"},
	} {
		if got := FormatDate(tc.lang, defaultZone, tc.at); got != tc.want {
			t.Errorf("FormatDate(%s, %v) = %q, want %q", tc.lang, tc.at, got, tc.want)
		}
	}
}
