package postgres_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/campaign"
	"github.com/convida/convida/pkg/postgres"
	"github.com/convida/convida/pkg/redemption"
	"github.com/convida/convida/pkg/testenv"
)

// TestCouponProvisionClaims: a member's creation asks for its coupons at
// both platforms; concurrent claimers share the rows without overlap; a
// leased row is not claimed again until its lease ends; an outcome is
// written only under the claim's lease, and one of an older version
// leaves the row pending for the newer, its coupon id kept.
func TestCouponProvisionClaims(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := testenv.MustPool(t)
	c := testenv.FixedCampaign(500, 7)
	c.RefereeDiscountType, c.RefereeDiscountValue = campaign.RewardPercentage, 10
	s := mustSeed(t, pool, c, 3)
	store := postgres.NewCouponStore(pool)

	states, err := store.CouponStates(ctx, s.merchant.ID, []uuid.UUID{s.members[0].ID})
	if err != nil || states[s.members[0].ID]["guru"].Status != "pending" || states[s.members[0].ID]["yampi"].Status != "pending" {
		t.Fatalf("states of a new member = %v, %v; want both pending", states, err)
	}

	// Two claimers at once: 6 rows, each claimed once.
	var mu sync.Mutex
	seen := map[string]int{}
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			jobs, err := store.ClaimCoupons(ctx, 4, time.Minute)
			if err != nil {
				t.Error(err)
			}
			mu.Lock()
			defer mu.Unlock()
			for _, j := range jobs {
				seen[j.MemberID.String()+j.Platform]++
				if j.Version != 1 || j.Discount != (redemption.Discount{Type: "percentage", Value: 10}) || j.Code == "" {
					t.Errorf("claimed %+v", j)
				}
			}
		}()
	}
	wg.Wait()
	if len(seen) != 6 {
		t.Errorf("claimed %d distinct rows, want 6: %v", len(seen), seen)
	}
	for k, n := range seen {
		if n != 1 {
			t.Errorf("row %s claimed %d times", k, n)
		}
	}
	if again, err := store.ClaimCoupons(ctx, 10, time.Minute); err != nil || len(again) != 0 {
		t.Errorf("claimed %d leased rows, %v; want none", len(again), err)
	}

	// A fresh member: claimed with a lease that runs out at once, then
	// claimed again (its claimer died).
	more := mustSeed(t, pool, c, 1)
	first, err := store.ClaimCoupons(ctx, 10, time.Millisecond)
	if err != nil || len(first) != 2 {
		t.Fatalf("claim = %d, %v; want the new member's 2 rows", len(first), err)
	}
	time.Sleep(20 * time.Millisecond)
	second, err := store.ClaimCoupons(ctx, 10, time.Minute)
	if err != nil || len(second) != 2 || second[0].LeaseToken == first[0].LeaseToken {
		t.Fatalf("claim after the lease ran out = %d, %v; want both rows under a new lease", len(second), err)
	}
	// The dead claimer's outcome comes too late: ignored.
	guru := first[0]
	if guru.Platform != "guru" {
		guru = first[1]
	}
	if err := store.FinishCoupon(ctx, guru, redemption.CouponOutcome{Status: "failed", Error: "late"}); err != nil {
		t.Fatal(err)
	}
	if st, _ := store.CouponStates(ctx, more.merchant.ID, []uuid.UUID{guru.MemberID}); st[guru.MemberID]["guru"].Status != "pending" {
		t.Errorf("a lost lease's outcome was written: %v", st)
	}

	// Asked for again while claimed: the outcome of version 1 keeps the
	// coupon id and leaves the row due for version 2.
	for _, j := range second {
		if j.Platform == "guru" {
			guru = j
		}
	}
	if err := store.RequestCoupons(ctx, more.merchant.ID, guru.MemberID); err != nil {
		t.Fatal(err)
	}
	if err := store.FinishCoupon(ctx, guru, redemption.CouponOutcome{Status: "provisioned", CouponID: "c-1", Attempts: 1,
		Carries: &redemption.Discount{Type: "percentage", Value: 10}}); err != nil {
		t.Fatal(err)
	}
	st, _ := store.CouponStates(ctx, more.merchant.ID, []uuid.UUID{guru.MemberID})
	if got := st[guru.MemberID]["guru"]; got.Status != "pending" || got.CouponID != "c-1" {
		t.Errorf("after an outcome of an older version: %+v, want pending with coupon c-1", got)
	}
	next, err := store.ClaimCoupons(ctx, 10, time.Minute)
	if err != nil || len(next) != 1 || next[0].Version != 2 || next[0].CouponID != "c-1" || next[0].Carried.Value != 10 {
		t.Fatalf("claim of the newer version = %+v, %v", next, err)
	}
	if err := store.FinishCoupon(ctx, next[0], redemption.CouponOutcome{Status: "provisioned", CouponID: "c-1", Attempts: 1}); err != nil {
		t.Fatal(err)
	}
	st, _ = store.CouponStates(ctx, more.merchant.ID, []uuid.UUID{guru.MemberID})
	if got := st[guru.MemberID]["guru"]; got.Status != "provisioned" || got.CouponID != "c-1" || got.Error != "" {
		t.Errorf("provisioned = %+v", got)
	}
	if err := store.RequestCoupons(ctx, s.merchant.ID, guru.MemberID); !apperr.Is(err, apperr.NotFound) {
		t.Errorf("another merchant's member: %v, want not found", err)
	}
}

