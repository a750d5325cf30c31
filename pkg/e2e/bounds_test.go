package e2e

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/convida/convida/pkg/ids"
	"github.com/convida/convida/pkg/openapi/openapitest"
)

// boundsCase is how TestRequestStringBounds sends an otherwise valid
// request of one operation.
type boundsCase struct {
	// path returns the request's path, making what the request needs (a
	// pending referral to approve, say); it is called for every request.
	path func() string
	// body returns an otherwise valid body, a fresh one each call (a new
	// e-mail, a new order id).
	body func() map[string]any
	// platform names the ingest receiver ("guru", "yampi"): a platform's
	// texts are cut to their bounds, never refused for their length, so
	// over gives, for every bounded field, the status a value one
	// character over its bound gets.
	platform string
	over     map[string]int
	// none: the body is an empty object, no field of it is read.
	none bool
	// after, when set, undoes what the accepted requests changed (the
	// platform settings the receivers' checks need).
	after func()
}

// TestRequestStringBounds is driven by the OpenAPI document the API serves:
// for every operation with a JSON request body and every string of that
// body with a maxLength (openapitest.RequestValues), it sends an otherwise
// valid body with the string one character over its bound, which must be
// refused with 400 validation_error (VALIDATION_ERROR member-facing) naming
// the field, nothing stored; then with the string at exactly its bound,
// which must not be refused for its length. The strings are made of "ç",
// two bytes each: bounds count characters. The platforms' receivers are
// held to the opposite rule: a value over its bound is cut, not refused.
// An operation with a request body and no entry in cases fails the test, so
// a new one cannot escape it.
func TestRequestStringBounds(t *testing.T) {
	t.Parallel()
	b := startBounds(t)
	doc := b.servedDocument()
	values := openapitest.RequestValues(doc)
	cases := b.cases()
	checked := 0
	// /member/me creates a member from its query parameters. First: the
	// sales the platforms' receivers accept, last, are applied in the
	// background.
	for _, v := range values {
		if v.Operation == "getMemberMe" && v.In == "query" {
			if max, ok := v.MaxLength(); ok {
				checked++
				b.checkMe(v, max)
			}
		}
	}
	for _, o := range bodyOperations(doc, cases) {
		id := o.op.OperationID
		c, ok := cases[id]
		if !ok {
			t.Errorf("%s %s (%s) has a request body and no case in TestRequestStringBounds", o.method, o.path, id)
			continue
		}
		memberFacing := slices.Contains(o.op.Tags, "member-facing")
		for _, v := range values {
			if v.Operation != id || v.In != "body" || v.Object {
				continue
			}
			if c.none {
				t.Errorf("%s: its case says the body has no field, the document has %s", id, v.Field)
				continue
			}
			max, ok := v.MaxLength()
			if !ok {
				t.Errorf("%s: no maxLength (TestEveryRequestStringHasMaxLength fails too)", v)
				continue
			}
			checked++
			b.check(c, v, max, memberFacing)
		}
		if c.after != nil {
			c.after()
		}
	}
	t.Logf("%d bounded request strings checked", checked)
	if checked < 40 {
		t.Errorf("%d bounded request strings checked, want every one of the document (at least 40)", checked)
	}
}

// bodyOperation is an operation with a JSON request body.
type bodyOperation struct {
	method, path string
	op           *openapi3.Operation
}

// bodyOperations returns the operations of doc with a JSON request body in
// a fixed order, the platforms' receivers last: the sales they accept are
// applied by the ledger in the background, which must not run while the
// API's refusals are checked for storing nothing.
func bodyOperations(doc *openapi3.T, cases map[string]boundsCase) []bodyOperation {
	var out []bodyOperation
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			if op.RequestBody != nil && op.RequestBody.Value.Content.Get("application/json") != nil {
				out = append(out, bodyOperation{method: method, path: path, op: op})
			}
		}
	}
	key := func(o bodyOperation) string {
		return fmt.Sprint(cases[o.op.OperationID].platform != "", " ", o.path, " ", o.method)
	}
	slices.SortFunc(out, func(a, b bodyOperation) int { return strings.Compare(key(a), key(b)) })
	return out
}

