package redemption

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/campaign"
	"github.com/convida/convida/pkg/merchant"
	"github.com/convida/convida/pkg/platform"
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
var CouponPlatforms = []string{merchant.ProviderGuru, merchant.ProviderYampi}

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

// MissingCouponSetting names the first setting that provisioning a coupon
// at provider needs and settings lack, or "" when it has them all: the
// Guru user token; the Yampi user token, user secret key and store alias
// (the same as redemptions need, MissingSetting).
func MissingCouponSetting(provider string, settings merchant.Integration) string {
	switch provider {
	case merchant.ProviderGuru:
		return MissingSetting(TypeSubscriptionDiscount, settings)
	case merchant.ProviderYampi:
		return MissingSetting(TypeStoreCredit, settings)
	}
	return "provider"
}

// RetryAfter is the Retry-After a platform sent with a transient failure
// of ProvisionCoupon (zero when it sent none).
func RetryAfter(err error) time.Duration { return platform.RetryAfter(err) }

// ProvisionCoupon makes one try at putting req's coupon at provider with
// settings (decrypted; an empty APIURL means the public API), through the
// platform's client (platform.Guru.ProvisionCoupon,
// platform.Yampi.ProvisionCoupon): with a CouponID the coupon is updated
// (created again when the platform no longer has it, unless req.Inactive);
// otherwise it is created, and a code that exists already is adopted
// rather than duplicated, so that repeating a creation whose answer was
// lost never makes a second coupon. The validity runs RefereeCouponYears
// from req.Now.
//
// It does not retry. The error is an *apperr.Error: Unavailable for a 5xx,
// a 429 or a network error (worth another try later; see RetryAfter),
// Unprocessable for a refusal or settings that lack something (the
// message names the platform, the request and at most 200 characters of
// its answer, never a credential).
func (e *Executor) ProvisionCoupon(ctx context.Context, provider string, settings merchant.Integration, req CouponRequest) (CouponResult, error) {
	coupon, err := couponOf(provider, settings, req)
	if err != nil {
		return CouponResult{}, err
	}
	var res platform.CouponResult
	switch provider {
	case merchant.ProviderGuru:
		var g *platform.Guru
		if g, err = e.platforms().Guru(guruAccount(settings, req.IdempotencyKey)); err == nil {
			res, err = g.ProvisionCoupon(ctx, coupon)
		}
	default:
		var y *platform.Yampi
		if y, err = e.platforms().Yampi(yampiAccount(settings, req.IdempotencyKey)); err == nil {
			res, err = y.ProvisionCoupon(ctx, coupon)
		}
	}
	var t *platform.TransientError
	if errors.As(err, &t) {
		return CouponResult{}, apperr.Wrap(apperr.Unavailable, t, t.Msg)
	}
	if err != nil {
		return CouponResult{}, err
	}
	return CouponResult{CouponID: res.ID, Adopted: res.Adopted}, nil
}

// couponOf checks req and returns the coupon to put at the platform: the
// member's code with the referee discount, valid RefereeCouponYears.
func couponOf(provider string, settings merchant.Integration, req CouponRequest) (platform.Coupon, error) {
	if missing := MissingCouponSetting(provider, settings); missing != "" {
		return platform.Coupon{}, apperr.Errorf(apperr.Unprocessable, "the %s %s is not set in the merchant's settings", provider, missing)
	}
	if strings.TrimSpace(req.Code) == "" {
		return platform.Coupon{}, apperr.Errorf(apperr.Unprocessable, "the member has no referral code")
	}
	if err := (campaign.Rules{RefereeDiscountType: req.Discount.Type, RefereeDiscountValue: req.Discount.Value}).Validate(); err != nil || req.Discount.Type == "" {
		return platform.Coupon{}, apperr.Errorf(apperr.Unprocessable, "the referee discount is not a valid percentage or fixed amount")
	}
	if req.Inactive && strings.TrimSpace(req.CouponID) == "" {
		return platform.Coupon{}, apperr.Errorf(apperr.Unprocessable, "no coupon to switch off")
	}
	now := req.Now
	if now.IsZero() {
		now = time.Now()
	}
	start := now.Truncate(time.Second)
	return platform.Coupon{Code: req.Code, Percentage: req.Discount.Type == campaign.RewardPercentage, Value: req.Discount.Value,
		Start: start, End: start.AddDate(RefereeCouponYears, 0, 0), ID: strings.TrimSpace(req.CouponID), Inactive: req.Inactive}, nil
}
