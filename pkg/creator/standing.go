package creator

import (
	"context"
	"time"

	"github.com/google/uuid"
)

// Standing is where a creator stands: her sales, her campaign's tiers,
// the tier this month's sales reach and the one after it (decision 21).
// The public creator operations and the dashboard's creator page show it.
type Standing struct {
	Figures Figures
	Tiers   Tiers
	// Tier is the tier this calendar month's sales (UTC) reach; HasTier
	// is false when none does (no tiers, or fewer sales than the first
	// tier's MinSales), and a sale earns the campaign's own reward.
	Tier    Tier
	HasTier bool
	// Next is the tier after Tier and ToNext the sales still needed to
	// reach it; HasNext is false at the top (and with no tiers).
	Next    Tier
	ToNext  int
	HasNext bool
}

// Who names a creator: the merchant, her member and its campaign.
type Who struct {
	MerchantID, MemberID, CampaignID uuid.UUID
}

// StandingOf reads where the creator who stands at now: her figures
// (sales of the calendar month of now counted from MonthStart) and the
// tiers of her campaign.
func StandingOf(ctx context.Context, s Store, tiers TierFinder, who Who, now time.Time) (*Standing, error) {
	figures, err := s.CreatorFigures(ctx, who.MerchantID, who.MemberID, MonthStart(now))
	if err != nil {
		return nil, err
	}
	ts, err := tiers.FindTiers(ctx, who.MerchantID, who.CampaignID)
	if err != nil {
		return nil, err
	}
	st := &Standing{Figures: figures, Tiers: ts}
	st.Tier, st.HasTier = ts.For(figures.MonthSales)
	st.Next, st.ToNext, st.HasNext = ts.Next(figures.MonthSales)
	return st, nil
}
