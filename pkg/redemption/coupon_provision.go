package redemption

import (
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/merchant"
	"github.com/convida/convida/pkg/retry"
)

// CouponJob is a claimed row of coupon provisioning: one member's code at
// one platform, as wanted at version Version.
type CouponJob struct {
	MerchantID uuid.UUID
	MemberID   uuid.UUID
	Platform   string    // provider.Guru or provider.Yampi
	Version    int64     // the wanted version the outcome is written for
	Attempts   int       // tries already made for this version
	CouponID   string    // the platform's id of the coupon provisioned before; "" when none
	Code       string    // the member's referral code
	Discount   Discount  // the campaign's referee discount now (zero: none)
	Carried    Discount  // what the platform's coupon carries (zero: nothing, or switched off)
	LeaseToken uuid.UUID // the claim's; an outcome is written only under it
}

// SwitchesOff reports whether the try is to switch the coupon off: the
// campaign no longer gives a discount, and the platform's coupon still
// does.
func (j CouponJob) SwitchesOff() bool {
	return (j.Discount.Type == "" || j.Discount.Value <= 0) && j.CouponID != "" && j.Carried.Type != ""
}

// Request is the coupon a try asks the platform for.
func (j CouponJob) Request(now time.Time, idempotencyKey string) CouponRequest {
	req := CouponRequest{Code: j.Code, Discount: j.Discount, CouponID: j.CouponID, Now: now, IdempotencyKey: idempotencyKey}
	if j.SwitchesOff() {
		req.Discount, req.Inactive = j.Carried, true
	}
	return req
}

// CouponOutcome is what a try did to a CouponJob.
type CouponOutcome struct {
	Status   string // CouponPending (retry), CouponProvisioned, CouponFailed or CouponNotConfigured
	CouponID string // the coupon at the platform; "" keeps the one known
	Error    string // "" when none
	Attempts int    // tries made for the version, this one included
	// RetryIn is the pause before the next try of a pending outcome.
	RetryIn time.Duration
	// Carries is what the platform's coupon gives after the try: nil when
	// unknown or unchanged, the zero Discount when switched off.
	Carries *Discount
}

// NoRefereeDiscount is the error of a member whose campaign gives the
// friend no discount: nothing is provisioned.
const NoRefereeDiscount = "the member's campaign has no referee discount (referee_discount_type is null)"

// Skip returns the outcome of a job that needs no platform call, and ok
// true: not_configured when settings lack a credential (found false: the
// merchant has not configured the platform at all) or the campaign has no
// referee discount (and no coupon of an earlier one to switch off). ok is
// false when the platform is to be called.
func (j CouponJob) Skip(settings merchant.Integration, found bool) (CouponOutcome, bool) {
	switch {
	case !found:
		return CouponOutcome{Status: CouponNotConfigured, Error: "the " + j.Platform + " integration is not configured"}, true
	case MissingCouponSetting(j.Platform, settings) != "":
		return CouponOutcome{Status: CouponNotConfigured,
			Error: "the " + j.Platform + " " + MissingCouponSetting(j.Platform, settings) + " is not set in the merchant's settings"}, true
	case j.SwitchesOff():
	case j.Discount.Type == "" || j.Discount.Value <= 0:
		return CouponOutcome{Status: CouponNotConfigured, Error: NoRefereeDiscount}, true
	}
	return CouponOutcome{}, false
}

// Outcome is the outcome of a try that returned res and err
// (ProvisionCoupon), under policy: provisioned on success; on a transient
// failure pending with the pause before the next try, or failed once the
// policy's tries are spent; failed at once on a refusal, with the
// platform's message.
func (j CouponJob) Outcome(res CouponResult, err error, policy RetryPolicy) CouponOutcome {
	tried := j.Attempts + 1
	switch {
	case err == nil && j.SwitchesOff():
		return CouponOutcome{Status: CouponNotConfigured, CouponID: res.CouponID, Attempts: tried, Carries: &Discount{},
			Error: NoRefereeDiscount + "; the coupon was switched off at the platform"}
	case err == nil:
		return CouponOutcome{Status: CouponProvisioned, CouponID: res.CouponID, Attempts: tried, Carries: &j.Discount}
	case apperr.Is(err, apperr.Unavailable):
		if pause, ok := policy.Next(tried, retry.RetryAfter(err)); ok {
			return CouponOutcome{Status: CouponPending, Error: apperr.MessageOf(err), Attempts: tried, RetryIn: pause}
		}
		return CouponOutcome{Status: CouponFailed, Attempts: tried,
			Error: apperr.MessageOf(err) + fmt.Sprintf(" (gave up after %d attempts)", tried)}
	default:
		return CouponOutcome{Status: CouponFailed, Error: apperr.MessageOf(err), Attempts: tried}
	}
}

// CouponState is a member's coupon at one platform, as the admin shape
// shows it.
type CouponState struct {
	Status   string
	CouponID string
	Error    string
}

// CouponStateView is the JSON of a CouponState: coupon_id and error null
// when none.
type CouponStateView struct {
	Status   string  `json:"status"`
	CouponID *string `json:"coupon_id"`
	Error    *string `json:"error"`
}

// CouponProvisioningView is the member's coupon_provisioning in the admin
// shape: her coupon's state at each of CouponPlatforms, by name.
type CouponProvisioningView map[string]CouponStateView

// NotAsked is the state shown for a platform no provisioning was ever
// asked for (no row; every member has rows since migration 00008).
var NotAsked = CouponState{Status: CouponNotConfigured, Error: "not provisioned: POST /api/v1/members/{id}/provision-coupon"}

// CouponView renders the states of a member by platform; a missing
// platform is NotAsked.
func CouponView(states map[string]CouponState) CouponProvisioningView {
	view := func(p string) CouponStateView {
		st, ok := states[p]
		if !ok {
			st = NotAsked
		}
		v := CouponStateView{Status: st.Status}
		if st.CouponID != "" {
			v.CouponID = &st.CouponID
		}
		if st.Error != "" {
			v.Error = &st.Error
		}
		return v
	}
	out := CouponProvisioningView{}
	for _, p := range CouponPlatforms {
		out[p] = view(p)
	}
	return out
}
