package inbound

import (
	"strings"
	"testing"
	"time"

	"github.com/convida/convida/pkg/apperr"
)

const guruOrderID = "9081534a-7512-4dab-9172-218c1dc1f263"

// guruSale is the event of testdata/guru/transaction-approved.json.
func guruSale() *OrderEvent {
	return &OrderEvent{
		Provider:       "guru",
		Kind:           KindSale,
		EventName:      "transaction.approved",
		OrderID:        guruOrderID,
		Amount:         9790,
		Currency:       "BRL",
		CouponCode:     "LOJ-ANA-K7PX",
		Customer:       Customer{Name: "Ana Souza", Email: "ana.souza@example.com", Document: "52998224725"},
		SubscriptionID: "sub_BOAEj2WTKoclmg4X",
		OccurredAt:     at("2026-11-20T12:00:05Z"),
		DedupeKey:      "guru:" + guruOrderID + ":sale",
	}
}

func guruRefund() *OrderEvent {
	return with(guruSale(), func(e *OrderEvent) {
		e.Kind, e.EventName, e.DedupeKey = KindRefund, "transaction.refunded", "guru:"+guruOrderID+":refund"
	})
}

func TestGuru(t *testing.T) {
	t.Parallel()
	approved := guruFixture(t, "transaction-approved.json", testToken)
	set := func(path, value string) []byte { return edit(t, approved, path, value) }

	tests := []struct {
		name  string
		body  []byte
		creds Credentials
		want  want
	}{
		// fixtures
		{"approved fixture", approved, testCreds, want{event: guruSale()}},
		{"refunded fixture", guruFixture(t, "transaction-refunded.json", testToken), testCreds, want{event: guruRefund()}},
		{"waiting_payment fixture is ignored", guruFixture(t, "transaction-waiting-payment.json", testToken), testCreds, want{ignored: true}},

		// authentication and its order
		{"wrong token", guruFixture(t, "transaction-approved.json", "tok_someone_else"), testCreds, want{code: apperr.Unauthorized}},
		{"token is a prefix of the stored one", guruFixture(t, "transaction-approved.json", testToken[:39]), testCreds, want{code: apperr.Unauthorized}},
		{"api_token absent", set("api_token", ""), testCreds, want{code: apperr.Unauthorized}},
		{"api_token empty", set("api_token", `""`), testCreds, want{code: apperr.Unauthorized}},
		{"api_token not a string", set("api_token", `12`), testCreds, want{code: apperr.Unauthorized}},
		{"no token configured", approved, Credentials{YampiWebhookSecret: testSecret}, want{code: apperr.Unauthorized}},
		{"no token configured and empty api_token", set("api_token", `""`), Credentials{}, want{code: apperr.Unauthorized}},
		{"wrong token beats a bad amount", edit(t, guruFixture(t, "transaction-approved.json", "bad"), "payment.total", "97.999"), testCreds, want{code: apperr.Unauthorized}},
		{"wrong token beats an ignored status", guruFixture(t, "transaction-waiting-payment.json", "bad"), testCreds, want{code: apperr.Unauthorized}},
		{"malformed JSON", approved[:len(approved)-2], testCreds, want{code: apperr.Unprocessable}},
		{"malformed JSON without a valid token", []byte(`{"api_token": "bad",`), testCreds, want{code: apperr.Unprocessable}},
		{"empty body", nil, testCreds, want{code: apperr.Unprocessable}},
		{"JSON array", []byte(`[]`), testCreds, want{code: apperr.Unprocessable}},
		{"JSON null", []byte(`null`), testCreds, want{code: apperr.Unprocessable}},
		{"trailing data", append(approved, []byte(`{}`)...), testCreds, want{code: apperr.Unprocessable}},

		// routing
		{"chargeback is a refund", set("status", `"chargeback"`), testCreds, want{event: guruRefund()}},
		{"status in other case", set("status", `" Approved "`), testCreds, want{event: guruSale()}},
		{"canceled is ignored", set("status", `"canceled"`), testCreds, want{ignored: true}},
		{"status absent is ignored", set("status", ""), testCreds, want{ignored: true}},
		{"status not a string is ignored", set("status", `3`), testCreds, want{ignored: true}},
		{"subscription webhook is ignored", set("webhook_type", `"subscription"`), testCreds, want{ignored: true}},
		{"webhook_type absent is ignored", set("webhook_type", ""), testCreds, want{ignored: true}},
		{"ignored status is not mapped", edit(t, guruFixture(t, "transaction-waiting-payment.json", testToken), "payment.total", `"abc"`), testCreds, want{ignored: true}},

		// money
		{"97.999 is unprocessable", set("payment.total", "97.999"), testCreds, want{code: apperr.Unprocessable}},
		{"negative total", set("payment.total", "-97.9"), testCreds, want{code: apperr.Unprocessable}},
		{"exponent total", set("payment.total", "9.79e1"), testCreds, want{code: apperr.Unprocessable}},
		{"total absent", set("payment.total", ""), testCreds, want{code: apperr.Unprocessable}},
		{"total null", set("payment.total", "null"), testCreds, want{code: apperr.Unprocessable}},
		{"total not a number", set("payment.total", "true"), testCreds, want{code: apperr.Unprocessable}},
		{"total as decimal text", set("payment.total", `"97.90"`), testCreds, want{event: guruSale()}},
		{"total with trailing zeros", set("payment.total", "97.900"), testCreds, want{event: guruSale()}},
		{"total zero", set("payment.total", "0"), testCreds, want{event: with(guruSale(), func(e *OrderEvent) { e.Amount = 0 })}},
		{"payment absent", set("payment", ""), testCreds, want{code: apperr.Unprocessable}},
		{"currency absent", set("payment.currency", ""), testCreds, want{event: guruSale()}},
		{"currency lower case", set("payment.currency", `"usd"`), testCreds, want{event: with(guruSale(), func(e *OrderEvent) { e.Currency = "USD" })}},

		// order id
		{"id absent", set("id", ""), testCreds, want{code: apperr.Unprocessable}},
		{"id empty", set("id", `"  "`), testCreds, want{code: apperr.Unprocessable}},
		{"id not a string", set("id", `{}`), testCreds, want{code: apperr.Unprocessable}},
		{"id integer", set("id", `12345`), testCreds, want{event: with(guruSale(), func(e *OrderEvent) { e.OrderID, e.DedupeKey = "12345", "guru:12345:sale" })}},

		// coupon, customer, subscription
		{"coupon null", set("payment.coupon", "null"), testCreds, want{event: noCoupon(guruSale())}},
		{"coupon absent", set("payment.coupon", ""), testCreds, want{event: noCoupon(guruSale())}},
		{"coupon empty array", set("payment.coupon", "[]"), testCreds, want{event: noCoupon(guruSale())}},
		{"coupon_code null", set("payment.coupon.coupon_code", "null"), testCreds, want{event: noCoupon(guruSale())}},
		{"coupon code trimmed, case kept", set("payment.coupon.coupon_code", `"  loj-Ana-k7px\n"`), testCreds, want{event: with(guruSale(), func(e *OrderEvent) { e.CouponCode = "loj-Ana-k7px" })}},
		{"coupon not an object", set("payment.coupon", `"LOJ"`), testCreds, want{code: apperr.Unprocessable}},
		{"email trimmed, case kept", set("contact.email", `" Ana.Souza@Example.com "`), testCreds, want{event: with(guruSale(), func(e *OrderEvent) { e.Customer.Email = "Ana.Souza@Example.com" })}},
		{"doc as an integer", set("contact.doc", `52998224725`), testCreds, want{event: guruSale()}},
		{"contact absent", set("contact", ""), testCreds, want{event: with(guruSale(), func(e *OrderEvent) { e.Customer = Customer{} })}},
		{"contact email of the wrong type", set("contact.email", `["a@b.c"]`), testCreds, want{code: apperr.Unprocessable}},
		{"subscription absent", set("subscription", ""), testCreds, want{event: with(guruSale(), func(e *OrderEvent) { e.SubscriptionID = "" })}},
		{"subscription null", set("subscription", "null"), testCreds, want{event: with(guruSale(), func(e *OrderEvent) { e.SubscriptionID = "" })}},

		// time
		{"confirmed_at null uses ordered_at", set("dates.confirmed_at", "null"), testCreds, want{event: with(guruSale(), func(e *OrderEvent) { e.OccurredAt = at("2026-11-20T12:00:00Z") })}},
		{"offset converted to UTC", set("dates.confirmed_at", `"2026-11-20T09:00:05-03:00"`), testCreds, want{event: guruSale()}},
		{"no dates gives the zero time", set("dates", ""), testCreds, want{event: with(guruSale(), func(e *OrderEvent) { e.OccurredAt = time.Time{} })}},
		{"confirmed_at unparseable", set("dates.confirmed_at", `"20/11/2026"`), testCreds, want{code: apperr.Unprocessable}},
		{"ordered_at unparseable", edit(t, set("dates.confirmed_at", ""), "dates.ordered_at", `"yesterday"`), testCreds, want{code: apperr.Unprocessable}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			out, err := handle(Guru(), tt.body, nil, tt.creds)
			checkOutcome(t, out, err, tt.want)
		})
	}
}

