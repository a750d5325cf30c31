package postgres_test

import (
	"context"
	"testing"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/postgres"
	"github.com/convida/convida/pkg/referral"
)

// TestReferralTenantScope: the referral reads of one merchant miss the
// rows of another.
func TestReferralTenantScope(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a, b := mustTwoTenants(t, 2, 1)
	rs := postgres.NewReferralReads(a.pool)
	if _, err := rs.FindReferralByID(ctx, b.merchant.ID, uuid.New()); !apperr.Is(err, apperr.NotFound) {
		t.Errorf("FindReferralByID of an unknown referral = %v, want not_found", err)
	}
	refs, total, err := rs.ListReferrals(ctx, b.merchant.ID, referral.Filter{MemberID: a.members[0].ID, Limit: 20})
	if err != nil || total != 0 || len(refs) != 0 {
		t.Errorf("ListReferrals of B by A's member = %d, %d, %v; want none", len(refs), total, err)
	}
}
