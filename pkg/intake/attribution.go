package intake

import (
	"context"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/inbound"
)

// Coupons finds the member whose referral code is code (decision 14: case
// and surrounding spaces aside), apperr.NotFound when none: the code of a
// coupon or of a referral link.
type Coupons interface {
	FindMemberByCoupon(ctx context.Context, merchantID uuid.UUID, code string) (uuid.UUID, error)
}

// CouponIDs finds the member whose coupon at platform got the id
// couponID, from any provisioning of it (coupon_ids), and her code;
// apperr.NotFound when none.
type CouponIDs interface {
	FindMemberByCouponID(ctx context.Context, merchantID uuid.UUID, platform, couponID string) (uuid.UUID, string, error)
}

// CodeReader reads the coupon code of a sale at its platform, for a sale
// whose coupon id named no member and that carries no code (Yampi's list
// of orders gives the promocode's id, its order read whole the code). ""
// when the order has none, or cannot be read and the sale had better stay
// unattributed than fail; an error stops the take.
type CodeReader func(ctx context.Context) (string, error)

// Attribution is the member a sale names, and the code that named her:
// one of the sale's, or her own when her coupon's id did.
type Attribution struct {
	Member uuid.UUID
	Code   string
}

// Attribute finds the member a sale names, trying in order, each only
// when the sale carries it, the next only when the last named no one:
//
//  1. the id of her coupon at the platform (ev.CouponID), when CouponIDs
//     is set; naming no one, the coupon's code is read (read), when the
//     sale carries none and read is not nil;
//  2. the coupon code (ev.CouponCode);
//  3. the code of her referral link (ev.ReferralCode).
//
// Whichever of the webhook and the pull brings a sale, it climbs this one
// ladder. apperr.NotFound: the sale names no member.
func (in *Intake) Attribute(ctx context.Context, merchantID uuid.UUID, ev *inbound.OrderEvent, read CodeReader) (Attribution, error) {
	coupon := ev.CouponCode
	if ev.CouponID != "" && in.CouponIDs != nil {
		id, code, err := in.CouponIDs.FindMemberByCouponID(ctx, merchantID, ev.Provider, ev.CouponID)
		if !apperr.Is(err, apperr.NotFound) {
			return Attribution{Member: id, Code: code}, err
		}
		if coupon == "" && read != nil {
			if coupon, err = read(ctx); err != nil {
				return Attribution{}, err
			}
		}
	}
	for _, code := range [...]string{coupon, ev.ReferralCode} {
		if code == "" {
			continue
		}
		id, err := in.Coupons.FindMemberByCoupon(ctx, merchantID, code)
		if !apperr.Is(err, apperr.NotFound) {
			return Attribution{Member: id, Code: code}, err
		}
	}
	return Attribution{}, apperr.Errorf(apperr.NotFound, "no member")
}

// firstCode is the code a sale names its member by, for the words of an
// unattributed sale; "" when it carries none.
func firstCode(ev *inbound.OrderEvent) string {
	if ev.CouponCode != "" {
		return ev.CouponCode
	}
	return ev.ReferralCode
}