func noCoupon(ev *OrderEvent) *OrderEvent {
	return with(ev, func(e *OrderEvent) { e.CouponCode = "" })
}

func TestGuruIgnoresHeader(t *testing.T) {
	t.Parallel()
	body := guruFixture(t, "transaction-approved.json", testToken)
	out, err := handle(Guru(), body, signed(body, "anything"), testCreds)
	checkOutcome(t, out, err, want{event: guruSale()})
}

func TestGuruMessages(t *testing.T) {
	t.Parallel()
	body := edit(t, guruFixture(t, "transaction-approved.json", testToken), "payment.total", "97.999")
	_, err := handle(Guru(), body, nil, testCreds)
	if got, want := apperr.MessageOf(err), `payment.total: amount "97.999" has more than 2 decimal places`; got != want {
		t.Errorf("message = %q, want %q", got, want)
	}
	body = edit(t, guruFixture(t, "transaction-approved.json", testToken), "contact.email", "7")
	_, err = handle(Guru(), body, nil, testCreds)
	if got, want := apperr.MessageOf(err), "field contact.email has the wrong type (number)"; got != want {
		t.Errorf("message = %q, want %q", got, want)
	}
	_, err = handle(Guru(), guruFixture(t, "transaction-approved.json", "bad"), nil, testCreds)
	if got := err.Error(); len(got) > 200 || strings.Contains(got, testToken) || strings.Contains(got, "bad") {
		t.Errorf("error %q must not repeat the tokens", got)
	}
}
