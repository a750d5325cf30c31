package postgres_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/convida/convida/pkg/campaign"
	"github.com/convida/convida/pkg/member"
	"github.com/convida/convida/pkg/merchant"
	"github.com/convida/convida/pkg/postgres"
	"github.com/convida/convida/pkg/testenv"
)

type seeded struct {
	pool     *pgxpool.Pool
	merchant *merchant.Merchant
	campaign *campaign.Campaign
	members  []*member.Member
}

// mustTenants creates, on one fresh database, a merchant per count, each
// with testenv's fixed campaign and that many members.
func mustTenants(t *testing.T, counts ...int) []seeded {
	t.Helper()
	pool := testenv.MustPool(t)
	out := make([]seeded, len(counts))
	for i, n := range counts {
		out[i] = mustSeed(t, pool, testenv.FixedCampaign(500, 7), n)
	}
	return out
}

// mustTwoTenants returns two merchants on one database, with na and nb
// members: the setting of every tenant-isolation test.
func mustTwoTenants(t *testing.T, na, nb int) (seeded, seeded) {
	t.Helper()
	ts := mustTenants(t, na, nb)
	return ts[0], ts[1]
}

// mustSeed creates a merchant (testenv's default), the campaign c and n
// members of it.
func mustSeed(t testing.TB, pool *pgxpool.Pool, c campaign.Campaign, n int) seeded {
	t.Helper()
	m := testenv.MustMerchant(t, pool, nil, merchant.Merchant{})
	s := seeded{pool: pool, merchant: m, campaign: testenv.MustCampaign(t, pool, m.ID, c)}
	store := postgres.NewMemberStore(pool)
	for i := 0; i < n; i++ {
		mem := &member.Member{MerchantID: m.ID, Email: "member" + strconv.Itoa(i) + "@example.com", Name: "Ana Souza", CampaignID: s.campaign.ID}
		if err := store.CreateMember(context.Background(), mem, m.CodePrefix); err != nil {
			t.Fatalf("CreateMember: %v", err)
		}
		s.members = append(s.members, mem)
	}
	return s
}
