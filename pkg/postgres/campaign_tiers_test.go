package postgres_test

import (
	"context"
	"slices"
	"testing"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/creator"
	"github.com/convida/convida/pkg/postgres"
)

func TestCampaignTiersReplaced(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a, b := mustTwoTenants(t, 0, 0)
	store := postgres.NewCampaignTierStore(a.pool)
	tiers := creator.Tiers{{Name: "Bronze", MinSales: 0, CommissionBP: 1000}, {Name: "Silver", MinSales: 3, CommissionBP: 1550},
		{Name: "Gold", MinSales: 10, CommissionBP: 2000}}
	if err := store.ReplaceTiers(ctx, a.merchant.ID, a.campaign.ID, tiers); err != nil {
		t.Fatal(err)
	}
	if got, err := store.FindTiers(ctx, a.merchant.ID, a.campaign.ID); err != nil || !slices.Equal(got, tiers) {
		t.Errorf("FindTiers = %v, %v; want %v", got, err, tiers)
	}
	// A new list replaces the whole old one, names reused at other places.
	next := creator.Tiers{{Name: "Gold", MinSales: 0, CommissionBP: 500}, {Name: "Bronze", MinSales: 5, CommissionBP: 700}}
	if err := store.ReplaceTiers(ctx, a.merchant.ID, a.campaign.ID, next); err != nil {
		t.Fatal(err)
	}
	if got, err := store.FindTiers(ctx, a.merchant.ID, a.campaign.ID); err != nil || !slices.Equal(got, next) {
		t.Errorf("FindTiers after replacing = %v, %v; want %v", got, err, next)
	}
	// Another merchant's campaign, and an unknown one: not found, untouched.
	for _, id := range []uuid.UUID{a.campaign.ID, uuid.New()} {
		if err := store.ReplaceTiers(ctx, b.merchant.ID, id, tiers); !apperr.Is(err, apperr.NotFound) {
			t.Errorf("ReplaceTiers of campaign %s by B = %v, want not_found", id, err)
		}
	}
	if got, err := store.FindTiers(ctx, b.merchant.ID, a.campaign.ID); err != nil || len(got) != 0 {
		t.Errorf("FindTiers of A's campaign by B = %v, %v; want none", got, err)
	}
	if err := store.ReplaceTiers(ctx, a.merchant.ID, a.campaign.ID, nil); err != nil {
		t.Fatal(err)
	}
	if got, err := store.FindTiers(ctx, a.merchant.ID, a.campaign.ID); err != nil || len(got) != 0 {
		t.Errorf("FindTiers after an empty list = %v, %v; want none", got, err)
	}
}
