package testenv_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/campaign"
	"github.com/convida/convida/pkg/merchant"
	"github.com/convida/convida/pkg/postgres"
	"github.com/convida/convida/pkg/provider"
	"github.com/convida/convida/pkg/testenv"
)

func TestMustTenant(t *testing.T) {
	t.Parallel()
	pool, box := testenv.MustPool(t), testenv.MustBox(t)
	tn := testenv.MustTenant(t, pool, box, merchant.Merchant{RateLimitPerSecond: 5, RateLimitBurst: 7},
		merchant.Integration{Provider: provider.Guru, AccountToken: "account-token", UserToken: "user-token"})
	store := postgres.NewMerchantStore(pool, box)
	ctx := context.Background()
	k, err := store.Authenticate(ctx, tn.Key)
	if err != nil || k.MerchantID != tn.Merchant.ID || k.Prefix != tn.Key[:8] {
		t.Fatalf("Authenticate(key) = %+v, %v; want merchant %v, prefix %s", k, err, tn.Merchant.ID, tn.Key[:8])
	}
	id := k.MerchantID
	m, err := store.FindMerchantByID(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if m.Name != testenv.MerchantName || m.StoreURL != testenv.StoreURL || m.CodePrefix != "LOJ" ||
		m.RateLimitPerSecond != 5 || m.RateLimitBurst != 7 {
		t.Errorf("merchant = %+v, want the defaults with a rate limit of 5/s, burst 7", m)
	}
	in, err := store.FindIntegration(ctx, id, provider.Guru)
	if err != nil || in.AccountToken != "account-token" {
		t.Errorf("guru integration = %+v, %v; want the account token saved", in, err)
	}
	c := testenv.MustCampaign(t, pool, id, campaign.Campaign{Name: "Padrão", RewardType: campaign.RewardFixed, RewardValue: 500, IsActive: true})
	if c.MerchantID != id || c.ID == uuid.Nil {
		t.Errorf("campaign = %+v, want one of the tenant's merchant", c)
	}
}

func TestEventually(t *testing.T) {
	t.Parallel()
	n := 0
	testenv.Eventually(t, time.Second, "the third poll", func() bool { n++; return n == 3 })
	if n != 3 {
		t.Errorf("cond ran %d times, want 3", n)
	}
}
