package testenv

import (
	"context"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/convida/convida/pkg/merchant"
)

// MustRetentionTenant creates a merchant with a campaign and one member,
// for backlog.Seed, and returns their ids.
func MustRetentionTenant(tb testing.TB, pool *pgxpool.Pool) (merchantID, memberID uuid.UUID) {
	tb.Helper()
	m := MustMerchant(tb, pool, nil, merchant.Merchant{})
	c := MustCampaign(tb, pool, m.ID, FixedCampaign(500, 7))
	memberID = uuid.New()
	if _, err := pool.Exec(context.Background(), `INSERT INTO members (merchant_id, id, email, name, coupon_code, campaign_id)
VALUES ($1, $2, 'ana@example.com', 'Ana', 'ANA10', $3)`, m.ID, memberID, c.ID); err != nil {
		tb.Fatalf("testenv: member: %v", err)
	}
	return m.ID, memberID
}
