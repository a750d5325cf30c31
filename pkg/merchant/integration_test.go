package merchant_test

import (
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/merchant"
	"github.com/convida/convida/pkg/netguard"
	"github.com/convida/convida/pkg/provider"
)

func TestIntegrationClean(t *testing.T) {
	t.Parallel()
	all := merchant.Integration{AccountToken: " tok ", WebhookSecret: " whs ", UserToken: " ut ", UserSecretKey: " usk ",
		StoreAlias: " loja ", APIURL: " https://api.example.com/v2 "}
	for _, tc := range []struct {
		name string
		in   merchant.Integration
		want merchant.Integration
	}{
		{"guru keeps its fields, trimmed", withProvider(all, "guru"),
			merchant.Integration{Provider: "guru", AccountToken: "tok", UserToken: "ut", APIURL: "https://api.example.com/v2"}},
		{"yampi keeps its fields, trimmed", withProvider(all, "yampi"),
			merchant.Integration{Provider: "yampi", WebhookSecret: "whs", UserToken: "ut", UserSecretKey: "usk", StoreAlias: "loja", APIURL: "https://api.example.com/v2"}},
		{"the account token alone", merchant.Integration{Provider: "guru", AccountToken: "tok"},
			merchant.Integration{Provider: "guru", AccountToken: "tok"}},
		{"a public address", merchant.Integration{Provider: "guru", APIURL: "https://8.8.8.8/api"},
			merchant.Integration{Provider: "guru", APIURL: "https://8.8.8.8/api"}},
		{"255 characters", merchant.Integration{Provider: "yampi", UserSecretKey: strings.Repeat("é", 255)},
			merchant.Integration{Provider: "yampi", UserSecretKey: strings.Repeat("é", 255)}},
	} {
		got, err := tc.in.Clean(netguard.URLChecker(false))
		if err != nil || got != tc.want {
			t.Errorf("%s: %+v, %v; want %+v", tc.name, got, err, tc.want)
		}
	}
}

// A URL the platform client would refuse to call, or one naming the
// operator's own network, is refused when saved, with a message naming
// api_url and never the address; PLATFORM_ALLOW_PRIVATE_NETWORKS lets
// development point at a local fake.
func TestIntegrationCleanRefusesURLs(t *testing.T) {
	t.Parallel()
	const notPublic, notHTTPS = "api_url: the address is not public", "api_url: only https URLs are allowed"
	for _, tc := range []struct {
		url, want string
	}{
		{"https://127.0.0.1:8443/api", notPublic},
		{"https://10.0.0.7/api", notPublic},
		{"https://172.16.3.4/api", notPublic},
		{"https://192.168.1.1/api", notPublic},
		{"https://169.254.169.254/latest/meta-data", notPublic},
		{"https://[::1]:9000/", notPublic},
		{"https://[fd00::1]/", notPublic},
		{"https://[fe80::1]/", notPublic},
		{"https://0.0.0.0/", notPublic},
		{"https://[::]/", notPublic},
		{"https://[::ffff:127.0.0.1]/", notPublic},
		{"https://[::ffff:10.1.2.3]/", notPublic},
		{"https://localhost:8443/", notPublic},
		{"https://api.localhost/", notPublic},
		{"http://api.example.com/v2", notHTTPS},
		{"http://127.0.0.1:9999/api", notHTTPS},
		{"ftp://api.example.com", "api_url: must be an https URL"},
		{"https://", "api_url: must be an absolute URL with a host"},
		{"api.example.com", "api_url: must be an absolute URL with a host"},
		{"https://api.example.com/v2?x=1", "api_url: must be a URL without credentials, query or fragment"},
		{"https://user:pass@api.example.com/v2", "api_url: must be a URL without credentials, query or fragment"},
		{"https://api.example.com/" + strings.Repeat("a", 2030), "api_url: must be at most 2048 characters"},
	} {
		for _, p := range []string{"guru", "yampi"} {
			_, err := merchant.Integration{Provider: p, APIURL: tc.url}.Clean(netguard.URLChecker(false))
			if !apperr.Is(err, apperr.Invalid) || apperr.MessageOf(err) != tc.want {
				t.Errorf("%s %q: %v, want %q", p, tc.url, err, tc.want)
			}
		}
	}
	for _, raw := range []string{"http://127.0.0.1:9999/api", "https://localhost:8443/", "http://[::1]:9000/v2"} {
		if got, err := (merchant.Integration{Provider: "guru", APIURL: raw}).Clean(netguard.URLChecker(true)); err != nil || got.APIURL != raw {
			t.Errorf("with private networks allowed, %q: %+v, %v", raw, got, err)
		}
	}
}

func TestIntegrationCleanBoundsFields(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 256)
	for _, tc := range []struct {
		field string
		in    merchant.Integration
	}{
		{"account_token", merchant.Integration{Provider: "guru", AccountToken: long}},
		{"webhook_secret", merchant.Integration{Provider: "yampi", WebhookSecret: long}},
		{"user_token", merchant.Integration{Provider: "guru", UserToken: long}},
		{"user_secret_key", merchant.Integration{Provider: "yampi", UserSecretKey: long}},
		{"store_alias", merchant.Integration{Provider: "yampi", StoreAlias: long}},
	} {
		_, err := tc.in.Clean(netguard.URLChecker(true))
		if want := tc.field + ": must be at most 255 characters"; !apperr.Is(err, apperr.Invalid) || apperr.MessageOf(err) != want {
			t.Errorf("%s of %d characters: %v, want %q", tc.field, len(long), err, want)
		}
	}
}

