package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/convida/convida/pkg/ids"
	"github.com/convida/convida/pkg/member"
	"github.com/convida/convida/pkg/merchant"
	"github.com/convida/convida/pkg/openapi/openapitest"
	"github.com/convida/convida/pkg/testenv"
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

// boundsRun is the stack TestRequestStringBounds drives, with its tenant.
type boundsRun struct {
	t      *testing.T
	s      *stack
	tn     *tenant
	ana    *member.Member
	api    *http.Client // validates every answer against the document
	ingest *http.Client
	seq    atomic.Int64
}

func (b *boundsRun) next() int64 { return b.seq.Add(1) }

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

func startBounds(t *testing.T) *boundsRun {
	t.Helper()
	s := startStack(t, stackOptions{})
	// Limits well above the test's pace.
	tn := s.withHotmartKiwify(s.newTenantWith(merchant.Merchant{RateLimitPerSecond: 10_000, RateLimitBurst: 10_000},
		testenv.FixedCampaign(1000, 7)), "")
	v := openapitest.New(t)
	return &boundsRun{t: t, s: s, tn: tn, ana: s.newMember(tn, "ana@example.com", "Ana Souza"),
		api: v.Client(s.apiURL), ingest: v.Client(s.ingestURL)}
}

// servedDocument reads the document the API serves.
func (b *boundsRun) servedDocument() *openapi3.T {
	b.t.Helper()
	res, err := http.Get(b.s.apiURL + "/api/v1/openapi.json")
	if err != nil {
		b.t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	doc, err := openapi3.NewLoader().LoadFromData(raw)
	if err != nil {
		b.t.Fatalf("the served document does not load: %v", err)
	}
	return doc
}

// encode writes body as JSON without escaping <, > and &: a value of 180,000
// "<" is sent as 180,000 bytes.
func encode(body any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(body)
	return bytes.TrimSpace(buf.Bytes())
}

// call sends a JSON body (none when nil) to the API with the tenant's key
// and returns the status and, for an error, its code and message.
func (b *boundsRun) call(method, path string, body any) (status int, code, msg string) {
	b.t.Helper()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(encode(body))
	}
	req, _ := http.NewRequest(method, b.s.apiURL+path, rd)
	req.Header.Set("X-API-Key", b.tn.apiKey)
	req.Header.Set("Content-Type", "application/json")
	res, err := b.api.Do(req)
	if err != nil {
		b.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	var out struct {
		Error struct{ Code, Message string }
	}
	_ = json.NewDecoder(res.Body).Decode(&out)
	return res.StatusCode, out.Error.Code, out.Error.Message
}

// deliver posts a platform's webhook (a Yampi one signed) and returns the
// status and, for an error, its message.
func (b *boundsRun) deliver(platform string, body map[string]any) (int, string) {
	b.t.Helper()
	raw := encode(body)
	path := "/api/webhooks/" + platform + "/" + b.tn.merchant.ID.String()
	if platform == "kiwify" {
		path = kiwifyPath(b.tn, kiwifySign(b.tn.kiwifyToken, raw))
	}
	req, _ := http.NewRequest(http.MethodPost, b.s.ingestURL+path, bytes.NewReader(raw))
	req.Header.Set("Content-Type", "application/json")
	switch platform {
	case "yampi":
		req.Header.Set("X-Yampi-Hmac-SHA256", yampiSign(b.tn.yampiSecret, raw))
	case "hotmart":
		req.Header.Set("X-HOTMART-HOTTOK", b.tn.hottok)
	}
	res, err := b.ingest.Do(req)
	if err != nil {
		b.t.Fatalf("POST %s webhook: %v", platform, err)
	}
	defer res.Body.Close()
	var out struct {
		Error struct{ Message string }
	}
	_ = json.NewDecoder(res.Body).Decode(&out)
	return res.StatusCode, out.Error.Message
}

// snapshot digests what a request could store or publish: the rows of the
// resources and the number of events and processed commands.
func (b *boundsRun) snapshot() string {
	b.t.Helper()
	var out string
	q := `SELECT concat_ws('|', ` + strings.Join([]string{
		digest("members"), digest("campaigns"), digest("creator_profiles"), digest("campaign_tiers"),
		digest("webhook_endpoints"), digest("referrals"), digest("redemptions"), digest("wallets"),
		`(SELECT count(*) FROM outbox)::text`, `(SELECT count(*) FROM processed_commands)::text`,
	}, ", ") + `)`
	if err := b.s.deps.Pool.QueryRow(context.Background(), q).Scan(&out); err != nil {
		b.t.Fatal(err)
	}
	return out
}

func digest(table string) string {
	return `(SELECT md5(coalesce(string_agg(t::text, ',' ORDER BY t::text), '')) FROM ` + table + ` t)`
}

// fixtureBody returns a platform's body from pkg/inbound/testdata as a map.
func (b *boundsRun) fixtureBody(name string, set map[string]any) map[string]any {
	var doc map[string]any
	if err := json.Unmarshal(fixture(b.t, name, set), &doc); err != nil {
		b.t.Fatal(err)
	}
	return doc
}

// pendingReferral makes a sale of Ana's through the ingest and returns its
// referral's id once the ledger has it, pending.
func (b *boundsRun) pendingReferral() string {
	b.t.Helper()
	order := fmt.Sprintf("bounds-ref-%d", b.next())
	wantStatus(b.t, b.s.postGuru(b.tn, guruSale(b.t, b.tn, order, b.ana.CouponCode, 100, "approved")), 200)
	var id string
	testenv.Eventually(b.t, 20*time.Second, "the referral of "+order, func() bool {
		err := b.s.deps.Pool.QueryRow(context.Background(),
			`SELECT id::text FROM referrals WHERE merchant_id = $1 AND order_id = $2`, b.tn.merchant.ID, order).Scan(&id)
		return err == nil
	})
	return "ref_" + strings.ReplaceAll(id, "-", "")
}

// once returns f's result, computed at the first call.
func once(f func() string) func() string {
	var v string
	return func() string {
		if v == "" {
			v = f()
		}
		return v
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
		"reconcileIntegration":  {path: fixed("/api/v1/integrations/guru/reconcile"), body: func() map[string]any { return map[string]any{} }},
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
	}
}

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
		if status, page := dash.do(http.MethodPost, path, form); status != http.StatusUnprocessableEntity || !strings.Contains(page, wantMsg) {
			t.Errorf("POST %s with 201 '<': %d, want 422 showing %q", path, status, wantMsg)
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
