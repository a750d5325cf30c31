package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/ids"
	"github.com/convida/convida/pkg/member"
	"github.com/convida/convida/pkg/merchant"
	"github.com/convida/convida/pkg/openapi/openapitest"
	"github.com/convida/convida/pkg/testenv"
)

// The contract tests of this file make every operation of the OpenAPI
// document answer each error it lists (and the success answers the other
// contract tests leave out: a wallet action still pending, readiness), the
// way a client or a platform would cause them, against a real stack; every
// answer is validated against the document by openapitest.

// errorsFixture is what the subtests share: tenants of the stack, with
// members, referrals and webhooks.
type errorsFixture struct {
	main     *tenant // most probes
	limited  *tenant // rate limit of 1 request per second, burst 1
	inflight *tenant // rows locked to hold a request in flight

	ana       *member.Member    // of main
	blocked   *member.Member    // of main, blocked through the API
	hold      *member.Member    // of inflight
	referrals map[string]string // order id → ref_… of main (pending)
}

func (s *stack) errorsFixture(t *testing.T) *errorsFixture {
	fixed := testenv.FixedCampaign(500, 30)
	fx := &errorsFixture{main: s.newTenant(fixed), inflight: s.newTenant(fixed), referrals: map[string]string{},
		limited: s.newTenantWith(merchant.Merchant{RateLimitPerSecond: 1, RateLimitBurst: 1}, fixed)}
	fx.ana = s.newMember(fx.main, "ana@example.com", "Ana Souza")
	fx.blocked = s.newMember(fx.main, "bia@example.com", "Bia Lima")
	fx.hold = s.newMember(fx.inflight, "caio@example.com", "Caio Reis")
	// Pending referrals of ana, through the ingest and the ledger.
	orders := []string{"ce-approve", "ce-reject", "ce-late-approve", "ce-late-reject"}
	for _, order := range orders {
		wantStatus(t, s.postGuru(fx.main, guruSale(t, fx.main, order, fx.ana.CouponCode, 100, "approved")), 200)
	}
	testenv.Eventually(t, 30*time.Second, "the referrals of the fixture", func() bool {
		return s.count(`SELECT count(*) FROM referrals WHERE merchant_id = $1`, fx.main.merchant.ID) == len(orders)
	})
	rows, err := s.deps.Pool.Query(t.Context(), `SELECT order_id, id FROM referrals WHERE merchant_id = $1`, fx.main.merchant.ID)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var order string
		var id uuid.UUID
		if err := rows.Scan(&order, &id); err != nil {
			t.Fatal(err)
		}
		fx.referrals[order] = ids.Format(ids.Referral, id)
	}
	rows.Close()
	return fx
}

// createWebhook creates an endpoint through the API and returns its wh_ id.
func (c *checker) createWebhook(t *testing.T, key string, active bool) string {
	t.Helper()
	r := c.expect(t, probe{"POST", "/v1/webhooks", jsonBody(map[string]any{
		"url": "https://hooks.example.com/convida", "events": []string{"member.created"}, "is_active": active}), keyed(key)}, 201, "")
	id, _ := r.data()["id"].(string)
	if id == "" {
		t.Fatalf("created webhook has no id: %v", r.body)
	}
	return id
}

