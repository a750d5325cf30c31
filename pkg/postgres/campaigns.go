package postgres

import (
	"context"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/audit"
	"github.com/convida/convida/pkg/campaign"
	"github.com/convida/convida/pkg/ids"
)

// CampaignStore keeps campaigns.
type CampaignStore struct{ pool *pgxpool.Pool }

// The contracts the API and the dashboard share.
var (
	_ campaign.Store   = (*CampaignStore)(nil)
	_ campaign.Catalog = (*CampaignStore)(nil)
)

// NewCampaignStore returns a CampaignStore.
func NewCampaignStore(pool *pgxpool.Pool) *CampaignStore { return &CampaignStore{pool: pool} }

const campaignColumns = `c.merchant_id, c.id, c.name, c.reward_type, c.reward_value, c.warranty_days, c.min_redemption,
  c.is_active, c.is_default, c.auto_register, c.max_referrals_per_hour, c.max_creator_referrals_per_hour, c.max_reward_per_month,
  c.block_disposable_emails, COALESCE(c.referee_discount_type, ''), c.referee_discount_value, c.created_at, c.updated_at`

func scanCampaign(row pgx.Row) (*campaign.Campaign, error) {
	c := &campaign.Campaign{}
	err := row.Scan(campaignFields(c)...)
	return c, err
}

