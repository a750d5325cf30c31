package inbound

import (
	"reflect"
	"testing"

	"github.com/convida/convida/pkg/apperr"
)

// TestPulled: a sale read by a reconciliation pull maps to the webhook's
// event of the same order, with the same dedupe key (the command id), so
// whichever of the two comes second is a duplicate; statuses route as the
// webhooks' do.
func TestPulled(t *testing.T) {
	fromEvent := func(ev *OrderEvent, status string) PulledSale {
		return PulledSale{Provider: ev.Provider, OrderID: " " + ev.OrderID + " ", Status: status, Amount: ev.Amount, Currency: "brl",
			CouponCode: ev.CouponCode, ReferralCode: ev.ReferralCode, Customer: ev.Customer, SubscriptionID: ev.SubscriptionID, OccurredAt: ev.OccurredAt}
	}
	tests := []struct {
		name   string
		pulled PulledSale
		want   *OrderEvent // nil: ignored
	}{
		{"guru approved", fromEvent(guruSale(), "approved"), guruSale()},
		{"guru refunded", fromEvent(guruSale(), "refunded"), guruRefund()},
		{"guru chargeback", fromEvent(guruSale(), "Chargeback"), guruRefund()},
		{"guru waiting", fromEvent(guruSale(), "waiting_payment"), nil},
		{"yampi paid", fromEvent(yampiSale(), "paid"), with(yampiSale(), func(e *OrderEvent) { e.EventName = "order.status.updated" })},
		{"yampi refunded", fromEvent(yampiSale(), "refunded"), with(yampiStatus(KindRefund), func(e *OrderEvent) {
			e.Customer, e.OccurredAt = yampiSale().Customer, yampiSale().OccurredAt
		})},
		{"yampi handling", fromEvent(yampiSale(), "handling_products"), nil},
		{"hotmart approved", fromEvent(hotmartSale(), "APPROVED"), hotmartSale()},
		{"hotmart complete", fromEvent(hotmartSale(), "COMPLETE"), with(hotmartSale(), func(e *OrderEvent) { e.EventName = "PURCHASE_COMPLETE" })},
		{"hotmart refunded", fromEvent(hotmartSale(), "REFUNDED"), hotmartRefund("PURCHASE_REFUNDED")},
		{"hotmart chargeback", fromEvent(hotmartSale(), "chargeback"), hotmartRefund("PURCHASE_CHARGEBACK")},
		{"hotmart cancelled", fromEvent(hotmartSale(), "CANCELLED"), hotmartRefund("PURCHASE_CANCELED")},
		{"hotmart waiting", fromEvent(hotmartSale(), "WAITING_PAYMENT"), nil},
		{"hotmart protested", fromEvent(hotmartSale(), "PROTESTED"), nil},
		{"kiwify paid", fromEvent(kiwifySale(), "paid"), with(kiwifySale(), func(e *OrderEvent) { e.EventName = "order_status.paid" })},
		{"kiwify refunded", fromEvent(kiwifySale(), "refunded"), kiwifyRefund("order_status.refunded")},
		{"kiwify chargedback", fromEvent(kiwifySale(), "chargedback"), kiwifyRefund("order_status.chargedback")},
		{"kiwify waiting", fromEvent(kiwifySale(), "waiting_payment"), nil},
	}
	for _, tt := range tests {
		out, err := Pulled(tt.pulled)
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if tt.want == nil {
			if !out.Ignored || out.Event != nil {
				t.Errorf("%s: %+v, want ignored", tt.name, out)
			}
			continue
		}
		if !reflect.DeepEqual(out.Event, tt.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", tt.name, out.Event, tt.want)
		}
	}
	withID := PulledSale{Provider: "yampi", OrderID: "1", Status: "paid", CouponID: " 555 ", ReferralCode: " LOJ-X "}
	if out, err := Pulled(withID); err != nil || out.Event.CouponID != "555" || out.Event.ReferralCode != "LOJ-X" {
		t.Errorf("a coupon id and a referral code: %+v %v, want them carried, trimmed", out.Event, err)
	}
	if _, err := Pulled(PulledSale{Provider: "guru", Status: "approved", Amount: 100}); !apperr.Is(err, apperr.Unprocessable) {
		t.Errorf("no order id: %v, want unprocessable", err)
	}
	if _, err := Pulled(PulledSale{Provider: "eduzz", OrderID: "E1", Status: "paid"}); !apperr.Is(err, apperr.Unprocessable) {
		t.Errorf("a provider without a pull mapping: %v, want unprocessable", err)
	}
}
