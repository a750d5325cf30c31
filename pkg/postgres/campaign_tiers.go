package postgres

import (
	"context"
	"slices"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/convida/convida/pkg/audit"
	"github.com/convida/convida/pkg/creator"
)

// CampaignTierStore keeps campaigns' commission tiers (decision 21).
type CampaignTierStore struct{ pool *pgxpool.Pool }

var _ creator.TierStore = (*CampaignTierStore)(nil)

// NewCampaignTierStore returns a CampaignTierStore.
func NewCampaignTierStore(pool *pgxpool.Pool) *CampaignTierStore {
	return &CampaignTierStore{pool: pool}
}

// ReplaceTiers replaces every tier of the campaign with tiers (validated by
// the caller, in increasing MinSales) in one transaction, so a reader sees
// the old list or the new one. An unknown campaign is apperr.NotFound. A
// new list writes campaign.updated naming the field "tiers".
func (s *CampaignTierStore) ReplaceTiers(ctx context.Context, merchantID, campaignID uuid.UUID, tiers creator.Tiers) error {
	return InTx(ctx, s.pool, func(tx pgx.Tx) error {
		// The merchant's lock shared before the campaign's, as the audit
		// event will share it (writeAudit).
		if _, err := tx.Exec(ctx, `SELECT id FROM merchants WHERE id = $1 FOR KEY SHARE`, merchantID); err != nil {
			return err
		}
		// Locking the campaign row serialises two PUTs of one campaign and
		// tells an unknown campaign apart from one without tiers.
		var one int
		err := tx.QueryRow(ctx, `SELECT 1 FROM campaigns WHERE merchant_id = $1 AND id = $2 FOR UPDATE`,
			merchantID, campaignID).Scan(&one)
		if err != nil {
			return notFound(err, "campaign not found")
		}
		rows, err := tx.Query(ctx, `DELETE FROM campaign_tiers WHERE merchant_id = $1 AND campaign_id = $2
RETURNING name, min_sales, commission_bp`, merchantID, campaignID)
		if err != nil {
			return err
		}
		old, err := pgx.CollectRows(rows, pgx.RowToStructByPos[creator.Tier])
		if err != nil {
			return err
		}
		slices.SortFunc(old, func(a, b creator.Tier) int { return a.MinSales - b.MinSales })
		if !slices.Equal(old, tiers) {
			if err := writeAudit(ctx, tx, merchantID, audit.CampaignUpdated, campaignTarget(campaignID),
				audit.Fields([]string{"tiers"})); err != nil {
				return err
			}
		}
		names, minSales, bps := make([]string, len(tiers)), make([]int32, len(tiers)), make([]int32, len(tiers))
		for i, t := range tiers {
			names[i], minSales[i], bps[i] = t.Name, int32(t.MinSales), int32(t.CommissionBP)
		}
		_, err = tx.Exec(ctx, `INSERT INTO campaign_tiers (merchant_id, campaign_id, position, name, min_sales, commission_bp)
SELECT $1, $2, t.ord::int, t.name, t.min_sales, t.bp
FROM unnest($3::text[], $4::int[], $5::int[]) WITH ORDINALITY AS t(name, min_sales, bp, ord)`,
			merchantID, campaignID, names, minSales, bps)
		return err
	})
}

// FindTiers returns the campaign's tiers in increasing MinSales; none is an
// empty list, also for an unknown campaign (the caller checks it exists).
func (s *CampaignTierStore) FindTiers(ctx context.Context, merchantID, campaignID uuid.UUID) (creator.Tiers, error) {
	rows, err := s.pool.Query(ctx, `SELECT name, min_sales, commission_bp FROM campaign_tiers
  WHERE merchant_id = $1 AND campaign_id = $2 ORDER BY min_sales, position`, merchantID, campaignID)
	if err != nil {
		return nil, err
	}
	tiers, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (creator.Tier, error) {
		var t creator.Tier
		err := row.Scan(&t.Name, &t.MinSales, &t.CommissionBP)
		return t, err
	})
	if err != nil {
		return nil, err
	}
	return creator.Tiers(tiers), nil
}