// check sends v at max+1 and at max characters.
func (b *boundsRun) check(c boundsCase, v openapitest.RequestValue, max int, memberFacing bool) {
	t := b.t
	t.Helper()
	over, atMax := c.body(), c.body()
	setAt(over, v.Steps, boundsText(v.Schema, max+1, b.next()))
	setAt(atMax, v.Steps, boundsText(v.Schema, max, b.next()))
	if c.platform != "" {
		want, ok := c.over[v.Field]
		if !ok {
			t.Errorf("%s: the case has no expectation for a value over the bound", v)
			return
		}
		if status, msg := b.deliver(c.platform, over); status != want || status == 422 && !strings.Contains(msg, v.Field) {
			t.Errorf("%s: %d characters: %d %q, want %d", v, max+1, status, msg, want)
		}
		if status, msg := b.deliver(c.platform, atMax); refusedForLength(status, msg) {
			t.Errorf("%s: %d characters (the bound): %d %q, refused for its length", v, max, status, msg)
		}
		return
	}
	path := c.path() // before the snapshot: it may store what the request needs
	before := b.snapshot()
	status, code, msg := b.call(v.Method, path, over)
	wantCode := "validation_error"
	if memberFacing {
		wantCode = "VALIDATION_ERROR"
	}
	if status != http.StatusBadRequest || code != wantCode || !strings.HasPrefix(msg, v.Field+":") {
		t.Errorf("%s: %d characters: %d %s %q, want 400 %s naming %s", v, max+1, status, code, msg, wantCode, v.Field)
	}
	if after := b.snapshot(); after != before {
		t.Errorf("%s: %d characters: something was stored", v, max+1)
	}
	if status, _, msg := b.call(v.Method, c.path(), atMax); refusedForLength(status, msg) || status >= 500 {
		t.Errorf("%s: %d characters (the bound): %d %q, refused for its length", v, max, status, msg)
	}
}

// checkMe sends /member/me, creating a member, with the query parameter v
// at max+1 and at max characters.
func (b *boundsRun) checkMe(v openapitest.RequestValue, max int) {
	t := b.t
	t.Helper()
	query := func(n int) string {
		q := url.Values{"autoCreate": {"true"}, "email": {fmt.Sprintf("me%d@example.com", b.next())}, "name": {"Carla Dias"}}
		q.Set(v.Field, boundsText(v.Schema, n, b.next()))
		return "/api/v1/member/me?" + q.Encode()
	}
	before := b.snapshot()
	if status, code, msg := b.call(http.MethodGet, query(max+1), nil); status != http.StatusBadRequest || code != "VALIDATION_ERROR" ||
		!strings.HasPrefix(msg, v.Field+":") {
		t.Errorf("%s: %d characters: %d %s %q, want 400 VALIDATION_ERROR naming %s", v, max+1, status, code, msg, v.Field)
	}
	if after := b.snapshot(); after != before {
		t.Errorf("%s: %d characters: something was stored", v, max+1)
	}
	if status, _, msg := b.call(http.MethodGet, query(max), nil); refusedForLength(status, msg) || status >= 500 {
		t.Errorf("%s: %d characters (the bound): %d %q, refused for its length", v, max, status, msg)
	}
}

// refusedForLength reports whether an answer refuses a value for its
// length: a 4xx saying "at most".
func refusedForLength(status int, msg string) bool {
	return status >= 400 && status < 500 && strings.Contains(msg, "at most")
}

// boundsText returns a value of n characters the schema otherwise accepts
// where it can: an e-mail, an https URL, an Instagram username, or "ç"
// (two bytes) repeated. seq keeps e-mails apart.
func boundsText(s *openapi3.Schema, n int, seq int64) string {
	pad := func(prefix, suffix, fill string) string {
		return prefix + strings.Repeat(fill, max(0, n-len(prefix)-len(suffix))) + suffix
	}
	switch {
	case s.Format == "email":
		return pad(fmt.Sprintf("b%d.", seq), "@example.com", "a")
	case s.Format == "uri" || strings.HasPrefix(s.Pattern, "^https://"):
		return pad("https://example.com/", "", "a")
	case strings.HasPrefix(s.Pattern, "^@?"):
		return pad("@", "", "a")
	}
	return strings.Repeat("ç", n)
}

// setAt sets the value at steps (keys, and 0 for an array's first item) of
// body, making the objects on the way.
func setAt(body map[string]any, steps []any, value any) {
	var node any = body
	for i, st := range steps {
		last := i == len(steps)-1
		switch st := st.(type) {
		case string:
			obj := node.(map[string]any)
			if last {
				obj[st] = value
				return
			}
			if _, ok := obj[st].(map[string]any); !ok {
				if _, isList := obj[st].([]any); !isList {
					obj[st] = map[string]any{}
				}
			}
			node = obj[st]
		case int:
			list := node.([]any)
			if last {
				list[st] = value
				return
			}
			node = list[st]
		}
	}
}

