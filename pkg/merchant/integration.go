package merchant

import "time"

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