// TestContractErrors makes every documented error answer happen: missing
// keys, rate limits, oversized bodies, bad parameters, unknown ids,
// idempotency keys reused or still in flight, state conflicts, a ledger
// that does not answer in time and a broker that is gone.
func TestContractErrors(t *testing.T) {
	t.Parallel()
	s := startStack(t, stackOptions{})
	fx := s.errorsFixture(t)
	zeroID := uuid.Nil.String()
	memID := ids.Format(ids.Member, fx.ana.ID)
	campID := ids.Format(ids.Campaign, fx.main.campaign.ID)
	key := fx.main.apiKey

	// Every operation that takes an API key answers 401 without a valid one.
	t.Run("unauthorized", func(t *testing.T) {
		t.Parallel()
		c := newChecker(t, s.apiURL)
		var want []openapitest.Exercise
		for i, op := range documented(t, 401, func(op openapitest.Operation) bool { return keyedAPI(op.Path) }) {
			p := probe{method: op.Method, path: fill(op.Path, map[string]string{"id": zeroID, "log_id": zeroID, "provider": "guru"})}
			if op.Method != "GET" && op.Method != "DELETE" {
				p.body = []byte(`{}`)
			}
			switch i % 3 { // no key, an unknown key, an unknown bearer token
			case 1:
				p.header = keyed(uuid.NewString())
			case 2:
				p.header = map[string]string{"Authorization": "Bearer " + uuid.NewString()}
			}
			c.expect(t, p, 401, styled(op.Path, "unauthorized"))
			want = append(want, ex(op.ID, 401))
		}
		c.v.WantExercised(t, want...)
	})

	// Every operation that takes an API key answers 429, with Retry-After,
	// to a key of a merchant limited to 1 request per second (burst 1)
	// right after another request of that key.
	t.Run("rate limited", func(t *testing.T) {
		t.Parallel()
		c := newChecker(t, s.apiURL)
		var want []openapitest.Exercise
		for _, op := range documented(t, 429, func(op openapitest.Operation) bool { return keyedAPI(op.Path) }) {
			k := testenv.MustKey(t, s.deps.Pool, fx.limited.merchant.ID)
			c.expect(t, probe{"GET", "/v1/webhooks", nil, keyed(k)}, 200, "")
			p := probe{method: op.Method, path: fill(op.Path, map[string]string{"id": zeroID, "log_id": zeroID, "provider": "guru"}), header: keyed(k)}
			if op.Method != "GET" && op.Method != "DELETE" {
				p.body = []byte(`{}`)
			}
			r := c.expect(t, p, 429, styled(op.Path, "rate_limited"))
			if r.status == 429 && r.header.Get("Retry-After") == "" {
				t.Errorf("%s: 429 without Retry-After", op.ID)
			}
			want = append(want, ex(op.ID, 429))
		}
		c.v.WantExercised(t, want...)
	})

	// Every operation that takes a body answers 413 to one over 1 MiB (the
	// POST and PATCH ones with an Idempotency-Key, as a careful client sends
	// them: the body is read before the key is claimed).
	t.Run("payload too large", func(t *testing.T) {
		t.Parallel()
		api, ingest := newChecker(t, s.apiURL), newChecker(t, s.ingestURL)
		want := map[*checker][]openapitest.Exercise{}
		for _, op := range documented(t, 413, func(openapitest.Operation) bool { return true }) {
			p := probe{method: op.Method, body: hugeBody(), header: keyed(key),
				path: fill(op.Path, map[string]string{"id": zeroID, "log_id": zeroID, "provider": "guru", "merchant_id": fx.main.merchant.ID.String()})}
			if op.Method == "POST" || op.Method == "PATCH" {
				p.header["Idempotency-Key"] = "big-" + op.ID
			}
			c := api
			if strings.HasPrefix(op.Path, "/api/webhooks/") { // a platform's delivery
				c, p.header = ingest, map[string]string{"X-Yampi-Hmac-SHA256": "c2lnbmF0dXJl"}
			}
			c.expect(t, p, 413, styled(op.Path, "payload_too_large"))
			want[c] = append(want[c], ex(op.ID, 413))
		}
		for c, w := range want {
			c.v.WantExercised(t, w...)
		}
	})

	t.Run("bad request", func(t *testing.T) {
		t.Parallel()
		c := newChecker(t, s.apiURL)
		wh := c.createWebhook(t, key, true)
		longKey := strings.Repeat("k", 256)
		tests := []struct {
			op   string
			p    probe
			code string
		}{
			{"approveReferral", probe{"POST", "/api/v1/referrals/" + fx.referrals["ce-approve"] + "/approve", []byte(`{"notes":`), keyed(key)}, "validation_error"},
			{"approveReferral", probe{"POST", "/api/v1/referrals/" + fx.referrals["ce-approve"] + "/approve",
				jsonBody(map[string]string{"notes": strings.Repeat("n", 2001)}), keyed(key)}, "validation_error"},
			{"listCampaigns", probe{"GET", "/api/v1/campaigns?per_page=0", nil, keyed(key)}, "validation_error"},
			{"listCampaigns", probe{"GET", "/api/v1/campaigns?page=x", nil, keyed(key)}, "validation_error"},
			{"getCampaign", probe{"GET", "/api/v1/campaigns/" + campID + "?expand=%FF", nil, keyed(key)}, "validation_error"},
			{"getIntegration", probe{"GET", "/api/v1/integrations/guru?x=%00", nil, keyed(key)}, "validation_error"},
			{"getMemberWallet", probe{"GET", "/api/v1/members/" + memID + "/wallet?x=%C3%28", nil, keyed(key)}, "validation_error"},
			{"provisionMemberCoupon", probe{"POST", "/api/v1/members/" + memID + "/provision-coupon?x=%FF", nil, keyed(key)}, "validation_error"},
			{"getReferral", probe{"GET", "/api/v1/referrals/" + fx.referrals["ce-approve"] + "?%FF=1", nil, keyed(key)}, "validation_error"},
			{"getWebhook", probe{"GET", "/v1/webhooks/" + wh + "?x=%FF", nil, keyed(key)}, "validation_error"},
			{"deleteWebhook", probe{"DELETE", "/v1/webhooks/" + wh + "?x=%FF", nil, keyed(key)}, "validation_error"},
			{"testWebhook", probe{"POST", "/v1/webhooks/" + wh + "/test", nil, keyed(key, "Idempotency-Key", longKey)}, "validation_error"},
			{"retryWebhookLog", probe{"POST", "/v1/webhooks/" + wh + "/logs/whl_" + zeros + "/retry", nil, keyed(key, "Idempotency-Key", longKey)}, "validation_error"},
			{"rotateWebhookSecret", probe{"POST", "/v1/webhooks/" + wh + "/rotate-secret", nil, keyed(key, "Idempotency-Key", longKey)}, "validation_error"},
		}
		var want []openapitest.Exercise
		for _, tt := range tests {
			c.expect(t, tt.p, 400, tt.code)
			want = append(want, ex(tt.op, 400))
		}
		c.v.WantExercised(t, want...)
		// The webhook survived the refused DELETE.
		c.expect(t, probe{"GET", "/v1/webhooks/" + wh, nil, keyed(key)}, 200, "")
	})

	t.Run("not found", func(t *testing.T) {
		t.Parallel()
		api, ingest := newChecker(t, s.apiURL), newChecker(t, s.ingestURL)
		unknownMerchant := []byte(`{"event":"order.paid"}`)
		tests := []struct {
			op   string
			c    *checker
			p    probe
			code string
		}{
			{"getMemberWallet", api, probe{"GET", "/api/v1/members/mem_" + zeros + "/wallet", nil, keyed(key)}, "not_found"},
			{"getMemberWallet", api, probe{"GET", "/api/v1/members/mem_123/wallet", nil, keyed(key)}, "not_found"},
			{"getMemberWallet", api, probe{"GET", "/api/v1/members/" + ids.Format(ids.Member, fx.hold.ID) + "/wallet", nil, keyed(key)}, "not_found"}, // another merchant's
			{"listMemberTransactions", api, probe{"GET", "/api/v1/members/mem_" + zeros + "/transactions", nil, keyed(key)}, "not_found"},
			{"putIntegration", api, probe{"PUT", "/api/v1/integrations/stripe", []byte(`{"user_token":"x"}`), keyed(key)}, "not_found"},
			{"updateCampaign", api, probe{"PATCH", "/api/v1/campaigns/camp_" + zeros, []byte(`{"name":"Outra"}`), keyed(key)}, "not_found"},
			{"receiveYampiWebhook", ingest, probe{"POST", "/api/webhooks/yampi/" + uuid.NewString(), unknownMerchant,
				map[string]string{"X-Yampi-Hmac-SHA256": yampiSign(fx.main.yampiSecret, unknownMerchant)}}, "not_found"},
		}
		for _, tt := range tests {
			tt.c.expect(t, tt.p, 404, tt.code)
			tt.c.v.WantExercised(t, ex(tt.op, 404))
		}
	})

	t.Run("unprocessable delivery", func(t *testing.T) {
		t.Parallel()
		c := newChecker(t, s.ingestURL)
		path := "/api/webhooks/yampi/" + fx.main.merchant.ID.String()
		for _, body := range [][]byte{
			[]byte(`{"event":`),
			yampiOrder(t, yampiPaid, 770001, fx.ana.CouponCode, 97.999), // more than 2 decimals
		} {
			c.expect(t, probe{"POST", path, body, map[string]string{"X-Yampi-Hmac-SHA256": yampiSign(fx.main.yampiSecret, body)}}, 422, "invalid_payload")
		}
		c.v.WantExercised(t, ex("receiveYampiWebhook", 422))
	})

	// The same Idempotency-Key with another body: 422 idempotency_key_reused,
	// whatever the first answer was (4xx answers are kept too).
	t.Run("idempotency key reused", func(t *testing.T) {
		t.Parallel()
		c := newChecker(t, s.apiURL)
		wh := c.createWebhook(t, key, true)
		idle := c.createWebhook(t, key, false)
		tests := []struct {
			op          string
			method      string
			path        string
			first, then []byte
			firstStatus int
		}{
			{"createMember", "POST", "/api/v1/members", []byte(`{"email":"davi@example.com","name":"Davi"}`), []byte(`{"email":"duda@example.com","name":"Duda"}`), 201},
			{"updateMember", "PATCH", "/api/v1/members/" + memID, []byte(`{"name":"Ana S."}`), []byte(`{"name":"Ana Souza"}`), 200},
			{"createCampaign", "POST", "/api/v1/campaigns", []byte(`{"name":"Verão","reward_type":"fixed","reward_value":700}`),
				[]byte(`{"name":"Inverno","reward_type":"fixed","reward_value":700}`), 201},
			{"updateCampaign", "PATCH", "/api/v1/campaigns/" + campID, []byte(`{"min_redemption":100}`), []byte(`{"min_redemption":200}`), 200},
			{"provisionMemberCoupon", "POST", "/api/v1/members/" + memID + "/provision-coupon", nil, []byte(`{}`), 202},
			{"approveReferral", "POST", "/api/v1/referrals/" + fx.referrals["ce-approve"] + "/approve", []byte(`{"notes":"ok"}`), []byte(`{"notes":"again"}`), 200},
			{"rejectReferral", "POST", "/api/v1/referrals/" + fx.referrals["ce-reject"] + "/reject", []byte(`{"reason":"fraud"}`), []byte(`{"reason":"duplicate"}`), 200},
			{"createWebhook", "POST", "/v1/webhooks", []byte(`{"url":"https://hooks.example.com/a","events":["member.created"]}`),
				[]byte(`{"url":"https://hooks.example.com/b","events":["member.created"]}`), 201},
			{"updateWebhook", "PATCH", "/v1/webhooks/" + wh, []byte(`{"events":["member.updated"]}`), []byte(`{"events":["member.created"]}`), 200},
			{"rotateWebhookSecret", "POST", "/v1/webhooks/" + wh + "/rotate-secret", nil, []byte(`{"note":"again"}`), 200},
			{"testWebhook", "POST", "/v1/webhooks/" + idle + "/test", nil, []byte(`{}`), 409},                           // inactive
			{"retryWebhookLog", "POST", "/v1/webhooks/" + wh + "/logs/whl_" + zeros + "/retry", nil, []byte(`{}`), 404}, // no such record
		}
		var want []openapitest.Exercise
		for _, tt := range tests {
			k := "reuse-" + tt.op
			c.expect(t, probe{tt.method, tt.path, tt.first, keyed(key, "Idempotency-Key", k)}, tt.firstStatus, "")
			r := c.expect(t, probe{tt.method, tt.path, tt.first, keyed(key, "Idempotency-Key", k)}, tt.firstStatus, "")
			if r.header.Get("Idempotent-Replayed") != "true" {
				t.Errorf("%s: the same body again was not replayed", tt.op)
			}
			c.expect(t, probe{tt.method, tt.path, tt.then, keyed(key, "Idempotency-Key", k)}, 422, "idempotency_key_reused")
			want = append(want, ex(tt.op, 422))
		}
		c.v.WantExercised(t, want...)
	})

	// A duplicate sent while the first request is still being processed:
	// 409 idempotency_key_in_use. The first is held in flight by a lock the
	// test takes on the rows it writes, and completes once that is released.
	t.Run("idempotency key in use", func(t *testing.T) {
		t.Parallel()
		c := newChecker(t, s.apiURL)
		k := fx.inflight.apiKey
		merchantID := fx.inflight.merchant.ID
		wh := c.createWebhook(t, k, true)
		whID, _ := ids.Parse(ids.Webhook, wh)
		lockMerchant := []any{`SELECT 1 FROM merchants WHERE id = $1 FOR UPDATE`, merchantID}
		lockWebhook := []any{`SELECT 1 FROM webhook_endpoints WHERE merchant_id = $1 AND id = $2 FOR UPDATE`, merchantID, whID}
		holdID := ids.Format(ids.Member, fx.hold.ID)
		c.expect(t, probe{"PUT", "/api/v1/members/" + holdID + "/creator", []byte(`{"display_name":"Caio"}`), keyed(k)}, 200, "")
		tests := []struct {
			op     string
			lock   []any
			p      probe
			status int
		}{
			{"createCampaign", lockMerchant, probe{"POST", "/api/v1/campaigns", []byte(`{"name":"Natal","reward_type":"percentage","reward_value":10}`), nil}, 201},
			{"updateCampaign", []any{`SELECT 1 FROM campaigns WHERE merchant_id = $1 AND id = $2 FOR UPDATE`, merchantID, fx.inflight.campaign.ID},
				probe{"PATCH", "/api/v1/campaigns/" + ids.Format(ids.Campaign, fx.inflight.campaign.ID), []byte(`{"warranty_days":14}`), nil}, 200},
			{"updateMember", []any{`SELECT 1 FROM members WHERE merchant_id = $1 AND id = $2 FOR UPDATE`, merchantID, fx.hold.ID},
				probe{"PATCH", "/api/v1/members/" + ids.Format(ids.Member, fx.hold.ID), []byte(`{"name":"Caio R."}`), nil}, 200},
			{"provisionMemberCoupon", []any{`SELECT 1 FROM coupon_provisions WHERE merchant_id = $1 AND member_id = $2 AND platform = 'guru' FOR UPDATE`,
				merchantID, fx.hold.ID}, probe{"POST", "/api/v1/members/" + ids.Format(ids.Member, fx.hold.ID) + "/provision-coupon", nil, nil}, 202},
			{"createWebhook", lockMerchant, probe{"POST", "/v1/webhooks", []byte(`{"url":"https://hooks.example.com/c","events":["wallet.credited"]}`), nil}, 201},
			{"updateWebhook", lockWebhook, probe{"PATCH", "/v1/webhooks/" + wh, []byte(`{"is_active":false}`), nil}, 200},
			{"rotateWebhookSecret", lockWebhook, probe{"POST", "/v1/webhooks/" + wh + "/rotate-secret", nil, nil}, 200},
			{"rotateCreatorToken", []any{`SELECT 1 FROM creator_profiles WHERE merchant_id = $1 AND member_id = $2 FOR UPDATE`, merchantID, fx.hold.ID},
				probe{"POST", "/api/v1/members/" + holdID + "/creator/rotate-token", nil, nil}, 200},
		}
		var want []openapitest.Exercise
		for _, tt := range tests {
			tt.p.header = keyed(k, "Idempotency-Key", "inflight-"+tt.op)
			s.heldInFlight(t, c, tt.lock, tt.p, tt.status)
			want = append(want, ex(tt.op, 409))
		}
		c.v.WantExercised(t, want...)
	})

	// Redeeming for a blocked member: 409 invalid_state on both interfaces.
	t.Run("invalid state", func(t *testing.T) {
		t.Parallel()
		c := newChecker(t, s.apiURL)
		blocked := ids.Format(ids.Member, fx.blocked.ID)
		c.expect(t, probe{"PATCH", "/api/v1/members/" + blocked, []byte(`{"status":"blocked"}`), keyed(key)}, 200, "")
		c.expect(t, probe{"POST", "/api/v1/members/" + blocked + "/redeem", []byte(`{"amount":100,"type":"store_credit"}`), keyed(key)}, 409, "invalid_state")
		c.expect(t, probe{"POST", "/api/v1/wallet/redeem", jsonBody(map[string]any{"email": fx.blocked.Email, "amount": 100,
			"destination": "store_coupon"}), keyed(key)}, 409, "INVALID_STATE")
		c.v.WantExercised(t, ex("redeemMember", 409), ex("redeemWallet", 409))
	})

	t.Run("ready", func(t *testing.T) {
		t.Parallel()
		c := newChecker(t, s.opsURL)
		if r := c.expect(t, probe{"GET", "/readyz", nil, nil}, 200, ""); r.body["status"] != "ready" {
			t.Errorf("readyz = %v, want ready", r.body)
		}
		c.v.WantExercised(t, ex("getReadyz", 200))
	})

	t.Run("ledger down", func(t *testing.T) { s.ledgerDown(t, fx) })
}