// cases are the otherwise valid requests of every operation with a body.
func (b *boundsRun) cases() map[string]boundsCase {
	t := b.t
	anaPath := "/api/v1/members/" + ids.Format(ids.Member, b.ana.ID)
	campPath := "/api/v1/campaigns/" + ids.Format(ids.Campaign, b.tn.campaign.ID)
	fixed := func(p string) func() string { return func() string { return p } }
	webhook := once(func() string {
		status, _, msg := b.call(http.MethodPost, "/v1/webhooks", map[string]any{"url": "https://hooks.example.com/convida",
			"events": []any{"referral.approved"}})
		if status != http.StatusCreated {
			t.Fatalf("create a webhook endpoint: %d %s", status, msg)
		}
		var id string
		_ = b.s.deps.Pool.QueryRow(context.Background(), `SELECT id::text FROM webhook_endpoints WHERE merchant_id = $1 LIMIT 1`,
			b.tn.merchant.ID).Scan(&id)
		return "/v1/webhooks/" + id
	})
	none := boundsCase{none: true}
	return map[string]boundsCase{
		"createMember": {path: fixed("/api/v1/members"), body: func() map[string]any {
			return map[string]any{"email": fmt.Sprintf("m%d@example.com", b.next()), "name": "Bruno Lima"}
		}},
		"updateMember": {path: fixed(anaPath), body: func() map[string]any { return map[string]any{"name": "Ana S."} }},
		"redeemMember": {path: fixed(anaPath + "/redeem"), body: func() map[string]any {
			return map[string]any{"amount": 500, "type": "subscription_discount", "subscription_id": "sub_1"}
		}},
		"redeemWallet": {path: fixed("/api/v1/wallet/redeem"), body: func() map[string]any {
			return map[string]any{"email": b.ana.Email, "amount": 500, "destination": "billing_subscription", "subscriptionId": "sub_1"}
		}},
		"createCampaign": {path: fixed("/api/v1/campaigns"), body: func() map[string]any {
			return map[string]any{"name": "Indique e ganhe", "reward_type": "fixed", "reward_value": 1000}
		}},
		"updateCampaign": {path: fixed(campPath), body: func() map[string]any { return map[string]any{"name": "Fixo 2"} }},
		"putCampaignTiers": {path: fixed(campPath + "/tiers"), body: func() map[string]any {
			return map[string]any{"tiers": []any{map[string]any{"name": "Bronze", "min_sales": 0, "commission_percent": 10}}}
		}},
		"putCreator": {path: fixed(anaPath + "/creator"), body: func() map[string]any {
			return map[string]any{"display_name": "Ana Souza", "niche": "fitness", "instagram_username": "ana.fit"}
		}},
		"approveReferral": {path: func() string { return "/api/v1/referrals/" + b.pendingReferral() + "/approve" },
			body: func() map[string]any { return map[string]any{"notes": "looked fine"} }},
		"rejectReferral": {path: func() string { return "/api/v1/referrals/" + b.pendingReferral() + "/reject" },
			body: func() map[string]any { return map[string]any{"reason": "fraud", "notes": "a test order"} }},
		"createWebhook": {path: fixed("/v1/webhooks"), body: func() map[string]any {
			return map[string]any{"url": "https://hooks.example.com/convida", "events": []any{"referral.approved"}}
		}},
		"updateWebhook": {path: webhook, body: func() map[string]any {
			return map[string]any{"url": "https://hooks.example.com/v2", "events": []any{"wallet.credited"}}
		}},
		"putIntegration": {path: fixed("/api/v1/integrations/yampi"), body: func() map[string]any {
			return map[string]any{"webhook_secret": b.tn.yampiSecret, "user_token": "ut", "user_secret_key": "usk",
				"store_alias": "loja", "api_url": "https://api.dooki.com.br/v2", "account_token": "guru-account-token"}
		}, after: func() {
			// The values at their bound were saved: the Yampi receiver's
			// checks sign with the tenant's own secret again.
			if status, _, msg := b.call(http.MethodPut, "/api/v1/integrations/yampi", map[string]any{"webhook_secret": b.tn.yampiSecret}); status != http.StatusOK {
				t.Fatalf("restore the Yampi webhook secret: %d %s", status, msg)
			}
		}},
		"reconcileIntegration": {path: fixed("/api/v1/integrations/guru/reconcile"), body: func() map[string]any { return map[string]any{} }},
		"createPortalSession": {path: fixed(anaPath + "/portal-sessions"), body: func() map[string]any {
			return map[string]any{"return_url": "https://loja.example.com/conta", "locale": "en"}
		}},
		"createEmbedToken": {path: fixed(anaPath + "/embed-tokens"), body: func() map[string]any { return map[string]any{"locale": "en"} }},
		"putPortalSettings": {path: fixed("/api/v1/portal/settings"), body: func() map[string]any {
			return map[string]any{"embed_origins": []any{"https://loja.example.com"}, "brand_color": "#0b6e4f"}
		}},
		"provisionMemberCoupon": none, "rotateCreatorToken": none, "testWebhook": none, "eraseMember": none,
		"retryWebhookLog": none, "rotateWebhookSecret": none,
		"receiveGuruWebhook": {platform: "guru", body: func() map[string]any {
			return b.fixtureBody(guruApproved, map[string]any{"api_token": b.tn.guruToken,
				"id": fmt.Sprintf("bounds-g-%d", b.next()), "payment.coupon.coupon_code": b.ana.CouponCode})
		}, over: map[string]int{
			"contact.name": 200, "contact.email": 200, "contact.doc": 200, "payment.currency": 200,
			"payment.coupon.coupon_code": 200, "subscription.id": 200, "dates.ordered_at": 200,
			"webhook_type": 200, "status": 200, // not handled: ignored
			"api_token":          401, // matches no account token
			"id":                 422, // the dedupe key: refused, never cut
			"dates.confirmed_at": 422,
		}},
		"receiveYampiWebhook": {platform: "yampi", body: func() map[string]any {
			return b.fixtureBody(yampiPaid, map[string]any{"resource.id": fmt.Sprintf("bounds-y-%d", b.next()),
				"resource.promocode.data.code": b.ana.CouponCode})
		}, over: map[string]int{
			"resource.customer.data.name": 200, "resource.customer.data.email": 200, "resource.customer.data.cpf": 200,
			"resource.customer.data.cnpj": 200, "resource.promocode.data.code": 200,
			"event": 200, "resource.status.data.alias": 200, // not handled (ignored), or not read for order.paid
			"resource.id": 422, "time": 422,
		}},
		"receiveHotmartWebhook": {platform: "hotmart", body: func() map[string]any {
			return b.fixtureBody(hotmartPaid, map[string]any{"data.purchase.transaction": fmt.Sprintf("bounds-h-%d", b.next()),
				"data.purchase.offer.coupon_code": b.ana.CouponCode})
		}, over: map[string]int{
			"data.buyer.name": 200, "data.buyer.email": 200, "data.buyer.document": 200,
			"data.purchase.price.currency_value": 200, "data.purchase.offer.coupon_code": 200,
			"event":                     200, // not handled: ignored
			"data.purchase.transaction": 422, // the dedupe key: refused, never cut
		}},
		"receiveKiwifyWebhook": {platform: "kiwify", body: func() map[string]any {
			return b.fixtureBody(kiwifyPaid, map[string]any{"order_id": fmt.Sprintf("bounds-k-%d", b.next()),
				"TrackingParameters.sck": b.ana.CouponCode})
		}, over: map[string]int{
			"Customer.full_name": 200, "Customer.email": 200, "Customer.CPF": 200, "Customer.cnpj": 200,
			"Commissions.currency": 200, "subscription_id": 200, "TrackingParameters.sck": 200,
			"TrackingParameters.src": 200, "TrackingParameters.s1": 200, // sck is read first
			"webhook_event_type": 200, "order_status": 200, // not handled, or not read with an event type
			"created_at": 200, // not read with an approved_date
			"order_id":   422, "approved_date": 422,
		}},
		"receiveEduzzWebhook": {platform: "eduzz", body: func() map[string]any {
			return b.fixtureBody(eduzzPaid, map[string]any{"data.id": fmt.Sprintf("bounds-e-%d", b.next()),
				"data.utm.content": b.ana.CouponCode})
		}, over: map[string]int{
			"data.buyer.name": 200, "data.buyer.email": 200, "data.buyer.document": 200,
			"data.price.currency": 200, "data.utm.content": 200,
			"data.utm.campaign": 200, // utm.content is read first
			"id":                200, // the delivery's id: not read
			"event":             200, // not handled: ignored
			"sentDate":          200, // not read with a paidAt
			"data.id":           422, // the dedupe key: refused, never cut
			"data.paidAt":       422,
		}},
	}
}
