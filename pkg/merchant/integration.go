package merchant

import (
	"errors"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/provider"
)

// Integration is a merchant's settings for one platform, secrets in
// plaintext (decrypted by the store; never logged, shown masked). A field
// holds one role (provider.Role) whatever the platform, so the store has
// one column per role; the platform's descriptor names each field and says
// what it is for (provider.Descriptor.Settings).
type Integration struct {
	Provider      string
	AccountToken  string
	WebhookSecret string
	UserToken     string
	UserSecretKey string
	StoreAlias    string
	ClientID      string
	ClientSecret  string
	BasicToken    string
	AccountID     string
	APIURL        string
	AuthURL       string
	CheckoutURL   string
	UpdatedAt     time.Time
}

// field is the field of role r.
func (in *Integration) field(r provider.Role) *string {
	switch r {
	case provider.AccountToken:
		return &in.AccountToken
	case provider.WebhookSecret:
		return &in.WebhookSecret
	case provider.UserToken:
		return &in.UserToken
	case provider.UserSecretKey:
		return &in.UserSecretKey
	case provider.StoreAlias:
		return &in.StoreAlias
	case provider.ClientID:
		return &in.ClientID
	case provider.ClientSecret:
		return &in.ClientSecret
	case provider.BasicToken:
		return &in.BasicToken
	case provider.AccountID:
		return &in.AccountID
	case provider.APIURL:
		return &in.APIURL
	case provider.AuthURL:
		return &in.AuthURL
	case provider.CheckoutURL:
		return &in.CheckoutURL
	}
	return new(string)
}

// Platform is the descriptor of in's platform; false for an unknown one.
func (in Integration) Platform() (provider.Descriptor, bool) { return provider.Lookup(in.Provider) }

// Value is the value of setting s: as stored, or, for a URL Convida calls
// left empty, the platform's public one.
func (in Integration) Value(s provider.Setting) string {
	v := *in.field(s.Role)
	if v == "" && s.Kind == provider.CalledURL {
		return s.Default
	}
	return v
}

// ValueOf is the value of the setting named name, "" when the platform
// has none of that name.
func (in Integration) ValueOf(name string) string {
	d, _ := in.Platform()
	s, ok := d.Setting(name)
	if !ok {
		return ""
	}
	return in.Value(s)
}

// Set sets the setting s to v.
func (in *Integration) Set(s provider.Setting, v string) { *in.field(s.Role) = v }

// WithDefaults returns in with every empty URL Convida calls set to the
// platform's public one: the settings as read back.
func (in Integration) WithDefaults() Integration {
	d, _ := in.Platform()
	for _, s := range d.Settings {
		in.Set(s, in.Value(s))
	}
	return in
}

// Missing names, as the API names them, the settings capability c needs
// and in lacks; empty when it has them all, or when the platform has no
// such capability (Configured tells that apart).
func (in Integration) Missing(c provider.Capability) []string {
	d, _ := in.Platform()
	return d.Missing(c, func(s provider.Setting) string { return strings.TrimSpace(in.Value(s)) })
}

// Configured reports whether in's platform has capability c and in holds
// every setting it needs.
func (in Integration) Configured(c provider.Capability) bool {
	d, ok := in.Platform()
	return ok && d.Can(c) && len(in.Missing(c)) == 0
}

