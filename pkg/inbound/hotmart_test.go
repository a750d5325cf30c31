package inbound

import (
	"net/http"
	"testing"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/provider"
)

const hotmartTransaction = "HP17951759400231"

// hotmartSale is the event of testdata/hotmart/purchase-approved.json:
// R$ 1157.70, which a float64 times 100 would make 115769 cents.
func hotmartSale() *OrderEvent {
	return &OrderEvent{
		Provider:   "hotmart",
		Kind:       KindSale,
		EventName:  "PURCHASE_APPROVED",
		OrderID:    hotmartTransaction,
		Amount:     115770,
		Currency:   "BRL",
		CouponCode: "LOJ-ANA-K7PX",
		Customer:   Customer{Name: "Bruno Lima", Email: "bruno.lima@example.com", Document: "11144477735"},
		OccurredAt: at("2026-11-20T12:00:00Z"), // approved_date 1795176000000 ms
		DedupeKey:  "hotmart:" + hotmartTransaction + ":sale",
	}
}

func hotmartRefund(name string) *OrderEvent {
	return with(hotmartSale(), func(e *OrderEvent) {
		e.Kind, e.EventName, e.DedupeKey = KindRefund, name, "hotmart:"+hotmartTransaction+":refund"
	})
}

// hottok is a header carrying token as Hotmart's hottok.
func hottok(token string) http.Header {
	h := http.Header{}
	h.Set(HotmartTokenHeader, token)
	return h
}

