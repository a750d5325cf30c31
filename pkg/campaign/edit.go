package campaign

import (
	"context"

	"github.com/google/uuid"
)

// Editor reads and updates campaigns (postgres.CampaignStore).
type Editor interface {
	Finder
	// UpdateCampaign applies upd, moving the default when upd.IsDefault is
	// true, and returns the campaign as stored (apperr.Invalid when it
	// would leave no default).
	UpdateCampaign(ctx context.Context, merchantID, id uuid.UUID, upd Update) (*Campaign, error)
}

// Edit applies upd to the merchant's campaign id, the one way a campaign
// changes (PATCH /api/v1/campaigns/{id} and the dashboard's edit page):
// upd is checked alone (Update.Validate), then the campaign it would make
// (Campaign.Validate, against the campaign's own reward type), before it
// is stored. apperr.NotFound for another merchant's campaign.
func Edit(ctx context.Context, s Editor, merchantID, id uuid.UUID, upd Update) (*Campaign, error) {
	if err := upd.Validate(); err != nil {
		return nil, err
	}
	cur, err := s.FindCampaignByID(ctx, merchantID, id)
	if err != nil {
		return nil, err
	}
	next := upd.Apply(*cur)
	if err := next.Validate(); err != nil {
		return nil, err
	}
	return s.UpdateCampaign(ctx, merchantID, id, upd)
}
