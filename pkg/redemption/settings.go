package redemption

import (
	"strings"

	"github.com/convida/convida/pkg/merchant"
)

// MissingSetting names the first setting that a redemption of typ needs
// and settings lack, or returns "" when it has all of them: the Guru user
// token for TypeSubscriptionDiscount; the Yampi user token, user secret key
// and store alias for TypeStoreCredit. Pass the zero Integration when the
// merchant has not configured the provider at all.
//
// It is the one definition of "configured" for redemptions: the API refuses
// a redemption whose platform lacks a setting before the ledger debits
// anything (integration_not_configured), and Execute refuses it with the
// same words should the settings change in between.
func MissingSetting(typ string, settings merchant.Integration) string {
	missing := missingFields(typ, settings)
	if len(missing) == 0 {
		return ""
	}
	return strings.ReplaceAll(missing[0], "_", " ")
}

// MissingFields lists, by their names in the integration's API
// (user_token, user_secret_key, store_alias), the settings that provider's
// API calls (redemptions and coupons) need and settings lack; it is empty
// when the platform's API is configured. It is MissingSetting's rule, whole.
func MissingFields(provider string, settings merchant.Integration) []string {
	typ := TypeSubscriptionDiscount
	if provider == merchant.ProviderYampi {
		typ = TypeStoreCredit
	}
	return missingFields(typ, settings)
}

func missingFields(typ string, settings merchant.Integration) []string {
	missing := []string{}
	if settings.UserToken == "" {
		missing = append(missing, "user_token")
	}
	if typ != TypeStoreCredit {
		return missing
	}
	if settings.UserSecretKey == "" {
		missing = append(missing, "user_secret_key")
	}
	if strings.TrimSpace(settings.StoreAlias) == "" {
		missing = append(missing, "store_alias")
	}
	return missing
}
