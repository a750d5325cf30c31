package inbound

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/convida/convida/pkg/apperr"
)

// yampiSale is the event of testdata/yampi/order-paid.json.
func yampiSale() *OrderEvent {
	return &OrderEvent{
		Provider:   "yampi",
		Kind:       KindSale,
		EventName:  "order.paid",
		OrderID:    "880001",
		Amount:     10000,
		Currency:   "BRL",
		CouponCode: "LOJ-ANA-K7PX",
		Customer:   Customer{Name: "Bruno Lima", Email: "bruno.lima@example.com", Document: "11144477735"},
		OccurredAt: at("2026-11-20T12:00:00Z"), // 09:00 in São Paulo
		DedupeKey:  "yampi:880001:sale",
	}
}

// yampiStatus is the event of an order.status.updated delivery of kind.
func yampiStatus(kind Kind) *OrderEvent {
	return with(yampiSale(), func(e *OrderEvent) {
		e.Kind, e.EventName, e.DedupeKey = kind, "order.status.updated", "yampi:880001:"+string(kind)
	})
}

func TestYampi(t *testing.T) {
	t.Parallel()
	paid := mustFixture(t, "yampi/order-paid.json")
	refunded := mustFixture(t, "yampi/order-status-updated-refunded.json")
	set := func(path, value string) []byte { return edit(t, paid, path, value) }
	alias := func(a string) []byte { return edit(t, refunded, "resource.status.data.alias", a) }
	other := Credentials{GuruAccountToken: testToken, YampiWebhookSecret: "someone_else"}

	tests := []struct {
		name   string
		body   []byte
		header http.Header // nil: signed with testSecret
		creds  Credentials
		want   want
	}{
		// fixtures
		{"order.paid fixture", paid, nil, testCreds, want{event: yampiSale()}},
		{"order.paid without coupon fixture", mustFixture(t, "yampi/order-paid-no-coupon.json"), nil, testCreds, want{event: with(noCoupon(yampiSale()), func(e *OrderEvent) {
			e.OrderID, e.DedupeKey = "880002", "yampi:880002:sale"
		})}},
		{"refunded fixture", refunded, nil, testCreds, want{event: yampiStatus(KindRefund)}},

		// authentication, before parsing
		{"wrong secret", paid, signed(paid, "someone_else"), testCreds, want{code: apperr.Unauthorized}},
		{"signature of another body", paid, signed(refunded, testSecret), testCreds, want{code: apperr.Unauthorized}},
		{"header missing", paid, http.Header{}, testCreds, want{code: apperr.Unauthorized}},
		{"header empty", paid, http.Header{"X-Yampi-Hmac-Sha256": {""}}, testCreds, want{code: apperr.Unauthorized}},
		{"header not base64", paid, http.Header{"X-Yampi-Hmac-Sha256": {"not base64!"}}, testCreds, want{code: apperr.Unauthorized}},
		{"header hex instead of base64", paid, http.Header{"X-Yampi-Hmac-Sha256": {"2523ac6d"}}, testCreds, want{code: apperr.Unauthorized}},
		{"no secret configured", paid, signed(paid, ""), Credentials{GuruAccountToken: testToken}, want{code: apperr.Unauthorized}},
		{"merchant's secret differs", paid, nil, other, want{code: apperr.Unauthorized}},
		{"bad signature beats malformed JSON", []byte(`{"event":`), http.Header{}, testCreds, want{code: apperr.Unauthorized}},
		{"bad signature beats a bad amount", set("resource.value_total", "97.999"), signed(paid, testSecret), testCreds, want{code: apperr.Unauthorized}},
		{"signed malformed JSON", []byte(`{"event":`), nil, testCreds, want{code: apperr.Unprocessable}},
		{"signed JSON array", []byte(`[{"event":"order.paid"}]`), nil, testCreds, want{code: apperr.Unprocessable}},
		{"signed empty body", []byte{}, nil, testCreds, want{code: apperr.Unprocessable}},

		// routing
		{"cancelled is a refund", alias(`"cancelled"`), nil, testCreds, want{event: yampiStatus(KindRefund)}},
		{"refused is a refund", alias(`"refused"`), nil, testCreds, want{event: yampiStatus(KindRefund)}},
		{"chargeback is a refund", alias(`"chargeback"`), nil, testCreds, want{event: yampiStatus(KindRefund)}},
		{"chargeback_disputed is a refund", alias(`"chargeback_disputed"`), nil, testCreds, want{event: yampiStatus(KindRefund)}},
		{"paid status is a sale", alias(`"paid"`), nil, testCreds, want{event: yampiStatus(KindSale)}},
		{"approved status is a sale", alias(`"approved"`), nil, testCreds, want{event: yampiStatus(KindSale)}},
		{"waiting_payment is ignored", alias(`"waiting_payment"`), nil, testCreds, want{ignored: true}},
		{"invoiced is ignored", alias(`"invoiced"`), nil, testCreds, want{ignored: true}},
		{"delivered is ignored", alias(`"delivered"`), nil, testCreds, want{ignored: true}},
		{"alias absent is ignored", alias(""), nil, testCreds, want{ignored: true}},
		{"status data [] is ignored", edit(t, refunded, "resource.status.data", "[]"), nil, testCreds, want{ignored: true}},
		{"other event is ignored", set("event", `"order.created"`), nil, testCreds, want{ignored: true}},
		{"event absent is ignored", set("event", ""), nil, testCreds, want{ignored: true}},
		{"order.paid ignores the alias", set("resource.status.data.alias", `"refunded"`), nil, testCreds, want{event: yampiSale()}},
		{"ignored status is not mapped", edit(t, alias(`"waiting_payment"`), "resource.value_total", `"abc"`), nil, testCreds, want{ignored: true}},

		// customer document
		{"a company's cnpj when the cpf is absent", edit(t, set("resource.customer.data.cpf", ""), "resource.customer.data.cnpj", `"11.222.333/0001-81"`), nil, testCreds,
			want{event: with(yampiSale(), func(e *OrderEvent) { e.Customer.Document = "11.222.333/0001-81" })}},
		{"a company's cnpj when the cpf is empty", edit(t, set("resource.customer.data.cpf", `""`), "resource.customer.data.cnpj", `11222333000181`), nil, testCreds,
			want{event: with(yampiSale(), func(e *OrderEvent) { e.Customer.Document = "11222333000181" })}},
		{"the cpf wins over a cnpj", set("resource.customer.data.cnpj", `"11222333000181"`), nil, testCreds, want{event: yampiSale()}},

		// money
		{"97.999 is unprocessable", set("resource.value_total", "97.999"), nil, testCreds, want{code: apperr.Unprocessable}},
		{"negative total", set("resource.value_total", "-1"), nil, testCreds, want{code: apperr.Unprocessable}},
		{"total absent", set("resource.value_total", ""), nil, testCreds, want{code: apperr.Unprocessable}},
		{"97.9 is 9790 cents", set("resource.value_total", "97.9"), nil, testCreds, want{event: with(yampiSale(), func(e *OrderEvent) { e.Amount = 9790 })}},
		{"refund with 97.999", edit(t, refunded, "resource.value_total", "97.999"), nil, testCreds, want{code: apperr.Unprocessable}},

		// order id
		{"id as a string", set("resource.id", `"880001"`), nil, testCreds, want{event: yampiSale()}},
		{"id absent", set("resource.id", ""), nil, testCreds, want{code: apperr.Unprocessable}},
		{"id negative", set("resource.id", "-1"), nil, testCreds, want{code: apperr.Unprocessable}},
		{"id fractional", set("resource.id", "880001.5"), nil, testCreds, want{code: apperr.Unprocessable}},
		{"resource absent", set("resource", ""), nil, testCreds, want{code: apperr.Unprocessable}},

		// coupon and customer
		{"promocode data []", set("resource.promocode.data", "[]"), nil, testCreds, want{event: noCoupon(yampiSale())}},
		{"promocode data null", set("resource.promocode.data", "null"), nil, testCreds, want{event: noCoupon(yampiSale())}},
		{"promocode null", set("resource.promocode", "null"), nil, testCreds, want{event: noCoupon(yampiSale())}},
		{"promocode absent", set("resource.promocode", ""), nil, testCreds, want{event: noCoupon(yampiSale())}},
		{"promocode data non-empty array", set("resource.promocode.data", `[{"code":"X"}]`), nil, testCreds, want{code: apperr.Unprocessable}},
		{"coupon code trimmed", set("resource.promocode.data.code", `" loj-ana-K7PX "`), nil, testCreds, want{event: with(yampiSale(), func(e *OrderEvent) { e.CouponCode = "loj-ana-K7PX" })}},
		{"email trimmed", set("resource.customer.data.email", `"\tBruno.Lima@example.com "`), nil, testCreds, want{event: with(yampiSale(), func(e *OrderEvent) { e.Customer.Email = "Bruno.Lima@example.com" })}},
		{"customer data []", set("resource.customer.data", "[]"), nil, testCreds, want{event: with(yampiSale(), func(e *OrderEvent) { e.Customer = Customer{} })}},

		// time
		{"time absent gives the zero time", set("time", ""), nil, testCreds, want{event: with(yampiSale(), func(e *OrderEvent) { e.OccurredAt = time.Time{} })}},
		{"time in RFC 3339", set("time", `"2026-11-20T09:00:00Z"`), nil, testCreds, want{code: apperr.Unprocessable}},
		{"time not a string", set("time", "1763640000"), nil, testCreds, want{code: apperr.Unprocessable}},
		{"time in historical summer time", set("time", `"2018-01-10 09:00:00"`), nil, testCreds, want{event: with(yampiSale(), func(e *OrderEvent) { e.OccurredAt = at("2018-01-10T11:00:00Z") })}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			header := tt.header
			if header == nil {
				header = signed(tt.body, testSecret)
			}
			out, err := handle(Yampi(), tt.body, header, tt.creds)
			checkOutcome(t, out, err, tt.want)
		})
	}
}