// APIMissing names the settings the platform's API calls still need:
// those of every capability that calls it (redemptions, members' coupons,
// the pull), each once.
func (in Integration) APIMissing() []string {
	missing := []string{}
	for _, c := range []provider.Capability{provider.Redeem, provider.Coupon, provider.Pull} {
		for _, name := range in.Missing(c) {
			if !contains(missing, name) {
				missing = append(missing, name)
			}
		}
	}
	return missing
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// WebhookURL is where platform posts a merchant's webhooks: the ingest's
// public base (INGEST_PUBLIC_URL) and the merchant's id. It is what the
// merchant pastes into the platform, shown by the API and the dashboard.
func WebhookURL(ingestPublicURL, platform string, merchantID uuid.UUID) string {
	return strings.TrimRight(ingestPublicURL, "/") + "/api/webhooks/" + platform + "/" + merchantID.String()
}

// ErrFieldTooLong is the cause of Clean's refusal of a field over its
// bound, for errors.Is.
var ErrFieldTooLong = errors.New("a field is too long")

// URLCheck refuses a URL Convida would call that it must not: plain http,
// or a host that is not public (netguard.CheckURL, bound by the caller to
// PLATFORM_ALLOW_PRIVATE_NETWORKS). Its error's words are shown.
type URLCheck func(raw string) error

// CleanFields returns the settings of platform as they are stored: each of the
// platform's settings read by value (a form's or a request's values, by
// the names the descriptor gives them), trimmed and bounded
// (provider.Setting.Bound); a URL Convida calls, when set, checked by
// check and for being a base to append paths to; a link only shown, for
// being an https link. Each refusal is an apperr.Invalid error naming the
// setting; a refused URL is never repeated. An empty setting keeps the
// stored value when saved (Merge): the secrets are write-only. An unknown
// platform is apperr.NotFound.
func CleanFields(platform string, value func(name string) string, check URLCheck) (Integration, error) {
	d, ok := provider.Lookup(platform)
	if !ok {
		return Integration{}, apperr.Errorf(apperr.NotFound, "unknown provider: use %s", strings.Join(provider.Names(), ", "))
	}
	out := Integration{Provider: platform}
	for _, s := range d.Settings {
		v := strings.TrimSpace(value(s.Name))
		if utf8.RuneCountInString(v) > s.Bound() {
			return Integration{}, apperr.Invalidf(s.Name, apperr.RuleTooLong, "must be at most %d characters", s.Bound()).
				WithLimit(int64(s.Bound())).WithCause(ErrFieldTooLong)
		}
		if err := checkURL(s.Kind, v, check); err != nil {
			return Integration{}, apperr.Invalidf(s.Name, apperr.RuleFormat, "%s", err.Error()).WithCause(err)
		}
		out.Set(s, v)
	}
	return out, nil
}

// Clean is CleanFields of in's own settings: the fields of other
// platforms are dropped.
func (in Integration) Clean(check URLCheck) (Integration, error) {
	return CleanFields(in.Provider, func(name string) string {
		d, _ := in.Platform()
		s, _ := d.Setting(name)
		return *in.field(s.Role)
	}, check)
}

// checkURL checks a URL setting's value v by its kind; "" is always
// accepted (it keeps the stored value, or means the default).
func checkURL(kind provider.Kind, v string, check URLCheck) error {
	switch {
	case v == "":
		return nil
	case kind == provider.CalledURL:
		if check != nil {
			if err := check(v); err != nil {
				return err
			}
		}
		if u, err := url.Parse(v); err != nil || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
			return errors.New("must be a URL without credentials, query or fragment")
		}
	case kind == provider.ShownURL:
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

// Merge returns the settings saved when update (cleaned by Clean) is put
// over stored: a setting update leaves empty keeps its stored value, since
// the secrets are write-only. The API credentials are bound to where they
// are sent: when update changes a URL Convida calls (an empty one being
// the platform's public one) or the store alias, the stored secrets other
// than the webhook's are dropped and only those update supplies are kept,
// so that a merchant's credentials never follow a URL or a store they were
// not given for. The platform's API is then not configured (APIMissing)
// until they are entered again.
func (stored Integration) Merge(update Integration) Integration {
	d, _ := update.Platform()
	stored.Provider = update.Provider
	out := stored
	moved := false
	for _, s := range d.Settings {
		if v := update.Value(s); v != "" && *update.field(s.Role) != "" {
			out.Set(s, v)
		}
		if (s.Kind == provider.CalledURL || s.Role == provider.StoreAlias) && out.Value(s) != stored.Value(s) {
			moved = true
		}
	}
	if moved {
		for _, s := range d.Settings {
			if s.Kind == provider.Secret && s.Name != d.Webhook.Setting {
				out.Set(s, *update.field(s.Role))
			}
		}
	}
	return out
}

// Changes names the settings of the platform, as its API names them, whose
// value differs between before and after: those a save sent with a new
// value, and the API secrets a new URL or store alias dropped. Names only:
// what is audited never holds a value.
func (before Integration) Changes(after Integration) []string {
	d, _ := before.Platform()
	changed := []string{}
	for _, s := range d.Settings {
		if *before.field(s.Role) != *after.field(s.Role) {
			changed = append(changed, s.Name)
		}
	}
	return changed
}
