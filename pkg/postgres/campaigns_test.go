package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/campaign"
	"github.com/convida/convida/pkg/postgres"
)

// TestCampaignListTieBreak: campaigns created at the same instant are
// listed by id, descending, so pages never overlap or skip.
func TestCampaignListTieBreak(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := mustTenants(t, 0)[0]
	cs := postgres.NewCampaignStore(s.pool)
	for i := 0; i < 4; i++ {
		if err := cs.CreateCampaign(ctx, &campaign.Campaign{MerchantID: s.merchant.ID, Name: "c", RewardType: campaign.RewardFixed, RewardValue: 1}); err != nil {
			t.Fatal(err)
		}
	}
	same := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	if _, err := s.pool.Exec(ctx, `UPDATE campaigns SET created_at = $2 WHERE merchant_id = $1`, s.merchant.ID, same); err != nil {
		t.Fatal(err)
	}

	all, total, err := cs.ListCampaigns(ctx, s.merchant.ID, campaign.Filter{Limit: 100})
	if err != nil || total != 5 || len(all) != 5 {
		t.Fatalf("ListCampaigns = %d items, total %d, %v; want 5", len(all), total, err)
	}
	var got, campIDs []uuid.UUID
	for _, c := range all {
		got = append(got, c.ID)
		campIDs = append(campIDs, c.ID)
	}
	wantIDsDesc(t, "campaigns", got, campIDs)
}

// TestCampaignTenantScope: one merchant cannot update another's campaign.
func TestCampaignTenantScope(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a, b := mustTwoTenants(t, 0, 0)
	yes := true
	if _, err := postgres.NewCampaignStore(a.pool).UpdateCampaign(ctx, b.merchant.ID, a.campaign.ID, campaign.Update{IsDefault: &yes}); !apperr.Is(err, apperr.NotFound) {
		t.Errorf("UpdateCampaign of another merchant's campaign = %v, want not_found", err)
	}
}
