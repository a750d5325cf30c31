package redemption

import (
	"testing"

	"github.com/convida/convida/pkg/merchant"
)

func TestMissingSetting(t *testing.T) {
	t.Parallel()
	yampi := merchant.Integration{UserToken: "yt", UserSecretKey: "ys", StoreAlias: "loja"}
	for _, c := range []struct {
		name     string
		typ      string
		settings merchant.Integration
		want     string
	}{
		{"guru not configured", TypeSubscriptionDiscount, merchant.Integration{}, "user token"},
		{"guru with the webhook token only", TypeSubscriptionDiscount, merchant.Integration{AccountToken: "a"}, "user token"},
		{"guru configured", TypeSubscriptionDiscount, merchant.Integration{UserToken: "gt"}, ""},
		{"yampi not configured", TypeStoreCredit, merchant.Integration{}, "user token"},
		{"yampi without secret key", TypeStoreCredit, merchant.Integration{UserToken: "yt", StoreAlias: "loja"}, "user secret key"},
		{"yampi with a blank store alias", TypeStoreCredit, merchant.Integration{UserToken: "yt", UserSecretKey: "ys", StoreAlias: " "}, "store alias"},
		{"yampi configured", TypeStoreCredit, yampi, ""},
	} {
		if got := MissingSetting(c.typ, c.settings); got != c.want {
			t.Errorf("%s: MissingSetting = %q, want %q", c.name, got, c.want)
		}
	}
}
