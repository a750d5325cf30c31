package merchant_test

import (
	"slices"
	"testing"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/merchant"
	"github.com/convida/convida/pkg/netguard"
	"github.com/convida/convida/pkg/provider"
)

// Hotmart's and Kiwify's settings: their own fields by their API names,
// each URL checked by what Convida does with it, the pull's secrets bound
// to the URLs they are sent to.
func TestIntegrationHotmartKiwify(t *testing.T) {
	t.Parallel()
	form := map[string]string{"hottok": " ht ", "webhook_token": " wt ", "client_id": " ci ", "client_secret": " cs ",
		"basic_token": " bt ", "account_id": " ai ", "api_url": "https://api.example.com/v1",
		"auth_url": "https://auth.example.com/token", "checkout_url": "https://pay.kiwify.com.br/p?utm_source=x",
		"account_token": "guru's", "user_token": "guru's"}
	get := func(name string) string { return form[name] }
	hotmart, err := merchant.CleanFields("hotmart", get, netguard.URLChecker(false))
	want := merchant.Integration{Provider: "hotmart", AccountToken: "ht", ClientID: "ci", ClientSecret: "cs", BasicToken: "bt",
		APIURL: "https://api.example.com/v1", AuthURL: "https://auth.example.com/token"}
	if err != nil || hotmart != want {
		t.Errorf("hotmart: %+v, %v; want %+v", hotmart, err, want)
	}
	kiwify, err := merchant.CleanFields("kiwify", get, netguard.URLChecker(false))
	want = merchant.Integration{Provider: "kiwify", WebhookSecret: "wt", ClientID: "ci", ClientSecret: "cs", AccountID: "ai",
		APIURL: "https://api.example.com/v1", CheckoutURL: "https://pay.kiwify.com.br/p?utm_source=x"}
	if err != nil || kiwify != want {
		t.Errorf("kiwify: %+v, %v; want %+v", kiwify, err, want)
	}

	for _, tc := range []struct {
		in   merchant.Integration
		want string
	}{
		{merchant.Integration{Provider: "hotmart", AuthURL: "https://10.0.0.1/token"}, "auth_url: the address is not public"},
		{merchant.Integration{Provider: "hotmart", AuthURL: "https://auth.example.com/token?x=1"}, "auth_url: must be a URL without credentials, query or fragment"},
		{merchant.Integration{Provider: "kiwify", APIURL: "http://public-api.kiwify.com/v1"}, "api_url: only https URLs are allowed"},
		{merchant.Integration{Provider: "kiwify", CheckoutURL: "https://pay.kiwify.com.br/p#x"}, "checkout_url: must be a URL without credentials or fragment"},
		{merchant.Integration{Provider: "kiwify", CheckoutURL: "ftp://pay.kiwify.com.br/p"}, "checkout_url: must be an https URL"},
	} {
		if _, err := tc.in.Clean(netguard.URLChecker(false)); !apperr.Is(err, apperr.Invalid) || apperr.MessageOf(err) != tc.want {
			t.Errorf("%+v: %v, want %q", tc.in, err, tc.want)
		}
	}
	// A checkout link is never fetched: a private host is only odd, not dangerous.
	if _, err := (merchant.Integration{Provider: "kiwify", CheckoutURL: "https://10.0.0.1/p"}).Clean(netguard.URLChecker(false)); err != nil {
		t.Errorf("a checkout link on a private host: %v", err)
	}

	// The default auth URL again keeps the secrets; another drops them.
	stored := merchant.Integration{Provider: "hotmart", AccountToken: "ht", ClientID: "ci", ClientSecret: "cs", BasicToken: "bt"}
	if got := stored.Merge(merchant.Integration{Provider: "hotmart", AuthURL: defaultURL("hotmart", "auth_url")}); got.ClientSecret != "cs" || got.BasicToken != "bt" {
		t.Errorf("the default auth URL dropped the secrets: %+v", got)
	}
	moved := stored.Merge(merchant.Integration{Provider: "hotmart", AuthURL: "https://auth.example.com/token"})
	if moved.ClientSecret != "" || moved.BasicToken != "" || moved.ClientID != "ci" || moved.AccountToken != "ht" {
		t.Errorf("another auth URL: %+v, want the secrets dropped, the rest kept", moved)
	}
	if got := moved.Missing(provider.Pull); !slices.Equal(got, []string{"client_secret", "basic_token"}) {
		t.Errorf("PullMissing = %v", got)
	}
	if got := stored.Changes(moved); !slices.Equal(got, []string{"client_secret", "basic_token", "auth_url"}) {
		t.Errorf("Changes = %v, want the API names of what changed", got)
	}
	if got := (merchant.Integration{Provider: "kiwify"}).Missing(provider.Pull); !slices.Equal(got, []string{"client_id", "client_secret", "account_id"}) {
		t.Errorf("kiwify PullMissing = %v", got)
	}
	if got := (merchant.Integration{Provider: "guru"}).Missing(provider.Pull); !slices.Equal(got, []string{"user_token"}) {
		t.Errorf("guru Missing(Pull) = %v, want its user token", got)
	}
}
