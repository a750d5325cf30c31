package inbound

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/provider"
)

// FuzzGuru checks that Guru never panics and only fails with Unauthorized or
// Unprocessable. The seeds carry the test token, so mutations reach the mapping.
func FuzzGuru(f *testing.F) {
	for _, name := range []string{"transaction-approved.json", "transaction-refunded.json", "transaction-waiting-payment.json"} {
		body := guruFixture(f, name, testToken)
		f.Add(body)
		f.Add(edit(f, body, "payment.coupon", "[]"))
		f.Add(edit(f, body, "status", `"chargeback"`))
	}
	f.Add([]byte(`{"api_token":"` + testToken + `","webhook_type":"transaction","status":"approved","id":1,"payment":{"total":0.5}}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, body []byte) {
		out, err := handle(Guru(), body, nil, testCreds)
		checkFuzzed(t, provider.Guru, out, err)
	})
}

// FuzzYampi checks the same for Yampi. An empty sig signs the body with the
// test secret, so mutations reach the parser; any other sig is sent as is.
func FuzzYampi(f *testing.F) {
	for _, name := range []string{"order-paid.json", "order-paid-no-coupon.json", "order-status-updated-refunded.json", "hmac-vector.json"} {
		f.Add(mustFixture(f, "yampi/"+name), "")
	}
	refunded := mustFixture(f, "yampi/order-status-updated-refunded.json")
	f.Add(edit(f, refunded, "resource.status.data.alias", `"paid"`), "")
	f.Add(edit(f, refunded, "resource.promocode.data", "null"), "")
	f.Add([]byte(`{"event":"order.paid","resource":{"id":"1","value_total":1}}`), "JSysvaBVeW+xQOgpqpBuBB3DFLekghtemr0JAtZp4vQ=")
	f.Fuzz(func(t *testing.T, body []byte, sig string) {
		header := http.Header{}
		header.Set(YampiSignatureHeader, sig)
		if sig == "" {
			header = signed(body, testSecret)
		}
		out, err := handle(Yampi(), body, header, testCreds)
		checkFuzzed(t, provider.Yampi, out, err)
	})
}

// checkFuzzed asserts the invariants of any Handle result.
func checkFuzzed(t *testing.T, provider string, out Outcome, err error) {
	t.Helper()
	if err != nil {
		var e *apperr.Error
		if !errors.As(err, &e) || (e.Code != apperr.Unauthorized && e.Code != apperr.Unprocessable) {
			t.Fatalf("Handle() error = %#v, want an *apperr.Error with code unauthorized or unprocessable", err)
		}
		if out != (Outcome{}) {
			t.Fatalf("Handle() = %+v with error %v, want the zero Outcome", out, err)
		}
		return
	}
	if out.Ignored {
		if out.Event != nil || out.Reason == "" {
			t.Fatalf("ignored Outcome = %+v, want no event and a reason", out)
		}
		return
	}
	ev := out.Event
	switch {
	case ev == nil:
		t.Fatalf("Handle() = %+v, nil; want an event or Ignored", out)
	case ev.Provider != provider || (ev.Kind != KindSale && ev.Kind != KindRefund):
		t.Fatalf("event %+v: wrong provider or kind", ev)
	case ev.OrderID == "" || ev.Amount < 0 || ev.Currency == "":
		t.Fatalf("event %+v: missing order id, currency or negative amount", ev)
	case ev.DedupeKey != provider+":"+ev.OrderID+":"+string(ev.Kind):
		t.Fatalf("event %+v: dedupe key %q", ev, ev.DedupeKey)
	case !ev.OccurredAt.IsZero() && ev.OccurredAt.Location() != time.UTC:
		t.Fatalf("event %+v: OccurredAt not in UTC", ev)
	case ev.CouponCode != strings.TrimSpace(ev.CouponCode) || ev.ReferralCode != strings.TrimSpace(ev.ReferralCode) ||
		ev.Customer.Email != strings.TrimSpace(ev.Customer.Email):
		t.Fatalf("event %+v: untrimmed coupon, referral code or email", ev)
	}
}
