package inbound

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/convida/convida/pkg/apperr"
)

const eduzzInvoice = "91827364"

// eduzzSale is the event of testdata/eduzz/invoice-paid.json, attributed by
// the referral link's utm_content.
func eduzzSale() *OrderEvent {
	return &OrderEvent{
		Provider:   "eduzz",
		Kind:       KindSale,
		EventName:  "myeduzz.invoice_paid",
		OrderID:    eduzzInvoice,
		Amount:     49790,
		Currency:   "BRL",
		CouponCode: "LOJ-ANA-E4ZZ",
		Customer:   Customer{Name: "Renata Oliveira", Email: "renata.oliveira@example.com", Document: "39053344705"},
		OccurredAt: at("2026-11-20T12:00:00Z"),
		DedupeKey:  "eduzz:" + eduzzInvoice + ":sale",
	}
}

func eduzzRefund(name string) *OrderEvent {
	return with(eduzzSale(), func(e *OrderEvent) {
		e.Kind, e.EventName, e.DedupeKey = KindRefund, name, "eduzz:"+eduzzInvoice+":refund"
	})
}

// eduzzSigned is a header carrying body's x-signature under secret, as
// Eduzz sends it: lower-case hex.
func eduzzSigned(body []byte, secret string) http.Header {
	h := http.Header{}
	h.Set(EduzzSignatureHeader, EduzzSignature(body, secret))
	return h
}

// eduzzHeader is a header carrying signature as x-signature.
func eduzzHeader(signature string) http.Header {
	h := http.Header{}
	h.Set(EduzzSignatureHeader, signature)
	return h
}

