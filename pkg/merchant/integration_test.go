package merchant_test

import (
	"testing"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/merchant"
)

func TestIntegrationClean(t *testing.T) {
	t.Parallel()
	all := merchant.Integration{AccountToken: " tok ", WebhookSecret: " whs ", UserToken: " ut ", UserSecretKey: " usk ",
		StoreAlias: " loja ", APIURL: " https://api.example.com/v2 "}
	for _, tc := range []struct {
		name    string
		in      merchant.Integration
		want    merchant.Integration
		invalid bool
	}{
		{"guru keeps its fields, trimmed", withProvider(all, "guru"),
			merchant.Integration{Provider: "guru", AccountToken: "tok", UserToken: "ut", APIURL: "https://api.example.com/v2"}, false},
		{"yampi keeps its fields, trimmed", withProvider(all, "yampi"),
			merchant.Integration{Provider: "yampi", WebhookSecret: "whs", UserToken: "ut", UserSecretKey: "usk", StoreAlias: "loja", APIURL: "https://api.example.com/v2"}, false},
		{"the account token alone", merchant.Integration{Provider: "guru", AccountToken: "tok"},
			merchant.Integration{Provider: "guru", AccountToken: "tok"}, false},
		{"http API URL", merchant.Integration{Provider: "guru", APIURL: "http://localhost:9000/api"},
			merchant.Integration{Provider: "guru", APIURL: "http://localhost:9000/api"}, false},
		{"ftp API URL", merchant.Integration{Provider: "guru", APIURL: "ftp://api.example.com"}, merchant.Integration{}, true},
		{"API URL without host", merchant.Integration{Provider: "yampi", APIURL: "https://"}, merchant.Integration{}, true},
		{"API URL not a URL", merchant.Integration{Provider: "yampi", APIURL: "api.example.com"}, merchant.Integration{}, true},
	} {
		got, err := tc.in.Clean()
		if tc.invalid {
			if !apperr.Is(err, apperr.Invalid) || apperr.MessageOf(err) != "api_url: must be an http(s) URL" {
				t.Errorf("%s: %v, want the api_url refusal", tc.name, err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s: %+v, %v; want %+v", tc.name, got, err, tc.want)
		}
	}
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
		if got := merchant.WebhookURL(base, merchant.ProviderGuru, id); got != want {
			t.Errorf("WebhookURL(%q) = %q, want %q", base, got, want)
		}
	}
	if got := merchant.WebhookURL("http://localhost:8081", merchant.ProviderYampi, id); got != "http://localhost:8081/api/webhooks/yampi/"+id.String() {
		t.Errorf("yampi: %q", got)
	}
}
