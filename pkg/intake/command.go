package intake

import (
	"time"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/inbound"
	"github.com/convida/convida/pkg/ledger"
)

// Command is the ledger command of an order event, for the member a
// attributes it to. Its id is the event's DedupeKey, built in Go only, by
// inbound.CommandID: "{platform}:{order id}:{sale|refund}", the same for
// a sale's webhook, its redelivery and its pull, so that whichever
// arrives second is applied once (and, since the format never changed, a
// redelivery across an upgrade is too). The sale's coupon is the one it
// carries, else the code that named the member. received stands in for
// the payment time when the platform sent none.
func Command(ev *inbound.OrderEvent, merchantID uuid.UUID, a Attribution, received time.Time) ledger.Command {
	typ := ledger.CmdCreditSale
	if ev.Kind == inbound.KindRefund {
		typ = ledger.CmdRefund
	}
	paid := ev.OccurredAt
	if paid.IsZero() {
		paid = received
	}
	coupon := ev.CouponCode
	if coupon == "" {
		coupon = a.Code
	}
	return ledger.Command{
		ID: ev.DedupeKey, Type: typ, MerchantID: merchantID, MemberID: a.Member, IssuedAt: received,
		Sale: &ledger.Sale{
			Source: ev.Provider, OrderID: ev.OrderID, Amount: ev.Amount, Currency: ev.Currency,
			CouponCode: coupon, BuyerName: ev.Customer.Name, BuyerEmail: ev.Customer.Email,
			BuyerDocument: ev.Customer.Document, SubscriptionID: ev.SubscriptionID, PaidAt: paid.UTC(),
		},
	}
}
