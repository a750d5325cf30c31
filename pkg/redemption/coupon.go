package redemption

import (
	"time"

	"github.com/convida/convida/pkg/provider"
)

// Referee coupons (issue 11, docs/platforms.md "Referee coupons"): a member's
// referral code becomes a real coupon at each configured platform,
// carrying the campaign's referee discount, so that the friend who uses it
// gets the discount at checkout and the sale carries the code.

// Statuses of a member's coupon at one platform.
const (
	CouponPending       = "pending"        // asked for, not carried out yet (or being retried)
	CouponProvisioned   = "provisioned"    // the platform holds the coupon with the wanted discount
	CouponFailed        = "failed"         // the platform refused, or failed on every try
	CouponNotConfigured = "not_configured" // no API credentials, or no referee discount
)

// CouponPlatforms are the platforms a member's code is provisioned at.
var CouponPlatforms = func() []string {
	var names []string
	for _, d := range provider.With(provider.Coupon) {
		names = append(names, d.Name)
	}
	return names
}()

// RefereeCouponYears is how long a referee coupon is valid from its
// provisioning: campaigns have no end date, and a code lives as long as its
// member.
const RefereeCouponYears = 5

// Discount is the referee's discount a coupon carries: Type
// campaign.RewardPercentage with Value a whole percent, or
// campaign.RewardFixed with Value in cents.
type Discount struct {
	Type  string
	Value int64
}

// CouponRequest is one member's code to provision at one platform.
type CouponRequest struct {
	Code     string   // the member's referral code, the coupon's code
	Discount Discount // what the coupon gives the friend
	// CouponID is the platform's id of the coupon provisioned before: it is
	// updated (PUT); "" creates it (POST).
	CouponID string
	// IdempotencyKey is sent with the creation, for the platforms that
	// honour it; optional.
	IdempotencyKey string
	// Inactive switches the coupon of CouponID off (its campaign no longer
	// gives a discount; Discount is the one it carried): only the update is
	// sent, and a coupon the platform no longer has needs nothing.
	Inactive bool
	Now      time.Time // the start of the validity; zero means time.Now()
}

// CouponResult is the coupon the platform holds after ProvisionCoupon.
type CouponResult struct {
	CouponID string
	// Adopted is true when the platform already had a coupon of the code
	// (an earlier try whose answer was lost, or one the merchant typed by
	// hand) and it was taken over instead of duplicated.
	Adopted bool
}
