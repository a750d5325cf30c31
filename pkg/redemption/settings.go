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
	switch {
	case settings.UserToken == "":
		return "user token"
	case typ != TypeStoreCredit:
		return ""
	case settings.UserSecretKey == "":
		return "user secret key"
	case strings.TrimSpace(settings.StoreAlias) == "":
		return "store alias"
	}
	return ""
}
