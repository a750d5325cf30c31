package postgres_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/convida/convida/pkg/campaign"
	"github.com/convida/convida/pkg/ledger"
	"github.com/convida/convida/pkg/postgres"
	"github.com/convida/convida/pkg/procstat"
	"github.com/convida/convida/pkg/testenv"
)

// BenchmarkLedgerApplyBatch times the ledger store's transaction alone:
// one batch of 50 sales (50 members of 5,000, each sale a new order) loaded,
// applied and written, one batch at a time, so the figure is mostly the
// database's work for it:
//
//	go test -run '^$' -bench LedgerApplyBatch -benchtime 800x ./pkg/postgres
//
// make bench-sales measures the whole pipeline; this one isolates the
// ledger's statements from the ingest and the broker sharing the machine.
func BenchmarkLedgerApplyBatch(b *testing.B) {
	const members, perBatch = 5000, 50
	s := mustSeed(b, testenv.MustPool(b), campaign.Campaign{Name: "Bench", RewardType: campaign.RewardFixed, RewardValue: 500, WarrantyDays: 7, IsActive: true}, members)
	store := postgres.NewLedgerStore(s.pool, time.Now)
	ctx := context.Background()
	n := 0
	cpu := procstat.Total("postgres")
	for b.Loop() {
		cmds := make([]ledger.Command, perBatch)
		for i := range cmds {
			n++
			order := "bench-" + strconv.Itoa(n)
			cmds[i] = ledger.Command{ID: order, Type: ledger.CmdCreditSale, MerchantID: s.merchant.ID,
				MemberID: s.members[(n*7919)%members].ID, IssuedAt: time.Now(),
				Sale: sale(order, 10000, "buyer"+strconv.Itoa(n)+"@example.com", time.Now())}
		}
		if _, err := store.ApplyBatch(ctx, cmds); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(n), "µs/order")
	b.ReportMetric(float64((procstat.Total("postgres")-cpu).Microseconds())/float64(n), "pg-cpu-µs/order")
}
