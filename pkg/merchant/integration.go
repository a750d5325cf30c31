package merchant

import (
	"errors"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/bounds"
	"github.com/convida/convida/pkg/netguard"
	"github.com/convida/convida/pkg/platform"
)

// Providers whose webhooks the ingest accepts. Guru's and Yampi's APIs also
// serve redemptions and members' coupons; Hotmart's and Kiwify's are only
// read, to find sales whose webhook never arrived.
const (
	ProviderGuru    = "guru"
	ProviderYampi   = "yampi"
	ProviderHotmart = "hotmart"
	ProviderKiwify  = "kiwify"
)

// Providers are the known providers, in the order the API and dashboard list them.
var Providers = []string{ProviderGuru, ProviderYampi, ProviderHotmart, ProviderKiwify}

// Integration is a merchant's settings for one provider, secrets in
// plaintext (decrypted by the store; never logged, shown masked). A field
// holds one role whatever the provider, so the store has one sealed column
// per role; the API names it per provider (fields).
type Integration struct {
	Provider      string
	AccountToken  string // guru: compared with api_token of webhooks; hotmart: the hottok of X-HOTMART-HOTTOK
	WebhookSecret string // yampi: key of X-Yampi-Hmac-SHA256; kiwify: the webhook token, key of ?signature=
	UserToken     string // guru: bearer for its API; yampi: User-Token
	UserSecretKey string // yampi: User-Secret-Key
	StoreAlias    string // yampi store alias
	ClientID      string // hotmart, kiwify: OAuth client id of the sales pull
	ClientSecret  string // hotmart, kiwify: OAuth client secret
	BasicToken    string // hotmart: the Basic authorization of its OAuth token call
	AccountID     string // kiwify: x-kiwify-account-id
	APIURL        string
	AuthURL       string // hotmart: the OAuth token endpoint
	CheckoutURL   string // kiwify: the product's checkout link, only ever shown (members' referral links)
	UpdatedAt     time.Time
}

// DefaultAPIURL is the provider's public API base, used when none is set.
func DefaultAPIURL(provider string) string {
	switch provider {
	case ProviderGuru:
		return platform.DefaultGuruAPIURL
	case ProviderYampi:
		return platform.DefaultYampiAPIURL
	case ProviderHotmart:
		return platform.DefaultHotmartAPIURL
	case ProviderKiwify:
		return platform.DefaultKiwifyAPIURL
	}
	return ""
}

