package creator

import (
	"context"
	"time"

	"github.com/google/uuid"
)

// The contracts of creators' storage that the API and the dashboard
// share; each edge adds what only it reads. A member without a profile,
// another merchant's included, is apperr.NotFound.

// Store keeps creator profiles (postgres.CreatorStore).
type Store interface {
	// PutCreator creates the profile with a fresh token, or updates its
	// fields keeping the token; created tells which.
	PutCreator(ctx context.Context, in Profile) (p *Profile, created bool, err error)
	FindCreator(ctx context.Context, merchantID, memberID uuid.UUID) (*Profile, error)
	// RotateCreatorToken gives the profile a new token; the old one
	// finds nothing from then on.
	RotateCreatorToken(ctx context.Context, merchantID, memberID uuid.UUID) (*Profile, error)
	// CreatorFigures counts the member's sales, those since monthStart
	// included.
	CreatorFigures(ctx context.Context, merchantID, memberID uuid.UUID, monthStart time.Time) (Figures, error)
}

// TierFinder reads campaigns' commission tiers (postgres.CampaignTierStore).
type TierFinder interface {
	// FindTiers returns the campaign's tiers in increasing MinSales.
	FindTiers(ctx context.Context, merchantID, campaignID uuid.UUID) (Tiers, error)
}

// TierStore reads and replaces campaigns' commission tiers.
type TierStore interface {
	TierFinder
	// ReplaceTiers replaces all the campaign's tiers at once
	// (apperr.NotFound for an unknown campaign).
	ReplaceTiers(ctx context.Context, merchantID, campaignID uuid.UUID, tiers Tiers) error
}

// Put creates or updates the member's profile from in, the one way a
// profile is written (PUT /api/v1/members/{id}/creator and the
// dashboard's form): in is cleaned (Profile.Clean) and checked
// (Profile.Validate) before it is stored. An update keeps the token.
// apperr.Invalid naming the field at fault; apperr.NotFound for a member
// that does not exist.
func Put(ctx context.Context, s Store, in Profile) (*Profile, error) {
	in = in.Clean()
	if err := in.Validate(); err != nil {
		return nil, err
	}
	p, _, err := s.PutCreator(ctx, in)
	return p, err
}
