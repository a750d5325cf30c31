package redemption

import (
	"strings"

	"github.com/convida/convida/pkg/merchant"
	"github.com/convida/convida/pkg/provider"
)

// MissingSetting names the first setting that a redemption of typ needs
// and settings lack (provider.Redeem's needs of the platform that carries
// out typ, provider.ForRedemption), or returns "" when it has all of them.
// Pass the zero Integration when the merchant has not configured the
// platform at all.
//
// It is the one definition of "configured" for redemptions: the API refuses
// a redemption whose platform lacks a setting before the ledger debits
// anything (integration_not_configured), and the executor refuses it with
// the same words should the settings change in between.
func MissingSetting(typ string, settings merchant.Integration) string {
	d, ok := provider.ForRedemption(typ)
	if !ok {
		return "redemption type"
	}
	return firstMissing(d.Name, provider.Redeem, settings)
}

// MissingCouponSetting names the first setting that provisioning a coupon
// at platform needs (provider.Coupon) and settings lack, or "" when it has
// them all.
func MissingCouponSetting(platform string, settings merchant.Integration) string {
	d, ok := provider.Lookup(platform)
	if !ok || !d.Can(provider.Coupon) {
		return "provider"
	}
	return firstMissing(platform, provider.Coupon, settings)
}

// firstMissing is the first setting of platform that c needs and settings
// lack, in words ("user secret key"); "" when none.
func firstMissing(platform string, c provider.Capability, settings merchant.Integration) string {
	settings.Provider = platform
	missing := settings.Missing(c)
	if len(missing) == 0 {
		return ""
	}
	return strings.ReplaceAll(missing[0], "_", " ")
}