// campaignFields are the scan targets of campaignColumns.
func campaignFields(c *campaign.Campaign) []any {
	return []any{&c.MerchantID, &c.ID, &c.Name, &c.RewardType, &c.RewardValue, &c.WarrantyDays,
		&c.MinRedemption, &c.IsActive, &c.IsDefault, &c.AutoRegister, &c.MaxReferralsPerHour, &c.MaxCreatorReferralsPerHour,
		&c.MaxRewardPerMonth, &c.BlockDisposableEmails, &c.RefereeDiscountType, &c.RefereeDiscountValue, &c.CreatedAt, &c.UpdatedAt}
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
  min_redemption, is_active, is_default, auto_register, max_referrals_per_hour, max_reward_per_month,
  block_disposable_emails, referee_discount_type, referee_discount_value, max_creator_referrals_per_hour)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, NULLIF($14, ''), $15, $16)
  RETURNING created_at, updated_at`, c.MerchantID, c.ID, c.Name, c.RewardType, c.RewardValue, c.WarrantyDays,
			c.MinRedemption, c.IsActive, c.IsDefault, c.AutoRegister, c.MaxReferralsPerHour, c.MaxRewardPerMonth,
			c.BlockDisposableEmails, c.RefereeDiscountType, c.RefereeDiscountValue, c.MaxCreatorReferralsPerHour).Scan(&c.CreatedAt, &c.UpdatedAt)
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

// ListCampaigns returns a page of the merchant's campaigns, newest first
// with ties broken by id, each with its stats (as CampaignStats counts
// them), and the number of campaigns. One query reads the page: the stats
// are aggregated once over the page's campaigns, not per campaign.
func (s *CampaignStore) ListCampaigns(ctx context.Context, merchantID uuid.UUID, f campaign.Filter) ([]campaign.Listed, int, error) {
	rows, err := s.pool.Query(ctx, `WITH page AS (
  SELECT c.merchant_id, c.id, count(*) OVER () AS total FROM campaigns c WHERE c.merchant_id = $1
  ORDER BY c.created_at DESC, c.id DESC OFFSET $2 LIMIT $3
), page_members AS (
  SELECT m.merchant_id, m.id, m.campaign_id FROM members m
  JOIN page ON m.merchant_id = page.merchant_id AND m.campaign_id = page.id
), member_counts AS (
  SELECT campaign_id, count(*) AS n FROM page_members GROUP BY campaign_id
), referral_sums AS (
  SELECT pm.campaign_id, count(*) AS n,
    COALESCE(sum(r.reward_amount) FILTER (WHERE r.status = 'approved'), 0) AS paid
  FROM page_members pm JOIN referrals r ON r.merchant_id = pm.merchant_id AND r.member_id = pm.id
  GROUP BY pm.campaign_id
)
SELECT `+campaignColumns+`, COALESCE(mc.n, 0), COALESCE(rs.n, 0), COALESCE(rs.paid, 0), page.total
FROM page
JOIN campaigns c ON c.merchant_id = page.merchant_id AND c.id = page.id
LEFT JOIN member_counts mc ON mc.campaign_id = c.id
LEFT JOIN referral_sums rs ON rs.campaign_id = c.id
ORDER BY c.created_at DESC, c.id DESC`, merchantID, f.Offset, f.Limit)
	if err != nil {
		return nil, 0, err
	}
	total := 0
	list, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (campaign.Listed, error) {
		var l campaign.Listed
		c := &l.Campaign
		err := row.Scan(append(campaignFields(c),
			&l.Stats.TotalMembers, &l.Stats.TotalReferrals, &l.Stats.TotalRewardsPaid, &total)...)
		return l, err
	})
	if err != nil {
		return nil, 0, err
	}
	if len(list) == 0 && f.Offset > 0 {
		err = s.pool.QueryRow(ctx, `SELECT count(*) FROM campaigns WHERE merchant_id = $1`, merchantID).Scan(&total)
	}
	return list, total, err
}

// UpdateCampaign applies upd to the merchant's campaign and returns it as
// stored; the caller validates the result (upd.Apply) first. A nil field is
// left as it is; updated_at always moves forward, by at least a
// millisecond. IsDefault true moves the merchant's default to the campaign
// in the same transaction, so exactly one default exists at every commit
// (decision 20); IsDefault false on the current default is apperr.Invalid.
// An unknown campaign is apperr.NotFound. Repeating an update is safe. A
// change of the referee discount asks, in the same transaction, for every
// member's coupon at the platforms to be updated (coupon_provisions). An
// update that changes a field writes campaign.updated naming the fields
// it changed.
func (s *CampaignStore) UpdateCampaign(ctx context.Context, merchantID, id uuid.UUID, upd campaign.Update) (*campaign.Campaign, error) {
	var out *campaign.Campaign
	err := InTx(ctx, s.pool, func(tx pgx.Tx) error {
		// Serialise default-campaign changes per merchant, as
		// CreateCampaign does; any other update shares the merchant's lock
		// before locking the campaign, as its audit event will (writeAudit).
		lock := `SELECT id FROM merchants WHERE id = $1 FOR KEY SHARE`
		if upd.IsDefault != nil {
			lock = `SELECT id FROM merchants WHERE id = $1 FOR UPDATE`
		}
		if _, err := tx.Exec(ctx, lock, merchantID); err != nil {
			return err
		}
		cur, err := scanCampaign(tx.QueryRow(ctx, `SELECT `+campaignColumns+` FROM campaigns c
  WHERE c.merchant_id = $1 AND c.id = $2 FOR UPDATE`, merchantID, id))
		if err != nil {
			return notFound(err, "campaign not found")
		}
		switch {
		case upd.IsDefault == nil || *upd.IsDefault == cur.IsDefault:
		case !*upd.IsDefault:
			return apperr.Errorf(apperr.Invalid,
				"is_default: a merchant always has one default campaign; set is_default on another campaign to move it")
		default:
			if _, err := tx.Exec(ctx, `UPDATE campaigns SET is_default = false,
  updated_at = greatest(now(), updated_at + interval '1 millisecond')
  WHERE merchant_id = $1 AND is_default`, merchantID); err != nil {
				return err
			}
		}
		out, err = scanCampaign(tx.QueryRow(ctx, `UPDATE campaigns c SET
  name = COALESCE($3, c.name),
  reward_value = COALESCE($4, c.reward_value),
  warranty_days = COALESCE($5, c.warranty_days),
  min_redemption = COALESCE($6, c.min_redemption),
  is_active = COALESCE($7, c.is_active),
  auto_register = COALESCE($8, c.auto_register),
  is_default = COALESCE($9, c.is_default),
  max_referrals_per_hour = CASE WHEN $10 THEN $11 ELSE c.max_referrals_per_hour END,
  max_reward_per_month = CASE WHEN $12 THEN $13 ELSE c.max_reward_per_month END,
  block_disposable_emails = COALESCE($14, c.block_disposable_emails),
  referee_discount_type = CASE WHEN $15::text IS NULL THEN c.referee_discount_type ELSE NULLIF($15, '') END,
  referee_discount_value = CASE WHEN $15 = '' THEN 0 ELSE COALESCE($16, c.referee_discount_value) END,
  max_creator_referrals_per_hour = CASE WHEN $17 THEN $18 ELSE c.max_creator_referrals_per_hour END,
  updated_at = greatest(now(), c.updated_at + interval '1 millisecond')
