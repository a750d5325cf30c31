package referral

import (
	"context"

	"github.com/google/uuid"
)

// Finder finds a merchant's referrals (postgres.ReferralReads).
type Finder interface {
	// FindReferralByID returns the referral, or apperr.NotFound (another
	// merchant's included).
	FindReferralByID(ctx context.Context, merchantID, id uuid.UUID) (*Listed, error)
}

// CreatorSales lists a creator's sales: her member's referrals, every
// status (postgres.CreatorStore).
type CreatorSales interface {
	// ListCreatorSales returns a page of the member's referrals, newest
	// first, and their number.
	ListCreatorSales(ctx context.Context, merchantID, memberID uuid.UUID, offset, limit int) ([]Referral, int, error)
}