// Merge keeps what an update leaves empty, and drops the stored API
// credentials when the update sends them to another URL or store without
// supplying them again.
func TestIntegrationMerge(t *testing.T) {
	t.Parallel()
	guru := merchant.Integration{Provider: "guru", AccountToken: "acc", UserToken: "ut", APIURL: "https://a.example.com/v2"}
	yampi := merchant.Integration{Provider: "yampi", WebhookSecret: "whs", UserToken: "ut", UserSecretKey: "usk",
		StoreAlias: "loja", APIURL: "https://a.example.com/v2"}
	guruDefault := merchant.Integration{Provider: "guru", AccountToken: "acc", UserToken: "ut"} // the public API
	for _, tc := range []struct {
		name           string
		stored, update merchant.Integration
		want           merchant.Integration
	}{
		{"nothing stored", merchant.Integration{}, merchant.Integration{Provider: "guru", UserToken: "ut", APIURL: "https://a.example.com/v2"},
			merchant.Integration{Provider: "guru", UserToken: "ut", APIURL: "https://a.example.com/v2"}},
		{"an empty update keeps everything", yampi, merchant.Integration{Provider: "yampi"}, yampi},
		{"a new user token alone", guru, merchant.Integration{Provider: "guru", UserToken: "ut2"},
			with(guru, func(in *merchant.Integration) { in.UserToken = "ut2" })},
		{"a new webhook secret keeps the API credentials", yampi, merchant.Integration{Provider: "yampi", WebhookSecret: "whs2"},
			with(yampi, func(in *merchant.Integration) { in.WebhookSecret = "whs2" })},
		{"the same URL again keeps them", yampi, merchant.Integration{Provider: "yampi", APIURL: "https://a.example.com/v2"}, yampi},
		{"the same store alias again keeps them", yampi, merchant.Integration{Provider: "yampi", StoreAlias: "loja"}, yampi},
		{"the public API's URL over an empty one keeps them", guruDefault,
			merchant.Integration{Provider: "guru", APIURL: defaultURL("guru", "api_url")},
			with(guruDefault, func(in *merchant.Integration) { in.APIURL = defaultURL("guru", "api_url") })},
		{"guru: another URL drops the user token", guru, merchant.Integration{Provider: "guru", APIURL: "https://b.example.com/v2"},
			merchant.Integration{Provider: "guru", AccountToken: "acc", APIURL: "https://b.example.com/v2"}},
		{"guru: a URL over the public API drops it", guruDefault, merchant.Integration{Provider: "guru", APIURL: "https://b.example.com/v2"},
			merchant.Integration{Provider: "guru", AccountToken: "acc", APIURL: "https://b.example.com/v2"}},
		{"guru: another URL with the token keeps the new one", guru,
			merchant.Integration{Provider: "guru", UserToken: "ut2", APIURL: "https://b.example.com/v2"},
			merchant.Integration{Provider: "guru", AccountToken: "acc", UserToken: "ut2", APIURL: "https://b.example.com/v2"}},
		{"yampi: another URL drops both", yampi, merchant.Integration{Provider: "yampi", APIURL: "https://b.example.com/v2"},
			with(yampi, func(in *merchant.Integration) {
				in.UserToken, in.UserSecretKey, in.APIURL = "", "", "https://b.example.com/v2"
			})},
		{"yampi: another store alias drops both", yampi, merchant.Integration{Provider: "yampi", StoreAlias: "outra"},
			with(yampi, func(in *merchant.Integration) { in.UserToken, in.UserSecretKey, in.StoreAlias = "", "", "outra" })},
		{"yampi: another URL with the user token only drops the secret key", yampi,
			merchant.Integration{Provider: "yampi", UserToken: "ut2", APIURL: "https://b.example.com/v2"},
			with(yampi, func(in *merchant.Integration) {
				in.UserToken, in.UserSecretKey, in.APIURL = "ut2", "", "https://b.example.com/v2"
			})},
		{"yampi: another store with both keeps them", yampi,
			merchant.Integration{Provider: "yampi", UserToken: "ut2", UserSecretKey: "usk2", StoreAlias: "outra"},
			with(yampi, func(in *merchant.Integration) { in.UserToken, in.UserSecretKey, in.StoreAlias = "ut2", "usk2", "outra" })},
		{"yampi: the same credentials again with another URL keep them", yampi,
			merchant.Integration{Provider: "yampi", UserToken: "ut", UserSecretKey: "usk", APIURL: "https://b.example.com/v2"},
			with(yampi, func(in *merchant.Integration) { in.APIURL = "https://b.example.com/v2" })},
	} {
		if got := tc.stored.Merge(tc.update); got != tc.want {
			t.Errorf("%s:\n got %+v\nwant %+v", tc.name, got, tc.want)
		}
	}
}

func with(in merchant.Integration, change func(*merchant.Integration)) merchant.Integration {
	change(&in)
	return in
}

func withProvider(in merchant.Integration, p string) merchant.Integration {
	in.Provider = p
	return in
}

func TestWebhookURL(t *testing.T) {
	t.Parallel()
	id := uuid.MustParse("16d3c092-1453-4e85-8a37-e35c7e001f63")
	for base, want := range map[string]string{
		"https://ingest.example.com":  "https://ingest.example.com/api/webhooks/guru/16d3c092-1453-4e85-8a37-e35c7e001f63",
		"https://ingest.example.com/": "https://ingest.example.com/api/webhooks/guru/16d3c092-1453-4e85-8a37-e35c7e001f63",
	} {
		if got := merchant.WebhookURL(base, provider.Guru, id); got != want {
			t.Errorf("WebhookURL(%q) = %q, want %q", base, got, want)
		}
	}
	if got := merchant.WebhookURL("http://localhost:8081", provider.Yampi, id); got != "http://localhost:8081/api/webhooks/yampi/"+id.String() {
		t.Errorf("yampi: %q", got)
	}
}
