package member

import (
	"context"
	"strings"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/campaign"
)

// Input is a member to create as an edge reads it: POST
// /api/v1/members, the member-facing /member/me, the dashboard's form.
type Input struct {
	MerchantID uuid.UUID
	// CodePrefix is the merchant's prefix of coupon codes.
	CodePrefix                               string
	Email, Name, ExternalID, Document, Phone string
	Metadata                                 map[string]any
	// Campaign names the member's campaign (camp_… or its UUID); ""
	// joins the merchant's default campaign. CampaignField is its name
	// in the caller's interface ("campaign_id" when empty), which the
	// errors about it name.
	Campaign, CampaignField string
}

// Create creates the member in, the one way a member is created: its
// fields trimmed and checked (Member.Validate), then its campaign
// resolved (campaign.Resolve), then stored (Store.CreateMember). It
// returns the member as stored and its campaign. Errors: apperr.Invalid
// naming the field at fault (in.CampaignField for the campaign),
// apperr.EmailExists for a taken email.
func Create(ctx context.Context, s Store, campaigns campaign.Finder, in Input) (*Member, *campaign.Campaign, error) {
	m := &Member{MerchantID: in.MerchantID, Email: strings.TrimSpace(in.Email), Name: strings.TrimSpace(in.Name),
		ExternalID: strings.TrimSpace(in.ExternalID), Document: strings.TrimSpace(in.Document),
		Phone: strings.TrimSpace(in.Phone), Metadata: in.Metadata}
	if err := m.Validate(); err != nil {
		return nil, nil, err
	}
	field := in.CampaignField
	if field == "" {
		field = "campaign_id"
	}
	c, err := campaign.Resolve(ctx, campaigns, in.MerchantID, field, strings.TrimSpace(in.Campaign))
	if err != nil {
		return nil, nil, err
	}
	m.CampaignID = c.ID
	if err := s.CreateMember(ctx, m, in.CodePrefix); err != nil {
		return nil, nil, err
	}
	return m, c, nil
}
