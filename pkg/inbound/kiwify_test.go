package inbound

import (
	"net/http"
	"testing"

	"github.com/convida/convida/pkg/apperr"
)

const (
	kiwifyOrderID   = "0b7f3c2e-8d41-4a9b-b5e6-1f2a3c4d5e6f"
	kiwifyRenewalID = "7e6d5c4b-3a29-4180-9f7e-6d5c4b3a2918"
	kiwifySubID     = "9a8b7c6d-5e4f-4a3b-2c1d-0e9f8a7b6c5d"
)

// kiwifySale is the event of testdata/kiwify/order-approved.json, attributed
// by the referral link's sck.
func kiwifySale() *OrderEvent {
	return &OrderEvent{
		Provider:       "kiwify",
		Kind:           KindSale,
		EventName:      "order_approved",
		OrderID:        kiwifyOrderID,
		Amount:         9790,
		Currency:       "BRL",
		ReferralCode:   "LOJ-ANA-K7PX",
		Customer:       Customer{Name: "Carla Mendes", Email: "carla.mendes@example.com", Document: "52998224725"},
		SubscriptionID: kiwifySubID,
		OccurredAt:     at("2026-11-20T12:00:00Z"), // 09:00 in São Paulo
		DedupeKey:      "kiwify:" + kiwifyOrderID + ":sale",
	}
}

func kiwifyRefund(name string) *OrderEvent {
	return with(kiwifySale(), func(e *OrderEvent) {
		e.Kind, e.EventName, e.DedupeKey = KindRefund, name, "kiwify:"+kiwifyOrderID+":refund"
	})
}

// kiwifyRenewal is the renewal's sale, whichever of its two events brings it.
func kiwifyRenewal(name string) *OrderEvent {
	return with(kiwifySale(), func(e *OrderEvent) {
		e.EventName, e.OrderID, e.DedupeKey = name, kiwifyRenewalID, "kiwify:"+kiwifyRenewalID+":sale"
		e.OccurredAt = at("2026-12-20T12:01:00Z")
	})
}

// kiwifySigned is the header the ingest builds from the query's signature
// of body under token.
func kiwifySigned(body []byte, token string) http.Header {
	h := http.Header{}
	h.Set(QueryCredentialHeader, KiwifySignature(body, token))
	return h
}

