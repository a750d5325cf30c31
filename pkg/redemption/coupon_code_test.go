package redemption

import (
	"crypto/sha256"
	"regexp"
	"testing"

	"github.com/google/uuid"
)

var (
	testCouponKey    = []byte("0123456789abcdef0123456789abcdef")
	testRedemptionID = uuid.MustParse("0191f0a0-0000-7000-8000-000000000001")
)

func TestCouponCodeFor(t *testing.T) {
	t.Parallel()
	shape := regexp.MustCompile(`^CVD-[0-9A-HJKMNP-TV-Z]{12}$`)
	otherKey := []byte("another key, another deployment.")
	seen := map[string]uuid.UUID{}
	for i := range 2000 {
		id := uuid.New()
		if i == 0 {
			id = testRedemptionID
		}
		code := CouponCodeFor(testCouponKey, id)
		if !shape.MatchString(code) {
			t.Fatalf("CouponCodeFor(%s) = %q, want CVD- and 12 Crockford base32 characters", id, code)
		}
		if again := CouponCodeFor(testCouponKey, id); again != code {
			t.Fatalf("CouponCodeFor(%s) = %q then %q, want the same", id, code, again)
		}
		if other := CouponCodeFor(otherKey, id); other == code {
			t.Fatalf("CouponCodeFor(%s) = %q under two keys, want a code per key", id, code)
		}
		if unkeyed := unkeyedCouponCode(id); unkeyed == code {
			t.Fatalf("CouponCodeFor(%s) = %q, the code anyone can derive from the id", id, code)
		}
		if other, dup := seen[code]; dup {
			t.Fatalf("%s and %s share the code %s", id, other, code)
		}
		seen[code] = id
	}
}

// unkeyedCouponCode is the code of a redemption before the codes were
// keyed: derivable by anyone who knows the redemption id.
func unkeyedCouponCode(id uuid.UUID) string {
	sum := sha256.Sum256(append([]byte("convida/yampi-coupon/"), id[:]...))
	var bits uint64
	for _, b := range sum[:8] {
		bits = bits<<8 | uint64(b)
	}
	code := make([]byte, couponChars)
	for i := range code {
		code[i] = couponAlphabet[bits>>59]
		bits <<= 5
	}
	return "CVD-" + string(code)
}
