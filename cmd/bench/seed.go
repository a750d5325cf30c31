package main

import (
	"context"
	"crypto/rand"
	"fmt"
	"sync/atomic"

	"github.com/google/uuid"
	"golang.org/x/sync/errgroup"

	"github.com/convida/convida/pkg/campaign"
	"github.com/convida/convida/pkg/member"
	"github.com/convida/convida/pkg/merchant"
	"github.com/convida/convida/pkg/postgres"
	"github.com/convida/convida/pkg/provider"
)

// rewardCents is the campaign's fixed reward, so that every expected
// balance is exact: 500 × the member's orders.
const rewardCents = 500

// seedWorkers is how many goroutines create members.
const seedWorkers = 8

// tenant is what the load needs of the seeded merchant.
type tenant struct {
	MerchantID uuid.UUID
	APIKey     string // the merchant's first API key
	GuruToken  string
	Coupons    []string // member i's referral code
	MemberIDs  []uuid.UUID
	Emails     []string
	Warmup     string // the warm-up member's code
	WarmupID   uuid.UUID
}

// seed creates one merchant with Guru configured, a fixed-reward campaign,
// members members and one more, the warm-up member, whose single order
// makes sure the pipeline runs before the clock starts.
func seed(ctx context.Context, s *stack, members int) (*tenant, error) {
	ms := postgres.NewMerchantStore(s.pool, s.box)
	created, err := merchant.Register(ctx, ms, &merchant.Merchant{Name: "Loja Bench", StoreURL: "https://loja-bench.example.com", CodePrefix: "BENCH"})
	if err != nil {
		return nil, fmt.Errorf("merchant: %w", err)
	}
	t := &tenant{MerchantID: uuid.MustParse(created.MerchantID), APIKey: created.APIKey, GuruToken: guruToken()}
	if _, err := ms.PutIntegration(ctx, t.MerchantID, merchant.Integration{
		Provider: provider.Guru, AccountToken: t.GuruToken, UserToken: "bench-user-token",
	}); err != nil {
		return nil, fmt.Errorf("%s integration: %w", provider.Guru, err)
	}
	c := &campaign.Campaign{MerchantID: t.MerchantID, Name: "Bench", RewardType: campaign.RewardFixed,
		RewardValue: rewardCents, WarrantyDays: campaign.DefaultWarrantyDays, IsActive: true}
	if err := postgres.NewCampaignStore(s.pool).CreateCampaign(ctx, c); err != nil {
		return nil, fmt.Errorf("campaign: %w", err)
	}
	all, err := createMembers(ctx, postgres.NewMemberStore(s.pool), c, members+1)
	if err != nil {
		return nil, err
	}
	// A deployment's tables have statistics (autovacuum analyzes them as
	// they grow); a just-seeded one has none until autovacuum wakes, and
	// the planner would scan the members table for every coupon lookup.
	if _, err := s.pool.Exec(ctx, "ANALYZE"); err != nil {
		return nil, fmt.Errorf("analyze: %w", err)
	}
	t.Warmup, t.WarmupID = all[members].CouponCode, all[members].ID
	for _, m := range all[:members] {
		t.Coupons = append(t.Coupons, m.CouponCode)
		t.MemberIDs = append(t.MemberIDs, m.ID)
		t.Emails = append(t.Emails, m.Email)
	}
	return t, nil
}

// firstNames vary the name part of the referral codes, which makes code
// collisions (and CreateMember's retries) rare.
var firstNames = []string{"Ana", "Bruno", "Carla", "Diego", "Elisa", "Fabio", "Gabriela", "Heitor", "Isabela",
	"Joao", "Karina", "Lucas", "Mariana", "Nicolas", "Olivia", "Pedro", "Rafaela", "Samuel", "Tatiana", "Vitor"}

// createMembers creates n members with seedWorkers concurrent calls of
// MemberStore.CreateMember, the path the API takes.
func createMembers(ctx context.Context, store *postgres.MemberStore, c *campaign.Campaign, n int) ([]*member.Member, error) {
	all := make([]*member.Member, n)
	var next atomic.Int64
	g, ctx := errgroup.WithContext(ctx)
	for range seedWorkers {
		g.Go(func() error {
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				m := &member.Member{MerchantID: c.MerchantID, CampaignID: c.ID,
					Email: fmt.Sprintf("membro-%06d@bench.example.com", i),
					Name:  fmt.Sprintf("%s Bench %d", firstNames[i%len(firstNames)], i)}
				if err := store.CreateMember(ctx, m, "BENCH"); err != nil {
					return fmt.Errorf("member %d: %w", i, err)
				}
				all[i] = m
			}
			return nil
		})
	}
	return all, g.Wait()
}

// guruToken returns a random 40-character account token, the length of
// Guru's.
func guruToken() string {
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	b := make([]byte, 40)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b)
}
