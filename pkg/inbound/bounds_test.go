package inbound

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/convida/convida/pkg/apperr"
)

// jsonText is s as a JSON string.
func jsonText(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestPlatformTextIsCutNeverRefused inflates the buyer's name, e-mail and
// document, the coupon, the subscription and the currency of every sale and
// refund fixture (pkg/inbound/testdata, the same bytes as
// /work/shared/fixtures) far beyond their bounds: the delivery is still
// mapped, each value cut to its bound at a character boundary, so the event
// stays small.
func TestPlatformTextIsCutNeverRefused(t *testing.T) {
	t.Parallel()
	// 180,000 characters, some of two bytes, with a two-byte character
	// across each bound.
	huge := strings.Repeat("<", 199) + strings.Repeat("ç", 179_801)
	type field struct {
		path string // in the body
		max  int
		got  func(*OrderEvent) string
	}
	name := func(ev *OrderEvent) string { return ev.Customer.Name }
	email := func(ev *OrderEvent) string { return ev.Customer.Email }
	doc := func(ev *OrderEvent) string { return ev.Customer.Document }
	coupon := func(ev *OrderEvent) string { return ev.CouponCode }
	guruFields := []field{
		{"contact.name", 200, name}, {"contact.email", 254, email}, {"contact.doc", 255, doc},
		{"payment.coupon.coupon_code", 255, coupon},
		{"subscription.id", 255, func(ev *OrderEvent) string { return ev.SubscriptionID }},
		{"payment.currency", 255, func(ev *OrderEvent) string { return strings.ToLower(ev.Currency) }},
	}
	yampiFields := []field{
		{"resource.customer.data.name", 200, name}, {"resource.customer.data.email", 254, email},
		{"resource.customer.data.cpf", 255, doc}, {"resource.promocode.data.code", 255, coupon},
	}
	for _, fx := range []struct {
		name   string
		fields []field
	}{
		{"guru/transaction-approved.json", guruFields},
		{"guru/transaction-refunded.json", guruFields},
		{"yampi/order-paid.json", yampiFields},
		{"yampi/order-status-updated-refunded.json", yampiFields},
	} {
		t.Run(fx.name, func(t *testing.T) {
			t.Parallel()
			body := mustFixture(t, fx.name)
			if strings.HasPrefix(fx.name, "guru/") {
				body = guruFixture(t, strings.TrimPrefix(fx.name, "guru/"), testToken)
			}
			for _, f := range fx.fields {
				body = edit(t, body, f.path, jsonText(huge))
			}
			out, err := handle(Guru(), body, nil, testCreds)
			if strings.HasPrefix(fx.name, "yampi/") {
				out, err = handle(Yampi(), body, signed(body, testSecret), testCreds)
			}
			if err != nil || out.Event == nil {
				t.Fatalf("Handle = %+v, %v; want the event, its values cut", out, err)
			}
			for _, f := range fx.fields {
				got := f.got(out.Event)
				if n := utf8.RuneCountInString(got); n != f.max || !utf8.ValidString(got) || !strings.HasPrefix(strings.ToLower(huge), got) {
					t.Errorf("%s: %d characters (valid UTF-8 %v), want the first %d of the value", f.path, n, utf8.ValidString(got), f.max)
				}
			}
			if b, _ := json.Marshal(out.Event); len(b) > 8<<10 {
				t.Errorf("the event encodes to %d bytes, want it small", len(b))
			}
		})
	}
}

// TestOrderIDIsBounded: the order id is the dedupe key, so a long one is
// refused (cutting it could make two orders one), and one at the bound is
// kept whole.
func TestOrderIDIsBounded(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		length int
		code   apperr.Code
	}{{255, ""}, {256, apperr.Unprocessable}, {180_000, apperr.Unprocessable}} {
		id := strings.Repeat("9", tc.length)
		guru := edit(t, guruFixture(t, "transaction-approved.json", testToken), "id", jsonText(id))
		yampi := edit(t, mustFixture(t, "yampi/order-paid.json"), "resource.id", id) // an integer
		gOut, gErr := handle(Guru(), guru, nil, testCreds)
		yOut, yErr := handle(Yampi(), yampi, signed(yampi, testSecret), testCreds)
		for _, r := range []struct {
			provider, field string
			out             Outcome
			err             error
		}{{"guru", "id", gOut, gErr}, {"yampi", "resource.id", yOut, yErr}} {
			switch {
			case tc.code == "" && (r.err != nil || r.out.Event == nil || r.out.Event.OrderID != id):
				t.Errorf("%s, an id of %d digits: %+v, %v; want it kept whole", r.provider, tc.length, r.out, r.err)
			case tc.code != "" && (apperr.CodeOf(r.err) != tc.code || !strings.HasPrefix(apperr.MessageOf(r.err), r.field+": must be at most 255 characters")):
				t.Errorf("%s, an id of %d digits: %v; want %s naming %s", r.provider, tc.length, r.err, tc.code, r.field)
			}
		}
	}
}

// TestIgnoredReasonIsValidText: the reason of an ignored delivery repeats
// at most 64 characters of the platform's value, cut at a character
// boundary (it is stored as text, which must be valid UTF-8).
func TestIgnoredReasonIsValidText(t *testing.T) {
	t.Parallel()
	status := strings.Repeat("a", 63) + strings.Repeat("ã", 10_000)
	body := edit(t, guruFixture(t, "transaction-approved.json", testToken), "status", strconv.Quote(status))
	out, err := handle(Guru(), body, nil, testCreds)
	if err != nil || !out.Ignored {
		t.Fatalf("Handle = %+v, %v; want ignored", out, err)
	}
	if !utf8.ValidString(out.Reason) || !strings.Contains(out.Reason, strings.Repeat("a", 63)+"ã...") || len(out.Reason) > 200 {
		t.Errorf("reason = %q, want valid UTF-8 with the status cut to 64 characters", out.Reason)
	}
}
