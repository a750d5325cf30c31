package e2e

import (
	"bytes"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/ids"
)

// TestEduzzWebhooks runs Eduzz through the whole pipeline, every request
// and answer validated against the OpenAPI document: the integration is
// set through the API; the member's referral link carries her code in
// utm_content, and a signed invoice_paid bringing it back credits her
// once, to the cent; a resend is a duplicate; a wrong or missing
// x-signature is 401; invoice_refunded reverses, and a cancellation after
// it is the same refund; an invoice waiting for payment, or canceled
// before it was paid, changes nothing; reconciling Eduzz is 422 saying
// why; an erased member has no link.
func TestEduzzWebhooks(t *testing.T) {
	t.Parallel()
	s, tn, ana := startWithAna(t, stackOptions{}, 1500)
	api, in := newChecker(t, s.apiURL), newChecker(t, s.ingestURL)
	const secret = "eduzz-webhook-secret-LMNO"
	tn.eduzzSecret = secret

	// The merchant sets Eduzz up through the API: the secret is masked.
	r := api.expect(t, probe{http.MethodPut, "/api/v1/integrations/eduzz", jsonBody(map[string]any{"webhook_secret": secret,
		"checkout_url": "https://sun.eduzz.com/2384756?utm_source=insta"}), keyed(tn.apiKey)}, 200, "")
	if d := r.data(); d["webhook_secret"] != "****LMNO" || !strings.HasSuffix(d["webhook_url"].(string), "/api/webhooks/eduzz/"+tn.merchant.ID.String()) {
		t.Errorf("PUT /integrations/eduzz = %v", r.body)
	}
	api.expect(t, probe{http.MethodGet, "/api/v1/integrations/eduzz", nil, keyed(tn.apiKey)}, 200, "")

	// Her link carries her code in utm_content, its other parameters kept.
	r = api.expect(t, probe{http.MethodGet, "/api/v1/members/" + ids.Format(ids.Member, ana.ID), nil, keyed(tn.apiKey)}, 200, "")
	link, _ := r.data()["referral_links"].(map[string]any)["eduzz"].(string)
	u, err := url.Parse(link)
	if err != nil || u.Host != "sun.eduzz.com" || u.Query().Get("utm_source") != "insta" || u.Query().Get("utm_content") != ana.CouponCode {
		t.Fatalf("referral_links.eduzz = %q, want the checkout link with utm_content=%s", link, ana.CouponCode)
	}

	path := "/api/webhooks/eduzz/" + tn.merchant.ID.String()
	invoice := func(file, id string) []byte {
		return fixture(t, file, map[string]any{"data.id": id, "data.utm.content": u.Query().Get("utm_content")})
	}
	post := func(body []byte, signature string, status int, code string) reply {
		t.Helper()
		return in.expect(t, probe{http.MethodPost, path, body, eduzzHeader(signature)}, status, code)
	}
	wantOutcome := func(r reply, want string) {
		t.Helper()
		if got, _ := r.body["status"].(string); got != want {
			t.Errorf("answer %v, want status %q", r.body, want)
		}
	}

	// R$ 1157.70, which a float would make 115769 cents.
	paid := fixture(t, eduzzPaid, map[string]any{"data.id": "ez-e2e-0001", "data.utm.content": u.Query().Get("utm_content"),
		"data.price.value": 1157.7})
	wantOutcome(post(paid, eduzzSign(secret, paid), 200, ""), "accepted")
	wantOutcome(post(paid, eduzzSign(secret, paid), 200, ""), "duplicate")
	// Eduzz's hex in upper case is the same signature: still the same sale.
	wantOutcome(post(paid, strings.ToUpper(eduzzSign(secret, paid)), 200, ""), "duplicate")
	waiting := invoice("eduzz/invoice-waiting-payment.json", "ez-e2e-0002")
	wantOutcome(post(waiting, eduzzSign(secret, waiting), 200, ""), "ignored")
	unpaid := fixture(t, "eduzz/invoice-canceled.json", map[string]any{"data.id": "ez-e2e-0002", "data.paidAt": nil,
		"data.utm.content": ana.CouponCode})
	wantOutcome(post(unpaid, eduzzSign(secret, unpaid), 200, ""), "ignored")
	s.waitBalance(tn, ana.Email, wallet{totalEarned: 1500, pending: 1500})
	if got := s.count(`SELECT order_value FROM referrals WHERE merchant_id = $1 AND source = 'eduzz' AND order_id = 'ez-e2e-0001'`,
		tn.merchant.ID); got != 115770 {
		t.Errorf("order_value = %d, want 115770", got)
	}

	// Refused: nothing changes.
	other := invoice(eduzzPaid, "ez-e2e-0003")
	post(other, "", 401, "unauthorized")
	post(other, eduzzSign("another-secret", other), 401, "unauthorized")
	post(other, eduzzSign(secret, paid), 401, "unauthorized")   // another body's
	post(other, kiwifySign(secret, other), 401, "unauthorized") // Kiwify's HMAC-SHA1 is not Eduzz's
	fractional := fixture(t, eduzzPaid, map[string]any{"data.id": "ez-e2e-0004", "data.price.value": 97.999})
	post(fractional, eduzzSign(secret, fractional), 422, "invalid_payload")
	huge := append([]byte(`{"event":"myeduzz.invoice_paid","pad":"`), bytes.Repeat([]byte("a"), 1<<20)...)
	huge = append(huge, `"}`...)
	post(huge, eduzzSign(secret, huge), 413, "payload_too_large")
	in.expect(t, probe{http.MethodPost, "/api/webhooks/eduzz/" + uuid.NewString(), paid, eduzzHeader(eduzzSign(secret, paid))}, 404, "not_found")

	// The refund reverses; the cancellation of the refunded invoice is the
	// same refund.
	refunded := invoice("eduzz/invoice-refunded.json", "ez-e2e-0001")
	wantOutcome(post(refunded, eduzzSign(secret, refunded), 200, ""), "accepted")
	canceled := invoice("eduzz/invoice-canceled.json", "ez-e2e-0001")
	wantOutcome(post(canceled, eduzzSign(secret, canceled), 200, ""), "duplicate")
	s.waitBalance(tn, ana.Email, wallet{cancelled: 1500})
	if got := s.count(`SELECT count(*) FROM referrals WHERE merchant_id = $1`, tn.merchant.ID); got != 1 {
		t.Errorf("referrals = %d, want 1", got)
	}
	// Each delivery is recorded with its signature (which cannot give the
	// secret away), never the secret.
	s.waitRecords(tn, 13) // every delivery but the 404
	if got := s.count(`SELECT count(*) FROM inbound_deliveries WHERE merchant_id = $1
  AND (position($2::bytea in body) > 0 OR position($3 in headers::text) > 0)`, tn.merchant.ID, []byte(secret), secret); got != 0 {
		t.Errorf("%d delivery records hold the secret", got)
	}
	if got := s.count(`SELECT count(*) FROM inbound_deliveries WHERE merchant_id = $1 AND headers::text LIKE '%x-signature%'`,
		tn.merchant.ID); got < 10 {
		t.Errorf("%d delivery records keep the x-signature, want every signed one", got)
	}

	// Eduzz has no pull: reconciling it is 422, saying why.
	r = api.expect(t, probe{http.MethodPost, "/api/v1/integrations/eduzz/reconcile", nil, keyed(tn.apiKey)}, 422, "invalid_payload")
	if msg, _ := r.body["error"].(map[string]any)["message"].(string); !strings.HasPrefix(msg, "Eduzz sales cannot be reconciled: ") {
		t.Errorf("reconcile eduzz: %q, want it to say why", msg)
	}

	// An erased member has no link.
	bia := s.newMember(tn, "bia@example.com", "Bia Lima")
	biaPath := "/api/v1/members/" + ids.Format(ids.Member, bia.ID)
	api.expect(t, probe{http.MethodPost, biaPath + "/erase", nil, keyed(tn.apiKey)}, 200, "")
	r = api.expect(t, probe{http.MethodGet, biaPath, nil, keyed(tn.apiKey)}, 200, "")
	if links, _ := r.data()["referral_links"].(map[string]any); links == nil || links["eduzz"] != nil {
		t.Errorf("an erased member's referral_links = %v, want eduzz null", r.data()["referral_links"])
	}

	in.v.WantExercised(t, ex("receiveEduzzWebhook", 200), ex("receiveEduzzWebhook", 401), ex("receiveEduzzWebhook", 404),
		ex("receiveEduzzWebhook", 413), ex("receiveEduzzWebhook", 422))
	api.v.WantExercised(t, ex("putIntegration", 200), ex("getIntegration", 200), ex("reconcileIntegration", 422))
}
