package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/convida/convida/pkg/postgres"
	"github.com/convida/convida/pkg/referral"
	"github.com/convida/convida/pkg/testenv"
)

// BenchmarkDashboard times each read of the dashboard's pages on one
// merchant with 10,000 members and 100,000 referrals over 120 days
// (testenv.DashboardScale), seeded once (about 20 s) for all of them:
//
//	go test -run '^$' -bench Dashboard -benchtime 50x ./pkg/postgres
//
// The figures are in docs/benchmarks.md ("Dashboard queries");
// TestLoadDashboardQueries in pkg/e2e holds them to their budgets.
func BenchmarkDashboard(b *testing.B) {
	pool := testenv.MustPool(b)
	seeded := testenv.MustSeedScale(b, pool, testenv.DashboardScale(time.Now()))
	ctx := context.Background()
	for _, q := range testenv.DashboardQueries(pool, seeded) {
		b.Run(q.Name, func(b *testing.B) {
			for b.Loop() {
				if err := q.Run(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	// The CSV export of every referral, a batch at a time.
	reads := postgres.NewReferralReads(pool)
	b.Run("ReferralsExportAll", func(b *testing.B) {
		for b.Loop() {
			n := 0
			for _, err := range reads.ReferralRows(ctx, seeded.Merchant.ID, referral.Filter{}) {
				if err != nil {
					b.Fatal(err)
				}
				n++
			}
			if n != 100_000 {
				b.Fatalf("exported %d referrals, want 100000", n)
			}
		}
	})
}
