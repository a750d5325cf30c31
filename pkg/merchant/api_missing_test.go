package merchant_test

import (
	"fmt"
	"testing"

	"github.com/convida/convida/pkg/merchant"
	"github.com/convida/convida/pkg/provider"
)

func TestAPIMissing(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		provider string
		settings merchant.Integration
		want     string
	}{
		{"guru", merchant.Integration{}, "[user_token]"},
		{"guru", merchant.Integration{UserToken: "gt"}, "[]"},
		{"yampi", merchant.Integration{}, "[user_token user_secret_key store_alias]"},
		{"yampi", merchant.Integration{StoreAlias: "loja"}, "[user_token user_secret_key]"},
		{"yampi", merchant.Integration{UserToken: "yt", StoreAlias: " "}, "[user_secret_key store_alias]"},
		{"yampi", merchant.Integration{UserToken: "yt", UserSecretKey: "ys", StoreAlias: "loja"}, "[]"},
	} {
		c.settings.Provider = c.provider
		got := c.settings.APIMissing()
		if got == nil || fmt.Sprint(got) != c.want {
			t.Errorf("APIMissing(%s, %+v) = %#v, want %s (never nil: the API shows an empty list)", c.provider, c.settings, got, c.want)
		}
	}
}

// defaultURL is the platform's public URL of setting.
func defaultURL(platform, setting string) string {
	d, _ := provider.Lookup(platform)
	s, _ := d.Setting(setting)
	return s.Default
}
