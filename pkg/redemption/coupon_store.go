package redemption

import (
	"context"

	"github.com/google/uuid"
)

// Coupons asks for members' codes as coupons at the platforms and reads
// where they stand (postgres.CouponStore); the dispatcher carries the
// requests out.
type Coupons interface {
	// RequestCoupons asks for the member's coupons to be created or
	// updated (apperr.NotFound for an unknown member).
	RequestCoupons(ctx context.Context, merchantID, memberID uuid.UUID) error
	// CouponStates returns the members' states by member and platform.
	CouponStates(ctx context.Context, merchantID uuid.UUID, memberIDs []uuid.UUID) (map[uuid.UUID]map[string]CouponState, error)
}
