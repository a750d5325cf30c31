package e2e

import (
	"bytes"
	"net/http"
	"net/url"
	"testing"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/ids"
)

// TestHotmartKiwifyWebhooks runs both platforms' webhooks through the whole
// pipeline, every request and answer validated against the OpenAPI
// document: a Hotmart sale by coupon and a Kiwify sale by the member's
// referral link (sck) credit her, amounts exact to the cent; a repeat, a
// PURCHASE_COMPLETE and a renewal's second event change nothing; a refund
// and a chargeback reverse; a wrong or missing hottok or signature is 401.
func TestHotmartKiwifyWebhooks(t *testing.T) {
	t.Parallel()
	s, tn, ana := startWithAna(t, stackOptions{}, 1500)
	s.withHotmartKiwify(tn, "https://pay.kiwify.com.br/AbC123x?utm_source=insta")
	in := newChecker(t, s.ingestURL)
	hotmartPath := "/api/webhooks/hotmart/" + tn.merchant.ID.String()
	hotmart := func(file string, set map[string]any) []byte {
		base := map[string]any{"data.purchase.transaction": "HP-E2E-0001", "data.purchase.offer.coupon_code": ana.CouponCode}
		for k, v := range set {
			base[k] = v
		}
		return fixture(t, file, base)
	}
	postHotmart := func(body []byte, hottok string, status int, code string) reply {
		t.Helper()
		h := map[string]string{"Content-Type": "application/json"}
		if hottok != "" {
			h["X-HOTMART-HOTTOK"] = hottok
		}
		return in.expect(t, probe{http.MethodPost, hotmartPath, body, h}, status, code)
	}
	postKiwify := func(body []byte, signature string, status int, code string) reply {
		t.Helper()
		return in.expect(t, probe{http.MethodPost, kiwifyPath(tn, signature), body,
			map[string]string{"Content-Type": "application/json"}}, status, code)
	}
	wantOutcome := func(r reply, want string) {
		t.Helper()
		if got, _ := r.body["status"].(string); got != want {
			t.Errorf("answer %v, want status %q", r.body, want)
		}
	}

	// The member's Kiwify link carries her code in sck: the sale made
	// through it brings that sck back.
	_, member := s.api(tn, http.MethodGet, "/members/"+ids.Format(ids.Member, ana.ID), nil)
	link, _ := member["data"].(map[string]any)["referral_links"].(map[string]any)["kiwify"].(string)
	u, err := url.Parse(link)
	if err != nil || u.Host != "pay.kiwify.com.br" || u.Query().Get("utm_source") != "insta" || u.Query().Get("sck") != ana.CouponCode {
		t.Fatalf("referral_links.kiwify = %q, want the checkout link with sck=%s", link, ana.CouponCode)
	}
	kiwify := func(file, orderID string) []byte {
		return fixture(t, file, map[string]any{"order_id": orderID, "TrackingParameters.sck": u.Query().Get("sck")})
	}

	// Sales: Hotmart by coupon (R$ 1157.70, which a float would make
	// 115769 cents), Kiwify by link (9790 centavos).
	approved := hotmart(hotmartPaid, map[string]any{"data.purchase.price.value": 1157.7})
	wantOutcome(postHotmart(approved, tn.hottok, 200, ""), "accepted")
	wantOutcome(postHotmart(approved, tn.hottok, 200, ""), "duplicate")
	wantOutcome(postHotmart(hotmart("hotmart/purchase-complete.json", map[string]any{"data.purchase.price.value": 1157.7}), tn.hottok, 200, ""), "duplicate")
	wantOutcome(postHotmart(hotmart("hotmart/purchase-protest.json", nil), tn.hottok, 200, ""), "ignored")
	sale := kiwify(kiwifyPaid, "kw-e2e-0001")
	wantOutcome(postKiwify(sale, kiwifySign(tn.kiwifyToken, sale), 200, ""), "accepted")
	wantOutcome(postKiwify(sale, kiwifySign(tn.kiwifyToken, sale), 200, ""), "duplicate")
	// A renewal is a new order_id, credited once whichever of its two events comes.
	renewal := kiwify("kiwify/compra-aprovada-renewal.json", "kw-e2e-0002")
	renewed := kiwify("kiwify/subscription-renewed.json", "kw-e2e-0002")
	wantOutcome(postKiwify(renewal, kiwifySign(tn.kiwifyToken, renewal), 200, ""), "accepted")
	wantOutcome(postKiwify(renewed, kiwifySign(tn.kiwifyToken, renewed), 200, ""), "duplicate")
	s.waitBalance(tn, ana.Email, wallet{totalEarned: 4500, pending: 4500})
	for order, want := range map[string]int{"hotmart/HP-E2E-0001": 115770, "kiwify/kw-e2e-0001": 9790, "kiwify/kw-e2e-0002": 9790} {
		source, id, _ := bytes.Cut([]byte(order), []byte("/"))
		if got := s.count(`SELECT order_value FROM referrals WHERE merchant_id = $1 AND source = $2 AND order_id = $3`,
			tn.merchant.ID, string(source), string(id)); got != want {
			t.Errorf("%s: order_value = %d, want %d", order, got, want)
		}
	}

	// Refunds reverse; a chargeback after the refund of one transaction is
	// the same refund.
	wantOutcome(postHotmart(hotmart("hotmart/purchase-refunded.json", nil), tn.hottok, 200, ""), "accepted")
	wantOutcome(postHotmart(hotmart("hotmart/purchase-chargeback.json", nil), tn.hottok, 200, ""), "duplicate")
	chargeback := kiwify("kiwify/chargeback.json", "kw-e2e-0001")
	wantOutcome(postKiwify(chargeback, kiwifySign(tn.kiwifyToken, chargeback), 200, ""), "accepted")
	s.waitBalance(tn, ana.Email, wallet{totalEarned: 1500, pending: 1500, cancelled: 3000})

	// Refused: nothing changes.
	postHotmart(approved, "hottok-of-someone-else", 401, "unauthorized")
	postHotmart(approved, "", 401, "unauthorized")
	other := kiwify(kiwifyPaid, "kw-e2e-0003")
	postKiwify(other, kiwifySign("another-token", other), 401, "unauthorized")
	postKiwify(other, kiwifySign(tn.kiwifyToken, sale), 401, "unauthorized") // another body's
	postKiwify(other, "", 401, "unauthorized")
	// A signature sent as a header instead of the query proves nothing.
	in.expect(t, probe{http.MethodPost, kiwifyPath(tn, ""), other, map[string]string{"Content-Type": "application/json",
		"X-Convida-Kiwify-Signature": kiwifySign(tn.kiwifyToken, other)}}, 401, "unauthorized")
	postHotmart(hotmart(hotmartPaid, map[string]any{"data.purchase.transaction": "HP-E2E-0002", "data.purchase.price.value": 97.999}),
		tn.hottok, 422, "invalid_payload")
	fractional := fixture(t, kiwifyPaid, map[string]any{"order_id": "kw-e2e-0004", "Commissions.charge_amount": "97.9"})
	postKiwify(fractional, kiwifySign(tn.kiwifyToken, fractional), 422, "invalid_payload")
	huge := append([]byte(`{"event":"PURCHASE_APPROVED","pad":"`), bytes.Repeat([]byte("a"), 1<<20)...)
	huge = append(huge, `"}`...)
	postHotmart(huge, tn.hottok, 413, "payload_too_large")
	postKiwify(huge, kiwifySign(tn.kiwifyToken, huge), 413, "payload_too_large")
	unknown := map[string]string{"Content-Type": "application/json", "X-HOTMART-HOTTOK": tn.hottok}
	in.expect(t, probe{http.MethodPost, "/api/webhooks/hotmart/" + uuid.NewString(), approved, unknown}, 404, "not_found")
	in.expect(t, probe{http.MethodPost, "/api/webhooks/kiwify/" + uuid.NewString() + "?signature=" + kiwifySign(tn.kiwifyToken, sale), sale,
		map[string]string{"Content-Type": "application/json"}}, 404, "not_found")
	s.waitBalance(tn, ana.Email, wallet{totalEarned: 1500, pending: 1500, cancelled: 3000})
	if got := s.count(`SELECT count(*) FROM referrals WHERE merchant_id = $1`, tn.merchant.ID); got != 3 {
		t.Errorf("referrals = %d, want 3", got)
	}
	// The hottok is never kept in the delivery records.
	s.waitRecords(tn, 21) // every delivery but the 404s
	if got := s.count(`SELECT count(*) FROM inbound_deliveries WHERE merchant_id = $1
  AND (position($2::bytea in body) > 0 OR position($3 in headers::text) > 0)`, tn.merchant.ID, []byte(tn.hottok), tn.hottok); got != 0 {
		t.Errorf("%d delivery records hold the hottok", got)
	}
	for _, op := range []string{"receiveHotmartWebhook", "receiveKiwifyWebhook"} {
		in.v.WantExercised(t, ex(op, 200), ex(op, 401), ex(op, 404), ex(op, 413), ex(op, 422))
	}
}
