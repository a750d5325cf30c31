package intake_test

import (
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/inbound"
	"github.com/convida/convida/pkg/intake"
	"github.com/convida/convida/pkg/ledger"
)

// A sale's command id is the one every earlier version published for it
// ("{platform}:{order id}:{sale|refund}"), so that a redelivery across an
// upgrade is still applied once; the coupon is the sale's, else the code
// that named the member; the receipt stands in for a payment time.
func TestCommand(t *testing.T) {
	t.Parallel()
	merchant, member := uuid.New(), uuid.New()
	received := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	paid := time.Date(2026, 11, 20, 9, 0, 0, 0, time.FixedZone("-03", -3*3600))
	for _, tc := range []struct {
		platform, order string
		kind            inbound.Kind
		id, typ         string
	}{
		{"guru", "9081534a-7512-4dab-9172-218c1dc1f263", inbound.KindSale, "guru:9081534a-7512-4dab-9172-218c1dc1f263:sale", ledger.CmdCreditSale},
		{"yampi", "880001", inbound.KindRefund, "yampi:880001:refund", ledger.CmdRefund},
		{"hotmart", "HP17715690036014", inbound.KindSale, "hotmart:HP17715690036014:sale", ledger.CmdCreditSale},
		{"kiwify", "kw:1", inbound.KindRefund, "kiwify:kw:1:refund", ledger.CmdRefund},
	} {
		ev := &inbound.OrderEvent{Provider: tc.platform, Kind: tc.kind, OrderID: tc.order, Amount: 9790, Currency: "BRL",
			CouponCode: "LOJ-ANA-K7PX", OccurredAt: paid, DedupeKey: inbound.CommandID(tc.platform, tc.order, tc.kind)}
		cmd := intake.Command(ev, merchant, intake.Attribution{Member: member, Code: "LOJ-OTHER"}, received)
		if cmd.ID != tc.id || cmd.Type != tc.typ || cmd.MerchantID != merchant || cmd.MemberID != member || !cmd.IssuedAt.Equal(received) {
			t.Errorf("%s %s: command %s %s, want %s %s", tc.platform, tc.kind, cmd.ID, cmd.Type, tc.id, tc.typ)
		}
		s := cmd.Sale
		if s.Source != tc.platform || s.OrderID != tc.order || s.Amount != 9790 || s.CouponCode != "LOJ-ANA-K7PX" ||
			!s.PaidAt.Equal(paid) || s.PaidAt.Location() != time.UTC {
			t.Errorf("%s: sale %+v", tc.platform, s)
		}
	}
	byLink := &inbound.OrderEvent{Provider: "kiwify", Kind: inbound.KindSale, OrderID: "o", ReferralCode: "loj-ana-k7px",
		DedupeKey: "kiwify:o:sale"}
	cmd := intake.Command(byLink, merchant, intake.Attribution{Member: member, Code: "loj-ana-k7px"}, received)
	if cmd.Sale.CouponCode != "loj-ana-k7px" || !cmd.Sale.PaidAt.Equal(received) {
		t.Errorf("a sale by a referral link, no payment time: coupon %q paid %v, want the link's code and the receipt",
			cmd.Sale.CouponCode, cmd.Sale.PaidAt)
	}
}