func TestEduzz(t *testing.T) {
	t.Parallel()
	paid := mustFixture(t, "eduzz/invoice-paid.json")
	set := func(path, value string) []byte { return edit(t, paid, path, value) }
	price := func(v string) []byte { return set("data.price.value", v) }
	code := func(c string) *OrderEvent { return with(eduzzSale(), func(e *OrderEvent) { e.CouponCode = c }) }
	utm := func(content, campaign string) []byte {
		return edit(t, set("data.utm.content", content), "data.utm.campaign", campaign)
	}
	mac := hmac.New(sha256.New, []byte(testEduzzSecret))
	mac.Write(paid)
	base64MAC := base64.StdEncoding.EncodeToString(mac.Sum(nil))

	tests := []struct {
		name   string
		body   []byte
		header http.Header // nil: signed with testEduzzSecret
		creds  Credentials
		want   want
	}{
		// fixtures: every mapped event
		{"invoice_paid fixture", paid, nil, testCreds, want{event: eduzzSale()}},
		{"invoice_refunded fixture", mustFixture(t, "eduzz/invoice-refunded.json"), nil, testCreds,
			want{event: eduzzRefund("myeduzz.invoice_refunded")}},
		{"invoice_canceled fixture of a paid invoice", mustFixture(t, "eduzz/invoice-canceled.json"), nil, testCreds,
			want{event: eduzzRefund("myeduzz.invoice_canceled")}},
		{"invoice_waiting_payment fixture is ignored", mustFixture(t, "eduzz/invoice-waiting-payment.json"), nil, testCreds, want{ignored: true}},
		{"invoice_canceled of an invoice never paid is ignored",
			edit(t, mustFixture(t, "eduzz/invoice-canceled.json"), "data.paidAt", "null"), nil, testCreds, want{ignored: true}},

		// authentication, before parsing
		{"signature missing", paid, http.Header{}, testCreds, want{code: apperr.Unauthorized}},
		{"signature of another secret", paid, eduzzSigned(paid, "someone_else"), testCreds, want{code: apperr.Unauthorized}},
		{"signature of another body", paid, eduzzSigned(mustFixture(t, "eduzz/invoice-refunded.json"), testEduzzSecret), testCreds,
			want{code: apperr.Unauthorized}},
		{"signature not hex nor base64", paid, eduzzHeader("zz-not-a-signature"), testCreds, want{code: apperr.Unauthorized}},
		{"signature with trailing junk", paid, eduzzHeader(EduzzSignature(paid, testEduzzSecret) + "zz"), testCreds, want{code: apperr.Unauthorized}},
		{"signature cut short", paid, eduzzHeader(EduzzSignature(paid, testEduzzSecret)[:62]), testCreds, want{code: apperr.Unauthorized}},
		{"a SHA-1 signature is not Eduzz's", paid, eduzzHeader(KiwifySignature(paid, testEduzzSecret)), testCreds, want{code: apperr.Unauthorized}},
		{"no secret configured", paid, eduzzSigned(paid, ""), Credentials{YampiWebhookSecret: testSecret}, want{code: apperr.Unauthorized}},
		{"the secret itself is not a signature", paid, eduzzHeader(testEduzzSecret), testCreds, want{code: apperr.Unauthorized}},
		{"wrong signature beats malformed JSON", []byte(`{"event":`), eduzzHeader("00"), testCreds, want{code: apperr.Unauthorized}},
		{"signature in upper case", paid, eduzzHeader(strings.ToUpper(EduzzSignature(paid, testEduzzSecret))), testCreds,
			want{event: eduzzSale()}},
		{"signature in base64", paid, eduzzHeader(base64MAC), testCreds, want{event: eduzzSale()}},
		{"signature with spaces around", paid, eduzzHeader(" " + EduzzSignature(paid, testEduzzSecret) + " "), testCreds,
			want{event: eduzzSale()}},
		{"signed malformed JSON", []byte(`{"event":`), nil, testCreds, want{code: apperr.Unprocessable}},
		{"signed JSON that is not an object", []byte(`[1,2]`), nil, testCreds, want{code: apperr.Unprocessable}},

		// attribution: utm.content, then utm.campaign
		{"utm.campaign when content is null", utm("null", `"LOJ-CAMP-2222"`), nil, testCreds, want{event: code("LOJ-CAMP-2222")}},
		{"utm.campaign when content is blank", utm(`"  "`, `"LOJ-CAMP-2222"`), nil, testCreds, want{event: code("LOJ-CAMP-2222")}},
		{"utm.content first", utm(`"LOJ-CONT-1111"`, `"LOJ-CAMP-2222"`), nil, testCreds, want{event: code("LOJ-CONT-1111")}},
		{"code trimmed", utm(`"  LOJ-ANA-E4ZZ "`, "null"), nil, testCreds, want{event: eduzzSale()}},
		{"no code at all", utm("null", "null"), nil, testCreds, want{event: code("")}},
		{"utm null", set("data.utm", "null"), nil, testCreds, want{event: code("")}},
		{"utm absent", set("data.utm", ""), nil, testCreds, want{event: code("")}},

		// amounts: reais, the JSON number's text, exactly
		{"integer price", price(`97`), nil, testCreds, want{event: with(eduzzSale(), func(e *OrderEvent) { e.Amount = 9700 })}},
		{"0.29 exactly", price(`0.29`), nil, testCreds, want{event: with(eduzzSale(), func(e *OrderEvent) { e.Amount = 29 })}},
		{"1157.70 exactly", price(`1157.7`), nil, testCreds, want{event: with(eduzzSale(), func(e *OrderEvent) { e.Amount = 115770 })}},
		{"zero", price(`0`), nil, testCreds, want{event: with(eduzzSale(), func(e *OrderEvent) { e.Amount = 0 })}},
		{"three decimals refused", price(`97.999`), nil, testCreds, want{code: apperr.Unprocessable}},
		{"negative refused", price(`-1`), nil, testCreds, want{code: apperr.Unprocessable}},
		{"exponent refused", price(`1e3`), nil, testCreds, want{code: apperr.Unprocessable}},
		{"price missing", set("data.price.value", ""), nil, testCreds, want{code: apperr.Unprocessable}},
		{"price not a number", price(`true`), nil, testCreds, want{code: apperr.Unprocessable}},

		// fields
		{"another currency", set("data.price.currency", `"usd"`), nil, testCreds,
			want{event: with(eduzzSale(), func(e *OrderEvent) { e.Currency = "USD" })}},
		{"no currency: BRL", set("data.price.currency", ""), nil, testCreds, want{event: eduzzSale()}},
		{"invoice id as an integer", set("data.id", eduzzInvoice), nil, testCreds, want{event: eduzzSale()}},
		{"invoice id missing", set("data.id", ""), nil, testCreds, want{code: apperr.Unprocessable}},
		{"invoice id over 255 characters", set("data.id", `"`+strings.Repeat("9", 256)+`"`), nil, testCreds, want{code: apperr.Unprocessable}},
		{"buyer null", set("data.buyer", "null"), nil, testCreds,
			want{event: with(eduzzSale(), func(e *OrderEvent) { e.Customer = Customer{} })}},
		{"paidAt absent: sentDate", set("data.paidAt", ""), nil, testCreds,
			want{event: with(eduzzSale(), func(e *OrderEvent) { e.OccurredAt = at("2026-11-20T12:00:04.512Z") })}},
		{"paidAt with an offset", set("data.paidAt", `"2026-11-20T09:00:00-03:00"`), nil, testCreds, want{event: eduzzSale()}},
		{"paidAt not RFC 3339", set("data.paidAt", `"20/11/2026 09:00"`), nil, testCreds, want{code: apperr.Unprocessable}},
		{"no times: the receipt time", edit(t, set("data.paidAt", "null"), "sentDate", ""), nil, testCreds,
			want{event: with(eduzzSale(), func(e *OrderEvent) { e.OccurredAt = at("0001-01-01T00:00:00Z") })}},
		{"event in upper case", set("event", `"MYEDUZZ.INVOICE_PAID"`), nil, testCreds, want{event: eduzzSale()}},
		{"unknown event ignored", set("event", `"myeduzz.invoice_expired"`), nil, testCreds, want{ignored: true}},
		{"no event ignored", set("event", ""), nil, testCreds, want{ignored: true}},
		{"an ignored event needs no invoice fields", []byte(`{"id":"x","event":"myeduzz.contract_created","data":{}}`), nil, testCreds,
			want{ignored: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			header := tt.header
			if header == nil {
				header = eduzzSigned(tt.body, testEduzzSecret)
			}
			out, err := handle(Eduzz(), tt.body, header, tt.creds)
			checkOutcome(t, out, err, tt.want)
		})
	}
}

