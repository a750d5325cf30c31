package redemption

import (
	"crypto/hmac"
	"crypto/sha256"
	"time"

	"github.com/google/uuid"
)

// CouponValidity is how long a Yampi coupon of a redemption is valid
// (decision 19).
const CouponValidity = 90 * 24 * time.Hour

// couponAlphabet is Crockford's base32: no I, L, O or U, so a code read
// aloud or typed from a screenshot is not mistaken.
const couponAlphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

// couponChars is how many base32 characters follow the prefix: 60 bits,
// so two redemptions of a store share a code with odds of about 1 in 2^30
// even after a million coupons.
const couponChars = 12

// CouponKeyInfo names, among the keys derived from SECRETS_KEY
// (secretbox.Box.DeriveKey), the key of the Yampi coupon codes
// (Executor.CouponKey).
const CouponKeyInfo = "convida yampi store-credit code v1"

// CouponCodeFor is the Yampi coupon code of a redemption: "CVD-" followed by
// 12 characters of Crockford base32 taken from HMAC-SHA256(key, id). It is
// the same on every call with one key, which is what makes creating the
// coupon safe to repeat: Yampi refuses a second coupon with the code, and
// Execute then finds the first (see Execute). The key keeps it secret: the
// redemption id is no secret (an Idempotency-Key makes it derivable), and
// a code anyone could compute from it could be spent by anyone.
//
// The key derives from SECRETS_KEY, so it changes with a rotation of
// SECRETS_KEY: a redemption whose coupon was created under the old key but
// whose answer was lost, retried after the dispatcher restarted with the
// new key, creates a second coupon (under the new code, the one reported
// to the member). The first one, whose code nobody was told and nobody
// can derive, is left unused in the store. That window is the retries of
// one redemption (REDEMPTION_RETRY_DELAYS) across the restart; a key kept
// apart from SECRETS_KEY would close it at the cost of one more secret to
// keep and rotate.
func CouponCodeFor(key []byte, redemptionID uuid.UUID) string {
	mac := hmac.New(sha256.New, key)
	mac.Write(redemptionID[:])
	sum := mac.Sum(nil)
	var bits uint64
	for _, b := range sum[:8] {
		bits = bits<<8 | uint64(b)
	}
	code := make([]byte, couponChars)
	for i := range code {
		code[i] = couponAlphabet[bits>>59] // the top 5 bits
		bits <<= 5
	}
	return "CVD-" + string(code)
}
