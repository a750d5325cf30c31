package e2e

import (
	"bytes"
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/convida/convida/pkg/ids"
	"github.com/convida/convida/pkg/merchant"
	"github.com/convida/convida/pkg/testenv"
)

// TestHugeMemberNameRefused: a member name of 180,000 "<" (sent as raw
// bytes, 180,000 of them) is refused wherever a member is created or
// renamed, by the API (400 validation_error naming name), the member-facing
// auto-creation (400 VALIDATION_ERROR) and the dashboard's forms (413: over
// the 64 KiB of a form; 201 characters: 422 with the rule shown), and
// nothing is stored or published; metadata is bounded at 16 KiB once
// encoded.
func TestHugeMemberNameRefused(t *testing.T) {
	t.Parallel()
	b := startBounds(t)
	huge := strings.Repeat("<", 180_000)
	anaPath := "/api/v1/members/" + ids.Format(ids.Member, b.ana.ID)
	const wantMsg = "name: must be at most 200 characters"
	before := b.snapshot()

	body := map[string]any{"email": "bruno@example.com", "name": huge}
	if raw := encode(body); bytes.Count(raw, []byte("<")) != 180_000 {
		t.Fatalf("the body carries %d raw '<', want 180,000", bytes.Count(raw, []byte("<")))
	}
	if status, code, msg := b.call(http.MethodPost, "/api/v1/members", body); status != 400 || code != "validation_error" || msg != wantMsg {
		t.Errorf("POST /members: %d %s %q, want 400 validation_error %q", status, code, msg, wantMsg)
	}
	if status, code, msg := b.call(http.MethodPatch, anaPath, map[string]any{"name": huge}); status != 400 || code != "validation_error" || msg != wantMsg {
		t.Errorf("PATCH /members/{id}: %d %s %q, want 400 validation_error %q", status, code, msg, wantMsg)
	}
	me := "/api/v1/member/me?autoCreate=true&email=carla%40example.com&name=" + strings.Repeat("%3C", 180_000)
	if status, code, msg := b.call(http.MethodGet, me, nil); status != 400 || code != "VALIDATION_ERROR" || msg != wantMsg {
		t.Errorf("GET /member/me?autoCreate=true: %d %s %q, want 400 VALIDATION_ERROR %q", status, code, msg, wantMsg)
	}

	email, password := dashboardUser(t, b.s.deps.Pool, b.tn.merchant.ID, merchant.RoleOwner)
	dash := signedIn(t, b.s.apiURL, email, password)
	// The dashboard's forms: the huge name is over the 64 KiB a form may
	// carry (413, read no further); one character over the name's bound
	// is refused by the rule, shown on the form.
	for path, form := range map[string]url.Values{
		"/dashboard/members":                      {"email": {"dora@example.com"}},
		"/dashboard/members/" + b.ana.ID.String(): {"campaign": {b.tn.campaign.ID.String()}},
	} {
		form.Set("name", huge)
		if status, _ := dash.do(http.MethodPost, path, form); status != http.StatusRequestEntityTooLarge {
			t.Errorf("POST %s with 180,000 '<': %d, want 413", path, status)
		}
		form.Set("name", strings.Repeat("<", 201))
		// The dashboard words the rule in the reader's language, never
		// with the API's English message.
		if status, page := dash.do(http.MethodPost, path, form); status != http.StatusUnprocessableEntity ||
			!strings.Contains(page, "200 characters") && !strings.Contains(page, "200 caracteres") {
			t.Errorf("POST %s with 201 '<': %d, want 422 saying at most 200 characters", path, status)
		}
	}
	// The dashboard's redemption counts the subscription id in characters.
	needSubscription := func(page string) bool {
		return strings.Contains(page, "(at most 255 characters)") || strings.Contains(page, "(até 255 caracteres)")
	}
	redeem := url.Values{"amount": {"5,00"}, "type": {"subscription_discount"}, "key": {"bounds-1"}}
	redeem.Set("subscription_id", strings.Repeat("ç", 256))
	if status, page := dash.do(http.MethodPost, "/dashboard/members/"+b.ana.ID.String()+"/redeem", redeem); status != http.StatusUnprocessableEntity ||
		!needSubscription(page) {
		t.Errorf("a dashboard redemption's subscription id of 256 characters: %d, want 422 saying at most 255", status)
	}
	if after := b.snapshot(); after != before {
		t.Error("a refused name stored something")
	}
	redeem.Set("subscription_id", strings.Repeat("ç", 255)) // 510 bytes: not refused for its length
	if status, page := dash.do(http.MethodPost, "/dashboard/members/"+b.ana.ID.String()+"/redeem", redeem); status != http.StatusUnprocessableEntity ||
		needSubscription(page) {
		t.Errorf("a dashboard redemption's subscription id of 255 characters: %d, want refused for the balance alone", status)
	}
	if n := b.s.count(`SELECT count(*) FROM members WHERE merchant_id = $1`, b.tn.merchant.ID); n != 1 {
		t.Errorf("%d members, want Ana alone", n)
	}

	// Metadata: 16 KiB once encoded ({"k":"…"} is 8 bytes around the value).
	meta := func(n int) map[string]any { return map[string]any{"k": strings.Repeat("x", n-8)} }
	status, code, msg := b.call(http.MethodPost, "/api/v1/members", map[string]any{"email": "eva@example.com", "name": "Eva", "metadata": meta(16<<10 + 1)})
	if status != 400 || code != "validation_error" || !strings.HasPrefix(msg, "metadata:") {
		t.Errorf("metadata of 16 KiB + 1: %d %s %q, want 400 naming metadata", status, code, msg)
	}
	if status, _, msg := b.call(http.MethodPatch, anaPath, map[string]any{"metadata": meta(16<<10 + 1)}); status != 400 || !strings.HasPrefix(msg, "metadata:") {
		t.Errorf("PATCH metadata of 16 KiB + 1: %d %q, want 400 naming metadata", status, msg)
	}
	if status, _, msg := b.call(http.MethodPost, "/api/v1/members", map[string]any{"email": "eva@example.com", "name": "Eva", "metadata": meta(16 << 10)}); status != 201 {
		t.Errorf("metadata of 16 KiB: %d %q, want 201", status, msg)
	}
}