// EduzzSignature is HMAC-SHA256 in lower-case hex (a vector computed with
// openssl dgst -sha256 -hmac).
func TestEduzzSignatureVector(t *testing.T) {
	t.Parallel()
	const want = "f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8"
	if got := EduzzSignature([]byte("The quick brown fox jumps over the lazy dog"), "key"); got != want {
		t.Errorf("EduzzSignature = %s, want %s", got, want)
	}
}

// The buyer's texts and the code are cut to their bounds, never refused.
func TestEduzzTextIsCut(t *testing.T) {
	t.Parallel()
	huge := strings.Repeat("<", 199) + strings.Repeat("ç", 179_801)
	body := mustFixture(t, "eduzz/invoice-paid.json")
	for _, path := range []string{"data.buyer.name", "data.buyer.email", "data.buyer.document", "data.utm.content", "data.price.currency"} {
		body = edit(t, body, path, jsonText(huge))
	}
	out, err := handle(Eduzz(), body, eduzzSigned(body, testEduzzSecret), testCreds)
	if err != nil || out.Event == nil {
		t.Fatalf("Handle = %+v, %v; want the event, its values cut", out, err)
	}
	ev := out.Event
	for _, f := range []struct {
		name string
		got  string
		max  int
	}{
		{"name", ev.Customer.Name, 200}, {"email", ev.Customer.Email, 254}, {"document", ev.Customer.Document, 255},
		{"code", ev.CouponCode, 255}, {"currency", strings.ToLower(ev.Currency), 255},
	} {
		if n := utf8.RuneCountInString(f.got); n != f.max || !utf8.ValidString(f.got) || !strings.HasPrefix(strings.ToLower(huge), f.got) {
			t.Errorf("%s: %d characters (valid UTF-8 %v), want the first %d of the value", f.name, n, utf8.ValidString(f.got), f.max)
		}
	}
}
