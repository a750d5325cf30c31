package inbound

import (
	"strings"
	"time"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/provider"
)

// PulledSale is a sale read from a platform's API by a reconciliation
// pull, in the terms of an OrderEvent: the fields its webhook would carry.
// Status is the platform's own word (Guru's transaction status, Yampi's
// status alias, Hotmart's purchase status, Kiwify's sale status).
type PulledSale struct {
	Provider       string
	OrderID        string
	Status         string
	Amount         int64 // cents
	Currency       string
	CouponCode     string
	ReferralCode   string // the code of a referral link (Kiwify's sck, src, s1)
	CouponID       string // the platform's id of the coupon used (Yampi's promocode_id)
	Customer       Customer
	SubscriptionID string
	OccurredAt     time.Time
}

// Pulled maps a pulled sale to the Outcome its webhook would have had: its
// status routed as the webhook's (Guru's "approved" is a sale,
// "refunded"/"chargeback" a refund; Yampi's status aliases as in
// order.status.updated; Hotmart's APPROVED/COMPLETE as PURCHASE_APPROVED/
// PURCHASE_COMPLETE, REFUNDED/CHARGEBACK/CANCELLED as the reversals;
// Kiwify's paid/refunded/chargedback as its webhook's order_status), and
// the same DedupeKey, which is the ledger
// command's id. So whichever of the webhook and the pull comes second is a
// duplicate, and nothing is credited twice. A provider without a pull is
// Unprocessable.
func Pulled(s PulledSale) (Outcome, error) {
	var kind Kind
	var name string
	var ignored Outcome
	switch s.Provider {
	case provider.Guru:
		kind, name, ignored = guruRoute("transaction", s.Status)
	case provider.Yampi:
		name = "order.status.updated"
		kind, ignored = yampiRoute(name, s.Status)
	case provider.Hotmart:
		name = hotmartPulledEvent(s.Status)
		kind, ignored = hotmartRoute(name)
	case provider.Kiwify:
		name = "order_status." + slug(s.Status)
		kind, ignored = kiwifyRoute("", s.Status)
	default:
		return Outcome{}, apperr.Errorf(apperr.Unprocessable, "no pull maps sales of %q", s.Provider)
	}
	if kind == "" {
		return ignored, nil
	}
	if s.Amount < 0 {
		return Outcome{}, apperr.Errorf(apperr.Unprocessable, "the amount is negative")
	}
	ev, err := complete(&OrderEvent{
		Provider: s.Provider, Kind: kind, EventName: name, OrderID: s.OrderID, Amount: s.Amount,
		Currency: s.Currency, CouponCode: s.CouponCode, ReferralCode: s.ReferralCode, CouponID: s.CouponID,
		Customer: s.Customer, SubscriptionID: s.SubscriptionID,
		OccurredAt: s.OccurredAt.UTC(),
	}, "id")
	if err != nil {
		return Outcome{}, err
	}
	return Outcome{Event: ev}, nil
}

// hotmartPulledEvent names the webhook event of a sales/history status:
// PURCHASE_ and the status, whose CANCELLED the webhooks spell CANCELED.
func hotmartPulledEvent(status string) string {
	status = strings.ToUpper(strings.TrimSpace(status))
	if status == "CANCELLED" {
		status = "CANCELED"
	}
	return "PURCHASE_" + status
}