func TestHotmart(t *testing.T) {
	t.Parallel()
	approved := mustFixture(t, "hotmart/purchase-approved.json")
	set := func(path, value string) []byte { return edit(t, approved, path, value) }
	price := func(v string) []byte { return set("data.purchase.price.value", v) }
	ok := hottok(testHottok)

	tests := []struct {
		name   string
		body   []byte
		header http.Header
		creds  Credentials
		want   want
	}{
		// fixtures: every mapped event
		{"PURCHASE_APPROVED fixture", approved, ok, testCreds, want{event: hotmartSale()}},
		{"PURCHASE_COMPLETE fixture is the same sale", mustFixture(t, "hotmart/purchase-complete.json"), ok, testCreds,
			want{event: with(hotmartSale(), func(e *OrderEvent) { e.EventName = "PURCHASE_COMPLETE" })}},
		{"PURCHASE_REFUNDED fixture", mustFixture(t, "hotmart/purchase-refunded.json"), ok, testCreds,
			want{event: hotmartRefund("PURCHASE_REFUNDED")}},
		{"PURCHASE_CHARGEBACK fixture", mustFixture(t, "hotmart/purchase-chargeback.json"), ok, testCreds,
			want{event: hotmartRefund("PURCHASE_CHARGEBACK")}},
		{"PURCHASE_CANCELED fixture, dated by its order date", mustFixture(t, "hotmart/purchase-canceled.json"), ok, testCreds,
			want{event: with(hotmartRefund("PURCHASE_CANCELED"), func(e *OrderEvent) { e.OccurredAt = at("2026-11-20T11:59:00Z") })}},
		{"PURCHASE_PROTEST fixture changes nothing", mustFixture(t, "hotmart/purchase-protest.json"), ok, testCreds, want{ignored: true}},
		{"PURCHASE_BILLET_PRINTED fixture is ignored", mustFixture(t, "hotmart/purchase-billet-printed.json"), ok, testCreds, want{ignored: true}},

		// authentication, before parsing
		{"wrong hottok", approved, hottok("hottok_someone_else"), testCreds, want{code: apperr.Unauthorized}},
		{"hottok a prefix of the stored one", approved, hottok(testHottok[:10]), testCreds, want{code: apperr.Unauthorized}},
		{"header missing", approved, http.Header{}, testCreds, want{code: apperr.Unauthorized}},
		{"header nil", approved, nil, testCreds, want{code: apperr.Unauthorized}},
		{"no hottok configured", approved, ok, Credentials{GuruAccountToken: testToken}, want{code: apperr.Unauthorized}},
		{"the hottok in the body is not enough", set("hottok", `"`+testHottok+`"`), http.Header{}, testCreds, want{code: apperr.Unauthorized}},
		{"wrong hottok beats malformed JSON", []byte(`{"event":`), hottok("x"), testCreds, want{code: apperr.Unauthorized}},
		{"malformed JSON", []byte(`{"event":`), ok, testCreds, want{code: apperr.Unprocessable}},

		// amounts: the JSON number's text, exactly
		{"integer price", price(`97`), ok, testCreds, want{event: with(hotmartSale(), func(e *OrderEvent) { e.Amount = 9700 })}},
		{"0.29 exactly", price(`0.29`), ok, testCreds, want{event: with(hotmartSale(), func(e *OrderEvent) { e.Amount = 29 })}},
		{"19.99 exactly", price(`19.99`), ok, testCreds, want{event: with(hotmartSale(), func(e *OrderEvent) { e.Amount = 1999 })}},
		{"trailing zeros", price(`197.900`), ok, testCreds, want{event: with(hotmartSale(), func(e *OrderEvent) { e.Amount = 19790 })}},
		{"three decimals refused", price(`97.999`), ok, testCreds, want{code: apperr.Unprocessable}},
		{"negative refused", price(`-1`), ok, testCreds, want{code: apperr.Unprocessable}},
		{"exponent refused", price(`1e3`), ok, testCreds, want{code: apperr.Unprocessable}},
		{"price missing", set("data.purchase.price.value", ""), ok, testCreds, want{code: apperr.Unprocessable}},

		// fields
		{"no coupon", set("data.purchase.offer.coupon_code", ""), ok, testCreds, want{event: noCoupon(hotmartSale())}},
		{"offer null", set("data.purchase.offer", "null"), ok, testCreds, want{event: noCoupon(hotmartSale())}},
		{"another currency", set("data.purchase.price.currency_value", `"usd"`), ok, testCreds,
			want{event: with(hotmartSale(), func(e *OrderEvent) { e.Currency = "USD" })}},
		{"transaction missing", set("data.purchase.transaction", ""), ok, testCreds, want{code: apperr.Unprocessable}},
		{"date not milliseconds", set("data.purchase.approved_date", `"2026-11-20"`), ok, testCreds, want{code: apperr.Unprocessable}},
		{"no dates: the receipt time", edit(t, set("data.purchase.approved_date", ""), "data.purchase.order_date", ""), ok, testCreds,
			want{event: with(hotmartSale(), func(e *OrderEvent) { e.OccurredAt = at("0001-01-01T00:00:00Z") })}},
		{"event in lower case", set("event", `"purchase_approved"`), ok, testCreds, want{event: hotmartSale()}},
		{"unknown event ignored", set("event", `"SUBSCRIPTION_CANCELLATION"`), ok, testCreds, want{ignored: true}},
		{"an ignored event needs no sale fields", []byte(`{"event":"SWITCH_PLAN","version":"2.0.0","data":{}}`), ok, testCreds, want{ignored: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := handle(Hotmart(), tt.body, tt.header, tt.creds)
			checkOutcome(t, out, err, tt.want)
		})
	}
}

// CommandID is the dedupe key every adapter derives, and what a pull of
// the platform's sales must use to meet the webhook's command.
func TestCommandIDIsTheDedupeKey(t *testing.T) {
	t.Parallel()
	if got := CommandID(provider.Hotmart, hotmartTransaction, KindSale); got != hotmartSale().DedupeKey {
		t.Errorf("CommandID = %q, want %q", got, hotmartSale().DedupeKey)
	}
	d := Delivery{Provider: provider.Kiwify, DedupeKey: CommandID(provider.Kiwify, "a:b", KindRefund)}
	if d.OrderID() != "a:b" {
		t.Errorf("OrderID of %q = %q", d.DedupeKey, d.OrderID())
	}
}