// heldInFlight sends p (with its Idempotency-Key) while the rows of lock
// (a SELECT … FOR UPDATE and its arguments) are locked by the test, waits
// until it is blocked on them, sends it again (409 idempotency_key_in_use),
// then releases the rows and checks the first completes with status.
func (s *stack) heldInFlight(t *testing.T, c *checker, lock []any, p probe, status int) {
	t.Helper()
	ctx := t.Context()
	tx, err := s.deps.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(context.Background()) //nolint:errcheck
	var pid int32
	if err := tx.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&pid); err != nil {
		t.Fatal(err)
	}
	if tag, err := tx.Exec(ctx, lock[0].(string), lock[1:]...); err != nil || tag.RowsAffected() != 1 {
		t.Fatalf("lock %q: %v (%v)", lock[0], err, tag)
	}
	first := make(chan reply, 1)
	go func() { first <- c.send(t, p) }()
	deadline := time.Now().Add(15 * time.Second)
	for {
		var waiting int
		if err := s.deps.Pool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE $1::int = ANY(pg_blocking_pids(pid))`, pid).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		if waiting > 0 {
			break
		}
		select {
		case r := <-first:
			t.Fatalf("%s %s answered %d %v without waiting for the locked rows", p.method, p.path, r.status, r.body)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s %s never waited for the locked rows", p.method, p.path)
		}
		time.Sleep(10 * time.Millisecond)
	}
	c.expect(t, p, 409, styled(p.path, "idempotency_key_in_use"))
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if r := <-first; r.status != status {
		t.Errorf("%s %s held in flight = %d %v, want %d", p.method, p.path, r.status, r.body, status)
	}
	// Completed: the same request is now a replay.
	if r := c.expect(t, p, status, ""); r.header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("%s %s after completion was not replayed", p.method, p.path)
	}
}