// DefaultAuthURL is the provider's OAuth token endpoint, used when none is
// set; "" for a provider whose API needs none of its own (Kiwify's is under
// its API base).
func DefaultAuthURL(provider string) string {
	if provider == ProviderHotmart {
		return platform.DefaultHotmartAuthURL
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
func KnownProvider(p string) bool { return slices.Contains(Providers, p) }

// Bounds of the integration fields, in characters: a credential or alias
// longer than any platform issues is a mistake or an attack on storage.
const (
	MaxIntegrationField = bounds.ID
	MaxAPIURL           = bounds.URL
)

// ErrFieldTooLong is the cause of Clean's refusal of a field over its
// bound, for errors.Is.
var ErrFieldTooLong = errors.New("a field is too long")

// fieldKind says how Clean checks a field.
type fieldKind int

const (
	plainField    fieldKind = iota // text up to MaxIntegrationField
	apiURLField                    // a base the platform clients call: checkAPIURL
	shownURLField                  // a link only ever shown: checkShownURL
)

// field is one setting of a provider as the API names it.
type field struct {
	name  string
	value *string
	kind  fieldKind
}

// fields are the settings of in.Provider, by their API names; none for an
// unknown provider.
func (in *Integration) fields() []field {
	switch in.Provider {
	case ProviderGuru:
		return []field{{"account_token", &in.AccountToken, plainField}, {"user_token", &in.UserToken, plainField},
			{"api_url", &in.APIURL, apiURLField}}
	case ProviderYampi:
		return []field{{"webhook_secret", &in.WebhookSecret, plainField}, {"user_token", &in.UserToken, plainField},
			{"user_secret_key", &in.UserSecretKey, plainField}, {"store_alias", &in.StoreAlias, plainField},
			{"api_url", &in.APIURL, apiURLField}}
	case ProviderHotmart:
		return []field{{"hottok", &in.AccountToken, plainField}, {"client_id", &in.ClientID, plainField},
			{"client_secret", &in.ClientSecret, plainField}, {"basic_token", &in.BasicToken, plainField},
			{"api_url", &in.APIURL, apiURLField}, {"auth_url", &in.AuthURL, apiURLField}}
	case ProviderKiwify:
		return []field{{"webhook_token", &in.WebhookSecret, plainField}, {"client_id", &in.ClientID, plainField},
			{"client_secret", &in.ClientSecret, plainField}, {"account_id", &in.AccountID, plainField},
			{"api_url", &in.APIURL, apiURLField}, {"checkout_url", &in.CheckoutURL, shownURLField}}
	}
	return nil
}

// Clean returns in as it is stored: the provider's fields (fields)
// trimmed and bounded (MaxIntegrationField, MaxAPIURL for URLs), the
// fields of other providers dropped; an API or auth URL, when set, checked
// by netguard.CheckURL (https only and a public host unless allowPrivate,
// PLATFORM_ALLOW_PRIVATE_NETWORKS), and a checkout URL, which Convida
// never fetches, only for being an https link. Each refusal is an
// apperr.Invalid error naming the field; a refused URL is never repeated.
// An empty field keeps the stored value when saved (Merge): the secrets
// are write-only.
func (in Integration) Clean(allowPrivate bool) (Integration, error) {
	// The provider's fields first, so that a refusal names them as the
	// provider's API does; then every other one, dropped but bounded too.
	for _, f := range append(in.fields(), in.everyField()...) {
		if err := checkBound(f); err != nil {
			return Integration{}, err
		}
	}
	out := Integration{Provider: in.Provider}
	dst := out.fields()
	for i, f := range in.fields() {
		v := strings.TrimSpace(*f.value)
		if err := checkURLField(f.kind, v, allowPrivate); err != nil {
			return Integration{}, apperr.Invalidf(f.name, apperr.RuleFormat, "%s", err.Error()).WithCause(err)
		}
		*dst[i].value = v
	}
	return out, nil
}

// everyField is every field of an Integration under its first API name,
// whichever provider it is of.
func (in *Integration) everyField() []field {
	return []field{{"account_token", &in.AccountToken, plainField}, {"webhook_secret", &in.WebhookSecret, plainField},
		{"user_token", &in.UserToken, plainField}, {"user_secret_key", &in.UserSecretKey, plainField},
		{"store_alias", &in.StoreAlias, plainField}, {"client_id", &in.ClientID, plainField},
		{"client_secret", &in.ClientSecret, plainField}, {"basic_token", &in.BasicToken, plainField},
		{"account_id", &in.AccountID, plainField}, {"api_url", &in.APIURL, apiURLField},
		{"auth_url", &in.AuthURL, apiURLField}, {"checkout_url", &in.CheckoutURL, shownURLField}}
}

// checkBound refuses a field, trimmed, over its bound: MaxAPIURL for a
// URL, MaxIntegrationField for the others.
func checkBound(f field) error {
	max := MaxIntegrationField
	if f.kind != plainField {
		max = MaxAPIURL
	}
	if utf8.RuneCountInString(strings.TrimSpace(*f.value)) > max {
		return apperr.Invalidf(f.name, apperr.RuleTooLong, "must be at most %d characters", max).WithLimit(int64(max)).WithCause(ErrFieldTooLong)
	}
	return nil
}

// checkURLField checks a URL field's value v by its kind; "" is always
// accepted (it keeps the stored value, or means the default).
func checkURLField(kind fieldKind, v string, allowPrivate bool) error {
	switch {
	case v == "":
		return nil
	case kind == apiURLField:
		return checkAPIURL(v, allowPrivate)
	case kind == shownURLField:
		return checkShownURL(v)
	}
	return nil
}

// checkShownURL accepts an absolute https link without credentials or
// fragment. It is never fetched, so its host is not checked; the query is
// kept (a referral link adds a parameter to it).
func checkShownURL(raw string) error {
	u, err := url.Parse(raw)
	switch {
	case err != nil || u.Host == "" || !u.IsAbs():
		return errors.New("must be an absolute URL with a host")
	case u.Scheme != "https":
		return errors.New("must be an https URL")
	case u.User != nil || u.Fragment != "":
		return errors.New("must be a URL without credentials or fragment")
	}
	return nil
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

// authURL is the OAuth endpoint the settings call: AuthURL, or the
// provider's own when it is empty.
func (in Integration) authURL() string {
	if in.AuthURL == "" {
		return DefaultAuthURL(in.Provider)
	}
	return in.AuthURL
}

// Merge returns the settings saved when update (cleaned by Clean) is put
// over stored: a field update leaves empty keeps its stored value, since
// the secrets are write-only. The API credentials are bound to where they
// are sent: when update changes the API URL or the auth URL (an empty one
// being the provider's public one) or the store alias, the stored API
// secrets (user token, user secret key, client secret, basic token) are
// dropped and only those update supplies are kept, so that a merchant's
// credentials never follow a URL or a store they were not given for. The
// platform API is then not configured (redemption.MissingFields,
// PullMissing) until they are entered again.
func (stored Integration) Merge(update Integration) Integration {
	out := stored
	out.Provider = update.Provider
	src, dst := update.fields(), out.fields()
	for i, f := range src {
		if *f.value != "" {
			*dst[i].value = *f.value
		}
	}
	stored.Provider = update.Provider
	if out.apiURL() != stored.apiURL() || out.authURL() != stored.authURL() || out.StoreAlias != stored.StoreAlias {
		out.UserToken, out.UserSecretKey = update.UserToken, update.UserSecretKey
		out.ClientSecret, out.BasicToken = update.ClientSecret, update.BasicToken
	}
	return out
}

// FromFields returns the settings of provider whose fields (as its API
// names them) are read by value: a form's or a request's values, which
// Clean then checks. Fields of other providers are not read.
func FromFields(provider string, value func(name string) string) Integration {
	in := Integration{Provider: provider}
	for _, f := range in.fields() {
		*f.value = value(f.name)
	}
	return in
}

// PullMissing names the fields, as the API names them, that reading
// Hotmart's or Kiwify's sales still needs; empty when none is missing, and
// for the other providers (whose API needs are redemption.MissingFields).
func (in Integration) PullMissing() []string {
	var need []field
	switch in.Provider {
	case ProviderHotmart:
		need = []field{{"client_id", &in.ClientID, plainField}, {"client_secret", &in.ClientSecret, plainField},
			{"basic_token", &in.BasicToken, plainField}}
	case ProviderKiwify:
		need = []field{{"client_id", &in.ClientID, plainField}, {"client_secret", &in.ClientSecret, plainField},
			{"account_id", &in.AccountID, plainField}}
	}
	missing := []string{}
	for _, f := range need {
		if strings.TrimSpace(*f.value) == "" {
			missing = append(missing, f.name)
		}
	}
	return missing
}

// Changes names the fields of the provider, as its API names them, whose
// value differs between before and after: those a save sent with a new
// value, and the API secrets a new URL or store alias dropped. Names only:
// what is audited never holds a value.
func (before Integration) Changes(after Integration) []string {
	after.Provider = before.Provider
	b, a := before.fields(), after.fields()
	changed := []string{}
	for i := range b {
		if *b[i].value != *a[i].value {
			changed = append(changed, b[i].name)
		}
	}
	return changed
}
