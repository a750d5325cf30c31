package redemption

import (
	"strings"
	"testing"
	"time"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/merchant"
)

// couponNow is when the coupons of these tests start.
var couponNow = time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)

// TestCouponJobOutcome: the rules of a try's outcome.
func TestCouponJobOutcome(t *testing.T) {
	t.Parallel()
	policy := RetryPolicy{Attempts: 5, Delays: []time.Duration{time.Second, 2 * time.Second}}
	transient := apperr.Wrap(apperr.Unavailable, transientError{"guru POST coupons answered 500"}, "guru POST coupons answered 500")
	refused := apperr.Errorf(apperr.Unprocessable, "guru POST coupons answered 400: bad")
	tests := []struct {
		name     string
		attempts int
		res      CouponResult
		err      error
		want     CouponOutcome
	}{
		{"success", 0, CouponResult{CouponID: "9"}, nil, CouponOutcome{Status: CouponProvisioned, CouponID: "9", Attempts: 1}},
		{"first transient failure", 0, CouponResult{}, transient, CouponOutcome{Status: CouponPending, Attempts: 1, Error: "guru POST coupons answered 500"}},
		{"fifth transient failure", 4, CouponResult{}, transient, CouponOutcome{Status: CouponFailed, Attempts: 5,
			Error: "guru POST coupons answered 500 (gave up after 5 attempts)"}},
		{"refusal", 2, CouponResult{}, refused, CouponOutcome{Status: CouponFailed, Attempts: 3, Error: "guru POST coupons answered 400: bad"}},
	}
	discount := Discount{Type: "percentage", Value: 10}
	for _, tt := range tests {
		got := CouponJob{Attempts: tt.attempts, Discount: discount}.Outcome(tt.res, tt.err, policy)
		pause := got.RetryIn
		got.RetryIn = 0
		if tt.err == nil && (got.Carries == nil || *got.Carries != discount) {
			t.Errorf("%s: carries %v, want the discount", tt.name, got.Carries)
		}
		got.Carries = nil
		if got != tt.want {
			t.Errorf("%s: outcome = %+v, want %+v", tt.name, got, tt.want)
		}
		if tt.want.Status == CouponPending && (pause < 900*time.Millisecond || pause > 1100*time.Millisecond) {
			t.Errorf("%s: retry in %s, want the first delay (1s ±10%%)", tt.name, pause)
		}
	}

	guru := merchant.Integration{UserToken: "t"}
	skips := []struct {
		name     string
		job      CouponJob
		settings merchant.Integration
		found    bool
		want     string // "" when the platform is called
	}{
		{"configured", CouponJob{Platform: "guru", Discount: discount}, guru, true, ""},
		{"not configured at all", CouponJob{Platform: "guru", Discount: discount}, merchant.Integration{}, false, "the guru integration is not configured"},
		{"webhooks only", CouponJob{Platform: "yampi", Discount: discount}, merchant.Integration{WebhookSecret: "s"}, true,
			"the yampi user token is not set in the merchant's settings"},
		{"no store alias", CouponJob{Platform: "yampi", Discount: discount}, merchant.Integration{UserToken: "t", UserSecretKey: "k"}, true,
			"the yampi store alias is not set in the merchant's settings"},
		{"no referee discount", CouponJob{Platform: "guru"}, guru, true, NoRefereeDiscount},
		{"no referee discount, a coupon switched off", CouponJob{Platform: "guru", CouponID: "9"}, guru, true, NoRefereeDiscount},
		{"discount removed, the coupon still gives one", CouponJob{Platform: "guru", CouponID: "9", Carried: discount}, guru, true, ""},
	}
	// Switched off: the request carries the discount the coupon had,
	// inactive; the outcome keeps the coupon and records that it carries
	// nothing now.
	off := CouponJob{Platform: "guru", Code: "LOJ-ANA-7KQ2", CouponID: "9", Carried: discount}
	if req := off.Request(couponNow, "k"); !req.Inactive || req.Discount != discount || req.CouponID != "9" {
		t.Errorf("switch-off request = %+v", req)
	}
	if o := off.Outcome(CouponResult{CouponID: "9"}, nil, policy); o.Status != CouponNotConfigured || o.CouponID != "9" ||
		o.Carries == nil || *o.Carries != (Discount{}) || !strings.Contains(o.Error, "switched off") {
		t.Errorf("switch-off outcome = %+v", o)
	}
	for _, tt := range skips {
		got, skip := tt.job.Skip(tt.settings, tt.found)
		if skip != (tt.want != "") || got.Error != tt.want || (skip && got.Status != CouponNotConfigured) {
			t.Errorf("%s: Skip = %+v, %v; want skip %v with %q", tt.name, got, skip, tt.want != "", tt.want)
		}
	}
}

// transientError is a platform's failure worth another try, as an adapter
// reports it (retry.Transient).
type transientError struct{ msg string }

func (e transientError) Error() string             { return e.msg }
func (e transientError) RetryAfter() time.Duration { return 0 }
