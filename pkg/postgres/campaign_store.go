package postgres

import (
	"context"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/convida/convida/pkg/campaign"
)

// CampaignStore keeps campaigns.
type CampaignStore struct{ pool *pgxpool.Pool }

// NewCampaignStore returns a CampaignStore.
func NewCampaignStore(pool *pgxpool.Pool) *CampaignStore { return &CampaignStore{pool: pool} }

const campaignColumns = `c.merchant_id, c.id, c.name, c.reward_type, c.reward_value, c.warranty_days, c.min_redemption,
  c.is_active, c.is_default, c.auto_register, c.created_at, c.updated_at`

func scanCampaign(row pgx.Row) (*campaign.Campaign, error) {
	c := &campaign.Campaign{}
	err := row.Scan(&c.MerchantID, &c.ID, &c.Name, &c.RewardType, &c.RewardValue, &c.WarrantyDays,
		&c.MinRedemption, &c.IsActive, &c.IsDefault, &c.AutoRegister, &c.CreatedAt, &c.UpdatedAt)
	return c, err
}

// CreateCampaign stores c. The merchant's first campaign becomes its
// default (decision 20); c.IsDefault true moves the default to c.
func (s *CampaignStore) CreateCampaign(ctx context.Context, c *campaign.Campaign) error {
	if c.ID == uuid.Nil {
		c.ID = uuid.New()
	}
	return InTx(ctx, s.pool, func(tx pgx.Tx) error {
		// Serialise default-campaign changes per merchant.
		if _, err := tx.Exec(ctx, `SELECT id FROM merchants WHERE id = $1 FOR UPDATE`, c.MerchantID); err != nil {
			return err
		}
		var hasDefault bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM campaigns WHERE merchant_id = $1 AND is_default)`,
			c.MerchantID).Scan(&hasDefault); err != nil {
			return err
		}
		if !hasDefault {
			c.IsDefault = true
		} else if c.IsDefault {
			if _, err := tx.Exec(ctx, `UPDATE campaigns SET is_default = false, updated_at = now()
  WHERE merchant_id = $1 AND is_default`, c.MerchantID); err != nil {
				return err
			}
		}
		return tx.QueryRow(ctx, `INSERT INTO campaigns (merchant_id, id, name, reward_type, reward_value, warranty_days,
  min_redemption, is_active, is_default, auto_register) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
  RETURNING created_at, updated_at`, c.MerchantID, c.ID, c.Name, c.RewardType, c.RewardValue, c.WarrantyDays,
			c.MinRedemption, c.IsActive, c.IsDefault, c.AutoRegister).Scan(&c.CreatedAt, &c.UpdatedAt)
	})
}

// FindCampaignByID returns the merchant's campaign, or apperr.NotFound.
func (s *CampaignStore) FindCampaignByID(ctx context.Context, merchantID, id uuid.UUID) (*campaign.Campaign, error) {
	c, err := scanCampaign(s.pool.QueryRow(ctx, `SELECT `+campaignColumns+` FROM campaigns c
  WHERE c.merchant_id = $1 AND c.id = $2`, merchantID, id))
	if err != nil {
		return nil, notFound(err, "campaign not found")
	}
	return c, nil
}

// FindDefaultCampaign returns the merchant's default campaign, or
// apperr.NotFound when it has none yet.
func (s *CampaignStore) FindDefaultCampaign(ctx context.Context, merchantID uuid.UUID) (*campaign.Campaign, error) {
	c, err := scanCampaign(s.pool.QueryRow(ctx, `SELECT `+campaignColumns+` FROM campaigns c
  WHERE c.merchant_id = $1 AND c.is_default`, merchantID))
	if err != nil {
		return nil, notFound(err, "the merchant has no default campaign: create a campaign first")
	}
	return c, nil
}

// CampaignStats returns the figures of spec 2.8.
func (s *CampaignStore) CampaignStats(ctx context.Context, merchantID, id uuid.UUID) (campaign.Stats, error) {
	var st campaign.Stats
	err := s.pool.QueryRow(ctx, `SELECT
  (SELECT count(*) FROM members WHERE merchant_id = $1 AND campaign_id = $2),
  (SELECT count(*) FROM referrals r JOIN members m ON m.merchant_id = r.merchant_id AND m.id = r.member_id
     WHERE r.merchant_id = $1 AND m.campaign_id = $2),
  (SELECT COALESCE(sum(r.reward_amount), 0) FROM referrals r JOIN members m ON m.merchant_id = r.merchant_id AND m.id = r.member_id
     WHERE r.merchant_id = $1 AND m.campaign_id = $2 AND r.status = 'approved')`, merchantID, id).Scan(
		&st.TotalMembers, &st.TotalReferrals, &st.TotalRewardsPaid)
	return st, err
}
