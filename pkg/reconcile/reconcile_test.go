package reconcile_test

import (
	"slices"
	"testing"
	"time"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/merchant"
	"github.com/convida/convida/pkg/reconcile"
)

// The pure rules: which integrations have a pull, and which windows a run
// takes (the run itself is tested end to end in pkg/e2e, against fakes of
// the platforms and the real storage).
func TestConfigured(t *testing.T) {
	for _, tc := range []struct {
		in   merchant.Integration
		want bool
	}{
		{merchant.Integration{Provider: "guru", AccountToken: "a"}, false},
		{merchant.Integration{Provider: "guru", UserToken: "u"}, true},
		{merchant.Integration{Provider: "yampi", UserToken: "u", UserSecretKey: "k"}, false},
		{merchant.Integration{Provider: "yampi", UserToken: "u", UserSecretKey: "k", StoreAlias: "loja"}, true},
		{merchant.Integration{Provider: "hotmart", ClientID: "c", ClientSecret: "s"}, false},
		{merchant.Integration{Provider: "hotmart", UserToken: "u", AccountToken: "hottok"}, false},
		{merchant.Integration{Provider: "hotmart", ClientID: "c", ClientSecret: "s", BasicToken: "Basic b"}, true},
		{merchant.Integration{Provider: "kiwify", ClientID: "c", ClientSecret: "s", BasicToken: "b"}, false},
		{merchant.Integration{Provider: "kiwify", ClientID: "c", ClientSecret: "s", AccountID: " "}, false},
		{merchant.Integration{Provider: "kiwify", ClientID: "c", ClientSecret: "s", AccountID: "acc"}, true},
		{merchant.Integration{Provider: "stripe", UserToken: "u"}, false},
	} {
		if got := reconcile.Configured(tc.in); got != tc.want {
			t.Errorf("Configured(%+v) = %v, want %v", tc.in, got, tc.want)
		}
	}
	if got := reconcile.Providers(); !slices.Equal(got, []string{"guru", "yampi", "hotmart", "kiwify"}) {
		t.Errorf("Providers() = %v, want [guru yampi hotmart kiwify], the order of the descriptors", got)
	}
}

func TestCheckWindow(t *testing.T) {
	to := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	day := 24 * time.Hour
	for _, tc := range []struct {
		provider string
		from, to time.Time
		ok       bool
	}{
		{"guru", to.Add(-72 * time.Hour), to, true},
		{"guru", to.Add(-180 * day), to, true},
		{"guru", to.Add(-181 * day), to, false},
		{"yampi", to.Add(-366 * day), to, true},
		{"yampi", to.Add(-367 * day), to, false},
		{"guru", to, to, false},
		{"guru", to.Add(time.Hour), to, false},
		{"guru", time.Time{}, to, false},
		{"hotmart", to.Add(-31 * day), to, true},
		{"hotmart", to.Add(-32 * day), to, false},
		{"kiwify", to.Add(-90 * day), to, true},
		{"kiwify", to.Add(-91 * day), to, false},
	} {
		err := reconcile.CheckWindow(tc.provider, tc.from, tc.to)
		if (err == nil) != tc.ok || err != nil && !apperr.Is(err, apperr.Invalid) {
			t.Errorf("CheckWindow(%s, %s, %s) = %v, want ok %v (else invalid)", tc.provider, tc.from, tc.to, err, tc.ok)
		}
	}
}