WHERE c.merchant_id = $1 AND c.id = $2
RETURNING `+campaignColumns, merchantID, id, upd.Name, upd.RewardValue, upd.WarrantyDays, upd.MinRedemption,
			upd.IsActive, upd.AutoRegister, upd.IsDefault,
			upd.MaxReferralsPerHour != nil, changeTo(upd.MaxReferralsPerHour),
			upd.MaxRewardPerMonth != nil, changeTo(upd.MaxRewardPerMonth),
			upd.BlockDisposableEmails, upd.RefereeDiscountType, upd.RefereeDiscountValue,
			upd.MaxCreatorReferralsPerHour != nil, changeTo(upd.MaxCreatorReferralsPerHour)))
		if err != nil {
			return err
		}
		if fields := campaignChanges(cur, out); len(fields) > 0 {
			if err := writeAudit(ctx, tx, merchantID, audit.CampaignUpdated, campaignTarget(id), audit.Fields(fields)); err != nil {
				return err
			}
		}
		if !upd.RefereeDiscountChanged(*cur) {
			return nil
		}
		// Every member's coupon at the platforms now carries another
		// discount: the dispatcher updates them.
		return wantCampaignCoupons(ctx, tx, merchantID, id)
	})
	if pgErrCode(err) == "23514" { // a CHECK the caller's validation should have caught
		return nil, apperr.Wrap(apperr.Invalid, err, "the campaign's reward rules are out of range")
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

// campaignTarget is the audit target of a campaign, by its API id.
func campaignTarget(id uuid.UUID) audit.Target {
	return audit.Target{Type: audit.TargetCampaign, ID: ids.Format(ids.Campaign, id)}
}

// campaignChanges names the fields of a campaign, as the API names them,
// that differ between before and after.
func campaignChanges(before, after *campaign.Campaign) []string {
	fields := []struct {
		name    string
		changed bool
	}{
		{"name", before.Name != after.Name},
		{"reward_value", before.RewardValue != after.RewardValue},
		{"warranty_days", before.WarrantyDays != after.WarrantyDays},
		{"min_redemption", before.MinRedemption != after.MinRedemption},
		{"is_active", before.IsActive != after.IsActive},
		{"auto_register", before.AutoRegister != after.AutoRegister},
		{"is_default", before.IsDefault != after.IsDefault},
		{"max_referrals_per_hour", !samePtr(before.MaxReferralsPerHour, after.MaxReferralsPerHour)},
		{"max_creator_referrals_per_hour", !samePtr(before.MaxCreatorReferralsPerHour, after.MaxCreatorReferralsPerHour)},
		{"max_reward_per_month", !samePtr(before.MaxRewardPerMonth, after.MaxRewardPerMonth)},
		{"block_disposable_emails", before.BlockDisposableEmails != after.BlockDisposableEmails},
		{"referee_discount_type", before.RefereeDiscountType != after.RefereeDiscountType},
		{"referee_discount_value", before.RefereeDiscountValue != after.RefereeDiscountValue},
	}
	changed := []string{}
	for _, f := range fields {
		if f.changed {
			changed = append(changed, f.name)
		}
	}
	return changed
}

// samePtr reports whether a and b are both nil or point to equal values.
func samePtr[T comparable](a, b *T) bool {
	return a == nil && b == nil || a != nil && b != nil && *a == *b
}

// changeTo is the value a nullable column is set to by ch (nil: NULL).
func changeTo[T any](ch *campaign.Change[T]) *T {
	if ch == nil {
		return nil
	}
	return ch.To
}

// MaxCampaignChoices bounds CampaignChoices.
const MaxCampaignChoices = 500

// CampaignChoices returns the merchant's campaigns by name, without
// stats (at most MaxCampaignChoices): what a form's campaign select and a
// list's campaign filter offer.
func (s *CampaignStore) CampaignChoices(ctx context.Context, merchantID uuid.UUID) ([]campaign.Campaign, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+campaignColumns+` FROM campaigns c WHERE c.merchant_id = $1
  ORDER BY lower(c.name), c.id LIMIT $2`, merchantID, MaxCampaignChoices)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (campaign.Campaign, error) {
		var c campaign.Campaign
		err := row.Scan(campaignFields(&c)...)
		return c, err
	})
}
