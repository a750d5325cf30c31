package merchant

import (
	"errors"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/bounds"
	"github.com/convida/convida/pkg/netguard"
)

// Providers whose webhooks the ingest accepts and whose APIs redemptions use.
const (
	ProviderGuru  = "guru"
	ProviderYampi = "yampi"
)

// Integration is a merchant's settings for one provider, secrets in
// plaintext (decrypted by the store; never logged, shown masked).
type Integration struct {
	Provider      string
	AccountToken  string // guru: compared with api_token of webhooks
	WebhookSecret string // yampi: key of X-Yampi-Hmac-SHA256
	UserToken     string // guru: bearer for its API; yampi: User-Token
	UserSecretKey string // yampi: User-Secret-Key
	StoreAlias    string // yampi store alias
	APIURL        string
	UpdatedAt     time.Time
}

// DefaultAPIURL is the provider's public API base, used when none is set.
func DefaultAPIURL(provider string) string {
	switch provider {
	case ProviderGuru:
		return "https://digitalmanager.guru/api/v2"
	case ProviderYampi:
		return "https://api.dooki.com.br/v2"
	}
	return ""
}

// WebhookURL is where provider posts a merchant's webhooks: the ingest's
// public base (INGEST_PUBLIC_URL) and the merchant's id. It is what the
// merchant pastes into the platform, shown by the API and the dashboard.
func WebhookURL(ingestPublicURL, provider string, merchantID uuid.UUID) string {
	return strings.TrimRight(ingestPublicURL, "/") + "/api/webhooks/" + provider + "/" + merchantID.String()
}

// KnownProvider reports whether p is a provider the ingest accepts.
func KnownProvider(p string) bool { return p == ProviderGuru || p == ProviderYampi }

// Bounds of the integration fields, in characters: a credential or alias
// longer than any platform issues is a mistake or an attack on storage.
const (
	MaxIntegrationField = bounds.ID
	MaxAPIURL           = bounds.URL
)

// ErrFieldTooLong is the cause of Clean's refusal of a field over its
// bound, for errors.Is.
var ErrFieldTooLong = errors.New("a field is too long")

// Clean returns in as it is stored: fields trimmed, the fields of the other
// provider dropped, every field bounded (MaxIntegrationField, MaxAPIURL),
// and the API URL, when set, checked by netguard.CheckURL: https only and
// a public host unless allowPrivate (PLATFORM_ALLOW_PRIVATE_NETWORKS).
// Each refusal is an apperr.Invalid error naming the field; a refused URL
// is never repeated. An empty field keeps the stored value when saved
// (Merge): the secrets are write-only.
func (in Integration) Clean(allowPrivate bool) (Integration, error) {
	fields := []struct {
		name  string
		value *string
		max   int
	}{
		{"account_token", &in.AccountToken, MaxIntegrationField},
		{"webhook_secret", &in.WebhookSecret, MaxIntegrationField},
		{"user_token", &in.UserToken, MaxIntegrationField},
		{"user_secret_key", &in.UserSecretKey, MaxIntegrationField},
		{"store_alias", &in.StoreAlias, MaxIntegrationField},
		{"api_url", &in.APIURL, MaxAPIURL},
	}
	for _, f := range fields {
		*f.value = strings.TrimSpace(*f.value)
		if utf8.RuneCountInString(*f.value) > f.max {
			return Integration{}, apperr.Wrap(apperr.Invalid, ErrFieldTooLong, apperr.MessageOf(bounds.TooLong(f.name, f.max)))
		}
	}
	if in.APIURL != "" {
		if err := checkAPIURL(in.APIURL, allowPrivate); err != nil {
			return Integration{}, apperr.Wrap(apperr.Invalid, err, "api_url: "+err.Error())
		}
	}
	out := Integration{Provider: in.Provider, UserToken: in.UserToken, APIURL: in.APIURL}
	if in.Provider == ProviderGuru {
		out.AccountToken = in.AccountToken
	} else {
		out.WebhookSecret, out.UserSecretKey, out.StoreAlias = in.WebhookSecret, in.UserSecretKey, in.StoreAlias
	}
	return out, nil
}

// checkAPIURL is netguard.CheckURL plus what the platform clients need: a
// base to append paths to, so no query or fragment.
func checkAPIURL(raw string, allowPrivate bool) error {
	if err := netguard.CheckURL(raw, allowPrivate); err != nil {
		return err
	}
	if u, err := url.Parse(raw); err != nil || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return errors.New("must be a URL without credentials, query or fragment")
	}
	return nil
}

// apiURL is the API base the settings call: APIURL, or the provider's
// public API when it is empty.
func (in Integration) apiURL() string {
	if in.APIURL == "" {
		return DefaultAPIURL(in.Provider)
	}
	return in.APIURL
}

// Merge returns the settings saved when update (cleaned by Clean) is put
// over stored: a field update leaves empty keeps its stored value, since
// the secrets are write-only. The API credentials are bound to where they
// are sent: when update changes the API URL (an empty one being the
// provider's public API) or the store alias, the stored user token and
// user secret key are dropped and only those update supplies are kept, so
// that a merchant's credentials never follow a URL or a store they were
// not given for. The platform API is then not configured
// (redemption.MissingSetting) until they are entered again.
func (stored Integration) Merge(update Integration) Integration {
	out := stored
	out.Provider = update.Provider
	for _, f := range []struct {
		dst *string
		src string
	}{
		{&out.AccountToken, update.AccountToken},
		{&out.WebhookSecret, update.WebhookSecret},
		{&out.UserToken, update.UserToken},
		{&out.UserSecretKey, update.UserSecretKey},
		{&out.StoreAlias, update.StoreAlias},
		{&out.APIURL, update.APIURL},
	} {
		if f.src != "" {
			*f.dst = f.src
		}
	}
	stored.Provider = update.Provider
	if out.apiURL() != stored.apiURL() || out.StoreAlias != stored.StoreAlias {
		out.UserToken, out.UserSecretKey = update.UserToken, update.UserSecretKey
	}
	return out
}