// TestCouponIDsKept: every id a platform gave a member's coupon finds the
// member, the current one and an earlier one (the coupon deleted at the
// platform and created again), within the merchant and the platform only.
func TestCouponIDsKept(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := testenv.MustPool(t)
	c := testenv.FixedCampaign(500, 7)
	c.RefereeDiscountType, c.RefereeDiscountValue = campaign.RewardPercentage, 10
	s := mustSeed(t, pool, c, 2)
	other := mustSeed(t, pool, c, 1)
	store := postgres.NewCouponStore(pool)
	ana, bia := s.members[0], s.members[1]

	// finish claims the due rows and writes the outcome of member's at
	// platform with couponID; the other rows are left pending.
	finish := func(memberID uuid.UUID, platform, couponID string) {
		t.Helper()
		jobs, err := store.ClaimCoupons(ctx, 100, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		for _, j := range jobs {
			o := redemption.CouponOutcome{Status: redemption.CouponPending, RetryIn: time.Hour}
			if j.MemberID == memberID && j.Platform == platform {
				o = redemption.CouponOutcome{Status: redemption.CouponProvisioned, CouponID: couponID, Attempts: 1,
					Carries: &redemption.Discount{Type: "percentage", Value: 10}}
			}
			if err := store.FinishCoupon(ctx, j, o); err != nil {
				t.Fatal(err)
			}
		}
	}
	owner := func(merchantID uuid.UUID, platform, couponID string) (uuid.UUID, string, error) {
		return store.FindMemberByCouponID(ctx, merchantID, platform, couponID)
	}

	// A row released without an outcome keeps nothing and is due again.
	jobs, err := store.ClaimCoupons(ctx, 100, time.Minute)
	if err != nil || len(jobs) != 6 {
		t.Fatalf("claimed %d rows, %v; want 6", len(jobs), err)
	}
	for _, j := range jobs {
		if err := store.ReleaseCoupon(ctx, j); err != nil {
			t.Fatal(err)
		}
	}
	finish(ana.ID, "yampi", "4471")
	if id, code, err := owner(s.merchant.ID, "yampi", "4471"); err != nil || id != ana.ID || code != ana.CouponCode {
		t.Fatalf("promocode 4471 = %s %q, %v; want %s %q", id, code, err, ana.ID, ana.CouponCode)
	}
	// Asked for again and created anew under another id (the first was
	// deleted at Yampi): an order placed with either attributes to her.
	if err := store.RequestCoupons(ctx, s.merchant.ID, ana.ID); err != nil {
		t.Fatal(err)
	}
	finish(ana.ID, "yampi", "4480")
	for _, id := range []string{"4471", "4480"} {
		if got, _, err := owner(s.merchant.ID, "yampi", id); err != nil || got != ana.ID {
			t.Errorf("promocode %s = %s, %v; want ana", id, got, err)
		}
	}
	if st, _ := store.CouponStates(ctx, s.merchant.ID, []uuid.UUID{ana.ID}); st[ana.ID]["yampi"].CouponID != "4480" {
		t.Errorf("current coupon = %+v, want 4480", st[ana.ID]["yampi"])
	}
	// An id given again to another member's coupon is hers from then on.
	if err := store.RequestCoupons(ctx, s.merchant.ID, bia.ID); err != nil {
		t.Fatal(err)
	}
	finish(bia.ID, "yampi", "4471")
	if got, code, err := owner(s.merchant.ID, "yampi", "4471"); err != nil || got != bia.ID || code != bia.CouponCode {
		t.Errorf("promocode 4471 after bia's coupon got it = %s %q, %v; want bia", got, code, err)
	}
	for _, tc := range []struct {
		name               string
		merchant           uuid.UUID
		platform, couponID string
	}{
		{"another merchant", other.merchant.ID, "yampi", "4480"},
		{"another platform", s.merchant.ID, "guru", "4480"},
		{"an id never given", s.merchant.ID, "yampi", "9999"},
	} {
		if _, _, err := owner(tc.merchant, tc.platform, tc.couponID); !apperr.Is(err, apperr.NotFound) {
			t.Errorf("%s: err = %v, want not found", tc.name, err)
		}
	}
}
