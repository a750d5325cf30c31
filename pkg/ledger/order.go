package ledger

import (
	"time"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/inbound"
)

// OrderCommand maps an order event to its ledger command, for the member
// it is attributed to, as the ingest publishes it for a webhook and a
// reconciliation run for a pulled sale. The command id is the dedupe key,
// so a duplicate that slips through every dedupe layer (or the same sale
// brought by both the webhook and the pull) is still applied once.
// received stands in for the payment time when the platform sent none.
func OrderCommand(ev *inbound.OrderEvent, merchantID, memberID uuid.UUID, received time.Time) Command {
	typ := CmdCreditSale
	if ev.Kind == inbound.KindRefund {
		typ = CmdRefund
	}
	paid := ev.OccurredAt
	if paid.IsZero() {
		paid = received
	}
	return Command{
		ID: ev.DedupeKey, Type: typ, MerchantID: merchantID, MemberID: memberID, IssuedAt: received,
		Sale: &Sale{
			Source: ev.Provider, OrderID: ev.OrderID, Amount: ev.Amount, Currency: ev.Currency,
			CouponCode: ev.CouponCode, BuyerName: ev.Customer.Name, BuyerEmail: ev.Customer.Email,
			BuyerDocument: ev.Customer.Document, SubscriptionID: ev.SubscriptionID, PaidAt: paid.UTC(),
		},
	}
}
