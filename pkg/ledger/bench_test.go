package ledger

import (
	"strconv"
	"testing"
	"time"

	"github.com/convida/convida/pkg/member"
)

// BenchmarkApplyLifecycle measures the hot path: a sale credited, released
// and refunded, per iteration, on a book that grows as in a batch.
func BenchmarkApplyLifecycle(b *testing.B) {
	bk, m := newTestBook(true, member.StatusActive)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if i%256 == 0 {
			bk, m = newTestBook(true, member.StatusActive)
		}
		order := "o" + strconv.Itoa(i)
		bk.Apply(saleCmd(m, "s"+order, CmdCreditSale, order, "bruno@example.com"))
		r := bk.NewReferrals[len(bk.NewReferrals)-1]
		bk.Apply(Command{ID: "rel" + order, Type: CmdRelease, MerchantID: m.MerchantID, MemberID: m.ID, ReferralID: r.ID, IssuedAt: t0.Add(8 * 24 * time.Hour)})
		bk.Apply(saleCmd(m, "r"+order, CmdRefund, order, "bruno@example.com"))
	}
}
