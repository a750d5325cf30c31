package postgres_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/convida/convida/pkg/campaign"
	"github.com/convida/convida/pkg/member"
	"github.com/convida/convida/pkg/merchant"
	"github.com/convida/convida/pkg/postgres"
	"github.com/convida/convida/pkg/secretbox"
)

type seeded struct {
	pool     *pgxpool.Pool
	merchant *merchant.Merchant
	campaign *campaign.Campaign
	members  []*member.Member
}

// mustSeed creates a merchant, a fixed-reward or percentage campaign and n members.
func mustSeed(t *testing.T, pool *pgxpool.Pool, c campaign.Campaign, n int) seeded {
	t.Helper()
	ctx := context.Background()
	box, _ := secretbox.FromBase64(secretbox.NewKey())
	ms := postgres.NewMerchantStore(pool, box)
	m := &merchant.Merchant{Name: "Loja Exemplo", StoreURL: "https://loja.example.com", DashboardEmail: "owner@loja.example.com"}
	if err := ms.CreateMerchant(ctx, m, "pw"); err != nil {
		t.Fatalf("CreateMerchant: %v", err)
	}
	c.MerchantID = m.ID
	if err := postgres.NewCampaignStore(pool).CreateCampaign(ctx, &c); err != nil {
		t.Fatalf("CreateCampaign: %v", err)
	}
	s := seeded{pool: pool, merchant: m, campaign: &c}
	store := postgres.NewMemberStore(pool)
	for i := 0; i < n; i++ {
		mem := &member.Member{MerchantID: m.ID, Email: "member" + itoa(i) + "@example.com", Name: "Ana Souza", CampaignID: c.ID}
		if err := store.CreateMember(ctx, mem, m.CodePrefix); err != nil {
			t.Fatalf("CreateMember: %v", err)
		}
		s.members = append(s.members, mem)
	}
	return s
}

func itoa(i int) string {
	const digits = "0123456789"
	if i < 10 {
		return digits[i : i+1]
	}
	return itoa(i/10) + digits[i%10:i%10+1]
}

func campaignFixed() campaign.Campaign {
	return campaign.Campaign{Name: "Fixo", RewardType: campaign.RewardFixed, RewardValue: 500, WarrantyDays: 7, IsActive: true}
}