func TestKiwify(t *testing.T) {
	t.Parallel()
	approved := mustFixture(t, "kiwify/order-approved.json")
	set := func(path, value string) []byte { return edit(t, approved, path, value) }
	tracking := func(sck, src, s1 string) []byte {
		return edit(t, edit(t, set("TrackingParameters.sck", sck), "TrackingParameters.src", src), "TrackingParameters.s1", s1)
	}
	code := func(c string) *OrderEvent { return with(kiwifySale(), func(e *OrderEvent) { e.ReferralCode = c }) }

	tests := []struct {
		name   string
		body   []byte
		header http.Header // nil: signed with testKiwifyToken
		creds  Credentials
		want   want
	}{
		// fixtures: every mapped event
		{"order_approved fixture", approved, nil, testCreds, want{event: kiwifySale()}},
		{"order_refunded fixture", mustFixture(t, "kiwify/order-refunded.json"), nil, testCreds, want{event: kiwifyRefund("order_refunded")}},
		{"chargeback fixture", mustFixture(t, "kiwify/chargeback.json"), nil, testCreds, want{event: kiwifyRefund("chargeback")}},
		{"compra_aprovada renewal fixture, attributed by s1", mustFixture(t, "kiwify/compra-aprovada-renewal.json"), nil, testCreds,
			want{event: kiwifyRenewal("compra_aprovada")}},
		{"subscription_renewed fixture: the same command", mustFixture(t, "kiwify/subscription-renewed.json"), nil, testCreds,
			want{event: kiwifyRenewal("subscription_renewed")}},
		{"pix_created fixture is ignored", mustFixture(t, "kiwify/pix-created.json"), nil, testCreds, want{ignored: true}},

		// authentication, before parsing
		{"signature missing", approved, http.Header{}, testCreds, want{code: apperr.Unauthorized}},
		{"signature of another token", approved, kiwifySigned(approved, "someone_else"), testCreds, want{code: apperr.Unauthorized}},
		{"signature of another body", approved, kiwifySigned(mustFixture(t, "kiwify/chargeback.json"), testKiwifyToken), testCreds, want{code: apperr.Unauthorized}},
		{"signature not hex", approved, http.Header{QueryCredentialHeader: {"zz-not-hex"}}, testCreds, want{code: apperr.Unauthorized}},
		{"a SHA-256 signature is not Kiwify's", approved, signed(approved, testKiwifyToken), testCreds, want{code: apperr.Unauthorized}},
		{"no token configured", approved, kiwifySigned(approved, ""), Credentials{YampiWebhookSecret: testSecret}, want{code: apperr.Unauthorized}},
		{"signature in upper case", approved, http.Header{QueryCredentialHeader: {upper(KiwifySignature(approved, testKiwifyToken))}}, testCreds,
			want{event: kiwifySale()}},
		{"signed malformed JSON", []byte(`{"order_id":`), nil, testCreds, want{code: apperr.Unprocessable}},

		// attribution: a coupon, and the referral link's code: sck, then src, then s1
		{"src when sck is null", tracking("null", `"LOJ-SRC-2222"`, `"LOJ-S1-3333"`), nil, testCreds, want{event: code("LOJ-SRC-2222")}},
		{"s1 when sck and src are empty", tracking(`""`, `" "`, `"LOJ-S1-3333"`), nil, testCreds, want{event: code("LOJ-S1-3333")}},
		{"sck first", tracking(`"LOJ-SCK-1111"`, `"LOJ-SRC-2222"`, `"LOJ-S1-3333"`), nil, testCreds, want{event: code("LOJ-SCK-1111")}},
		{"a coupon field", set("coupon_code", `"CUPOM-10"`), nil, testCreds,
			want{event: with(kiwifySale(), func(e *OrderEvent) { e.CouponCode = "CUPOM-10" })}},
		{"the first coupon field", edit(t, set("coupon", `" "`), "discount_code", `"CUPOM-20"`), nil, testCreds,
			want{event: with(kiwifySale(), func(e *OrderEvent) { e.CouponCode = "CUPOM-20" })}},
		{"no code at all", tracking("null", "null", "null"), nil, testCreds, want{event: code("")}},
		{"no tracking parameters", set("TrackingParameters", ""), nil, testCreds, want{event: code("")}},

		// amounts: integer centavos
		{"charge_amount as text", set("Commissions.charge_amount", `"12345"`), nil, testCreds,
			want{event: with(kiwifySale(), func(e *OrderEvent) { e.Amount = 12345 })}},
		{"charge_amount zero", set("Commissions.charge_amount", `0`), nil, testCreds,
			want{event: with(kiwifySale(), func(e *OrderEvent) { e.Amount = 0 })}},
		{"charge_amount fractional refused", set("Commissions.charge_amount", `97.9`), nil, testCreds, want{code: apperr.Unprocessable}},
		{"charge_amount negative refused", set("Commissions.charge_amount", `-100`), nil, testCreds, want{code: apperr.Unprocessable}},
		{"charge_amount missing", set("Commissions.charge_amount", ""), nil, testCreds, want{code: apperr.Unprocessable}},
		{"charge_amount too large", set("Commissions.charge_amount", `99999999999999999999`), nil, testCreds, want{code: apperr.Unprocessable}},

		// routing and fields
		{"no event type: paid status is a sale", set("webhook_event_type", ""), nil, testCreds,
			want{event: with(kiwifySale(), func(e *OrderEvent) { e.EventName = "order_status.paid" })}},
		{"no event type: waiting_payment ignored", edit(t, set("webhook_event_type", ""), "order_status", `"waiting_payment"`), nil, testCreds, want{ignored: true}},
		{"order_id missing", set("order_id", ""), nil, testCreds, want{code: apperr.Unprocessable}},
		{"date with seconds", set("approved_date", `"2026-11-20 09:00:30"`), nil, testCreds,
			want{event: with(kiwifySale(), func(e *OrderEvent) { e.OccurredAt = at("2026-11-20T12:00:30Z") })}},
		{"date not Kiwify's", set("approved_date", `"20/11/2026"`), nil, testCreds, want{code: apperr.Unprocessable}},
		{"approved_date null: created_at", set("approved_date", "null"), nil, testCreds,
			want{event: with(kiwifySale(), func(e *OrderEvent) { e.OccurredAt = at("2026-11-20T11:59:00Z") })}},
		{"a company buyer", edit(t, set("Customer.CPF", "null"), "Customer.cnpj", `"12345678000195"`), nil, testCreds,
			want{event: with(kiwifySale(), func(e *OrderEvent) { e.Customer.Document = "12345678000195" })}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			header := tt.header
			if header == nil {
				header = kiwifySigned(tt.body, testKiwifyToken)
			}
			out, err := handle(Kiwify(), tt.body, header, tt.creds)
			checkOutcome(t, out, err, tt.want)
		})
	}
}

// KiwifySignature is Kiwify's: hex HMAC-SHA1 of the body keyed with the
// token (a vector computed with openssl dgst -sha1 -hmac).
func TestKiwifySignatureVector(t *testing.T) {
	t.Parallel()
	const want = "de7c9b85b8b78aa6bc8a7a36f70a90701c9db4d9"
	if got := KiwifySignature([]byte("The quick brown fox jumps over the lazy dog"), "key"); got != want {
		t.Errorf("KiwifySignature = %s, want %s", got, want)
	}
}

func upper(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'a' && c <= 'f' {
			b[i] = c - 'a' + 'A'
		}
	}
	return string(b)
}