// TestYampiSignatureVector checks the published vector in
// testdata/yampi/hmac-vector.json (from shared/fixtures/README.md).
func TestYampiSignatureVector(t *testing.T) {
	t.Parallel()
	var v struct{ Secret, Body, Signature string }
	if err := json.Unmarshal(mustFixture(t, "yampi/hmac-vector.json"), &v); err != nil {
		t.Fatalf("read vector: %v", err)
	}
	if got := base64.StdEncoding.EncodeToString(yampiSignature([]byte(v.Body), v.Secret)); got != v.Signature {
		t.Errorf("yampiSignature(vector) = %q, want %q", got, v.Signature)
	}
	header := http.Header{}
	header.Set("X-Yampi-Hmac-SHA256", v.Signature)
	// The vector's body has no value_total: it authenticates, then fails the mapping.
	out, err := handle(Yampi(), []byte(v.Body), header, Credentials{YampiWebhookSecret: v.Secret})
	checkOutcome(t, out, err, want{code: apperr.Unprocessable})
	out, err = handle(Yampi(), []byte(v.Body+" "), header, Credentials{YampiWebhookSecret: v.Secret})
	checkOutcome(t, out, err, want{code: apperr.Unauthorized})
}

// TestYampiPaidDedupeKey checks that order.paid and a paid order.status.updated
// for the same order give one dedupe key, so the sale is counted once.
func TestYampiPaidDedupeKey(t *testing.T) {
	t.Parallel()
	paid := mustFixture(t, "yampi/order-paid.json")
	status := edit(t, mustFixture(t, "yampi/order-status-updated-refunded.json"), "resource.status.data.alias", `"paid"`)
	keys := make([]string, 0, 2)
	for _, body := range [][]byte{paid, status} {
		out, err := handle(Yampi(), body, signed(body, testSecret), testCreds)
		if err != nil || out.Event == nil {
			t.Fatalf("Handle() = %+v, %v; want a sale", out, err)
		}
		keys = append(keys, out.Event.DedupeKey)
	}
	if keys[0] != keys[1] || keys[0] != "yampi:880001:sale" {
		t.Errorf("dedupe keys = %q, want both %q", keys, "yampi:880001:sale")
	}
}
