package campaign

import (
	"context"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/bounds"
	"github.com/convida/convida/pkg/ids"
)

// The contracts of campaigns' storage (postgres.CampaignStore) that the
// API and the dashboard share; each edge adds what only it reads. An
// absent campaign, another merchant's included, is apperr.NotFound.

// Finder finds a merchant's campaigns.
type Finder interface {
	FindCampaignByID(ctx context.Context, merchantID, id uuid.UUID) (*Campaign, error)
	// FindDefaultCampaign returns the campaign a member joins when none
	// is named (apperr.NotFound when the merchant has none).
	FindDefaultCampaign(ctx context.Context, merchantID uuid.UUID) (*Campaign, error)
}

// Store creates and finds campaigns.
type Store interface {
	Finder
	// CreateCampaign stores c, moving the default to it when c.IsDefault
	// (the merchant's first campaign is its default).
	CreateCampaign(ctx context.Context, c *Campaign) error
}

// Catalog lists campaigns and changes them (through Edit).
type Catalog interface {
	Editor
	// ListCampaigns returns a page of campaigns newest first, each with its
	// stats, and the number of campaigns.
	ListCampaigns(ctx context.Context, merchantID uuid.UUID, f Filter) ([]Listed, int, error)
}

// Resolve returns the campaign ref names (camp_… or its UUID), or the
// merchant's default campaign when ref is "": the campaign a new member
// joins. A ref that names none of the merchant's campaigns, or a merchant
// without a default, is apperr.Invalid on field (the name of the
// campaign's id in the caller's interface: campaign_id, campaignId).
func Resolve(ctx context.Context, s Finder, merchantID uuid.UUID, field, ref string) (*Campaign, error) {
	if ref == "" {
		c, err := s.FindDefaultCampaign(ctx, merchantID)
		if apperr.Is(err, apperr.NotFound) {
			return nil, apperr.Invalidf(field, apperr.RuleUnknown, "the merchant has no default campaign; create a campaign first")
		}
		return c, err
	}
	if err := bounds.Check(field, ref, bounds.ID); err != nil {
		return nil, err
	}
	id, ok := ids.Parse(ids.Campaign, ref)
	if !ok {
		return nil, apperr.Invalidf(field, apperr.RuleUnknown, "no such campaign")
	}
	c, err := s.FindCampaignByID(ctx, merchantID, id)
	if apperr.Is(err, apperr.NotFound) {
		return nil, apperr.Invalidf(field, apperr.RuleUnknown, "no such campaign")
	}
	return c, err
}
