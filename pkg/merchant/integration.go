package merchant

import (
	"net/url"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/apperr"
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

// Clean returns in as it is stored: fields trimmed, the fields of the other
// provider dropped, and the API URL, when set, checked to be an http(s) URL
// (an apperr.Invalid error naming api_url otherwise). An empty field keeps
// the stored value when saved: the secrets are write-only.
func (in Integration) Clean() (Integration, error) {
	out := Integration{Provider: in.Provider, UserToken: strings.TrimSpace(in.UserToken), APIURL: strings.TrimSpace(in.APIURL)}
	if in.Provider == ProviderGuru {
		out.AccountToken = strings.TrimSpace(in.AccountToken)
	} else {
		out.WebhookSecret = strings.TrimSpace(in.WebhookSecret)
		out.UserSecretKey = strings.TrimSpace(in.UserSecretKey)
		out.StoreAlias = strings.TrimSpace(in.StoreAlias)
	}
	if out.APIURL != "" {
		if u, err := url.Parse(out.APIURL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return Integration{}, apperr.Errorf(apperr.Invalid, "api_url: must be an http(s) URL")
		}
	}
	return out, nil
}