// TestPlatformHugeTextIsCut: the fixtures of both platforms with a buyer
// name of 180,000 "<" (raw bytes) and an e-mail and a document far over
// their bounds are accepted, and the stored referral and its event keep
// the values cut: a name of 200 characters.
func TestPlatformHugeTextIsCut(t *testing.T) {
	t.Parallel()
	b := startBounds(t)
	name := strings.Repeat("<", 180_000)
	email := strings.Repeat("e", 100_000) + "@example.com"
	doc := strings.Repeat("1", 100_000)
	guru := b.fixtureBody(guruApproved, map[string]any{"api_token": b.tn.guruToken, "id": "huge-g-1",
		"payment.coupon.coupon_code": b.ana.CouponCode, "contact.name": name, "contact.email": email, "contact.doc": doc})
	yampi := b.fixtureBody(yampiPaid, map[string]any{"resource.id": "huge-y-1", "resource.promocode.data.code": b.ana.CouponCode,
		"resource.customer.data.name": name, "resource.customer.data.email": email, "resource.customer.data.cpf": doc})
	for platform, body := range map[string]map[string]any{"guru": guru, "yampi": yampi} {
		if status, msg := b.deliver(platform, body); status != http.StatusOK {
			t.Errorf("%s: %d %q, want the delivery accepted", platform, status, msg)
		}
	}
	for _, order := range []string{"huge-g-1", "huge-y-1"} {
		var gotName, gotEmail, gotDoc string
		testenv.Eventually(t, 20*time.Second, "the referral of "+order, func() bool {
			return b.s.deps.Pool.QueryRow(context.Background(), `SELECT referee_name, referee_email, referee_external_id
				FROM referrals WHERE merchant_id = $1 AND order_id = $2`, b.tn.merchant.ID, order).Scan(&gotName, &gotEmail, &gotDoc) == nil
		})
		if gotName != strings.Repeat("<", 200) || gotEmail != strings.Repeat("e", 254) || gotDoc != strings.Repeat("1", 255) {
			t.Errorf("%s: referee_name %d, referee_email %d, referee_external_id %d characters; want 200, 254, 255",
				order, len(gotName), len(gotEmail), len(gotDoc))
		}
	}
	var biggest int
	if err := b.s.deps.Pool.QueryRow(context.Background(), `SELECT coalesce(max(octet_length(payload::text)), 0) FROM outbox
		WHERE merchant_id = $1`, b.tn.merchant.ID).Scan(&biggest); err != nil {
		t.Fatal(err)
	}
	if biggest == 0 || biggest > 8<<10 {
		t.Errorf("the largest event is %d bytes, want the events small", biggest)
	}
}
