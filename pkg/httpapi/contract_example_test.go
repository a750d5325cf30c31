package httpapi_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/gorilla/mux"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.uber.org/zap/zaptest"

	"github.com/convida/convida/pkg/httpapi"
	"github.com/convida/convida/pkg/inbound"
	"github.com/convida/convida/pkg/ingest"
	"github.com/convida/convida/pkg/ledger"
	"github.com/convida/convida/pkg/merchant"
	"github.com/convida/convida/pkg/openapi/openapitest"
	"github.com/convida/convida/pkg/postgres"
	"github.com/convida/convida/pkg/provider"
	"github.com/convida/convida/pkg/redisx"
	"github.com/convida/convida/pkg/secretbox"
	"github.com/convida/convida/pkg/testenv"
)

// ex is shorthand for a documented response.
func ex(op string, status int) openapitest.Exercise {
	return openapitest.Exercise{Operation: op, Status: status}
}

// TestContractExamples runs existing operations of the API through a client
// that validates every response against the OpenAPI document, proving the
// document and the code agree on them. The other tests of this package can
// do the same by setting env.client = openapitest.New(t).Client(env.url).
func TestContractExamples(t *testing.T) {
	t.Parallel()
	env := mustEnv(t)
	v := openapitest.New(t)
	env.client = v.Client(env.url)
	tn := env.mustTenant(t)

	// Campaigns and members.
	camp := tn.mustCampaign(t, map[string]any{"name": "Indique e ganhe", "reward_type": "fixed", "reward_value": 1000,
		"min_redemption": 500})
	wantStatus(t, tn.get(t, "/api/v1/campaigns/"+camp), http.StatusOK)
	wantError(t, tn.get(t, "/api/v1/campaigns/camp_00000000000000000000000000000000"), http.StatusNotFound, "not_found", "")
	wantError(t, tn.do(t, http.MethodPost, "/api/v1/campaigns", map[string]any{"name": "x", "reward_type": "points"}),
		http.StatusBadRequest, "validation_error", "reward_type")

	ana := tn.mustMember(t, "ana@example.com", "Ana Souza")
	r := tn.do(t, http.MethodPost, "/api/v1/members", map[string]any{"email": "ana@example.com", "name": "Ana Outra"})
	wantError(t, r, http.StatusConflict, "email_exists", "")
	r = tn.do(t, http.MethodPost, "/api/v1/members", map[string]any{"email": "not an email", "name": "X"})
	wantError(t, r, http.StatusBadRequest, "validation_error", "email")
	r = tn.do(t, http.MethodPost, "/api/v1/members", map[string]any{"email": "meta@example.com", "name": "Meta",
		"external_id": "cus_9", "campaign_id": camp, "metadata": map[string]any{"plan": "gold", "n": 3}})
	wantStatus(t, r, http.StatusCreated)

	// Admin reads, with a referral released and another still pending.
	tn.mustLedger(t, tn.sale(ledger.CmdCreditSale, ana, "1001", 9790), tn.sale(ledger.CmdCreditSale, ana, "1002", 5000))
	tn.mustLedger(t, tn.release(t, ana, "1001"))
	wantStatus(t, tn.get(t, "/api/v1/members/"+ana.prefID), http.StatusOK)
	wantStatus(t, tn.get(t, "/api/v1/members/"+ana.id.String()), http.StatusOK)
	wantError(t, tn.get(t, "/api/v1/members/mem_"+strings.Repeat("0", 32)), http.StatusNotFound, "not_found", "")
	wantError(t, tn.get(t, "/api/v1/members/nonsense"), http.StatusNotFound, "not_found", "")
	wantError(t, tn.get(t, "/api/v1/members/"+ana.prefID+"?q=%00"), http.StatusBadRequest, "validation_error", "q")
	wantStatus(t, tn.get(t, "/api/v1/members/"+ana.prefID+"/wallet"), http.StatusOK)
	wantStatus(t, tn.get(t, "/api/v1/members/"+ana.prefID+"/transactions"), http.StatusOK)
	wantStatus(t, tn.get(t, "/api/v1/members/"+ana.prefID+"/transactions?type=release&per_page=1"), http.StatusOK)
	wantError(t, tn.get(t, "/api/v1/members/"+ana.prefID+"/transactions?per_page=101"), http.StatusBadRequest, "validation_error", "per_page")

	// Without a key.
	wantError(t, env.call(t, request{method: http.MethodGet, path: "/api/v1/members/" + ana.prefID}),
		http.StatusUnauthorized, "unauthorized", "")
	wantError(t, env.call(t, request{method: http.MethodGet, path: "/api/v1/member/me?email=ana@example.com"}),
		http.StatusUnauthorized, "UNAUTHORIZED", "")

	// Member-facing.
	me := func(q url.Values) reply { return tn.get(t, "/api/v1/member/me?"+q.Encode()) }
	r = me(url.Values{"email": {"ana@example.com"}})
	wantStatus(t, r, http.StatusOK)
	wantFields(t, r, map[string]any{"created": false})
	r = me(url.Values{"email": {"joao@example.com"}, "name": {"João Pereira"}, "autoCreate": {"true"}})
	wantStatus(t, r, http.StatusOK)
	wantFields(t, r, map[string]any{"created": true})
	wantError(t, me(url.Values{"email": {"nobody@example.com"}}), http.StatusNotFound, "MEMBER_NOT_FOUND", "")
	wantError(t, me(url.Values{"email": {"nobody@example.com"}, "autoCreate": {"true"}}), http.StatusBadRequest, "MISSING_FIELDS", "")
	wantError(t, me(url.Values{"email": {"not an email"}}), http.StatusBadRequest, "VALIDATION_ERROR", "email")
	for _, p := range []string{"/api/v1/member/referrals", "/api/v1/wallet/balance", "/api/v1/wallet/transactions"} {
		wantStatus(t, tn.get(t, p+"?email=ana@example.com"), http.StatusOK)
		wantError(t, tn.get(t, p+"?email=nobody@example.com"), http.StatusNotFound, "MEMBER_NOT_FOUND", "")
		wantError(t, tn.get(t, p), http.StatusBadRequest, "VALIDATION_ERROR", "email")
	}

	// Integrations: defaults, then configured.
	for _, p := range []string{"guru", "yampi"} {
		wantStatus(t, tn.get(t, "/api/v1/integrations/"+p), http.StatusOK)
	}
	wantStatus(t, tn.do(t, http.MethodPut, "/api/v1/integrations/guru",
		map[string]any{"account_token": "gAcc0123456789abcdefghijklmnopqrstuvWXYZ", "user_token": "guru-user-token-1234"}), http.StatusOK)
	wantStatus(t, tn.do(t, http.MethodPut, "/api/v1/integrations/yampi",
		map[string]any{"webhook_secret": "wh_sec_yampi_QRST", "user_token": "u", "user_secret_key": "sk_7777", "store_alias": "loja"}), http.StatusOK)
	wantError(t, tn.get(t, "/api/v1/integrations/stripe"), http.StatusNotFound, "not_found", "")
	wantError(t, tn.do(t, http.MethodPut, "/api/v1/integrations/guru", map[string]any{"api_url": "ftp://x"}),
		http.StatusBadRequest, "validation_error", "api_url")

	// The document itself: no key, cacheable.
	r = env.call(t, request{method: http.MethodGet, path: "/api/v1/openapi.json"})
	wantStatus(t, r, http.StatusOK)
	wantFields(t, r, map[string]any{"openapi": "3.1.0", "info.title": "Convida"})
	etag := r.header.Get("ETag")
	if etag == "" || !strings.Contains(r.header.Get("Cache-Control"), "max-age") {
		t.Errorf("openapi.json: ETag %q, Cache-Control %q; want both", etag, r.header.Get("Cache-Control"))
	}
	r = env.call(t, request{method: http.MethodGet, path: "/api/v1/openapi.json", header: map[string]string{"If-None-Match": etag}})
	wantStatus(t, r, http.StatusNotModified)

	v.WantExercised(t,
		ex("createCampaign", 201), ex("createCampaign", 400), ex("getCampaign", 200), ex("getCampaign", 404),
		ex("createMember", 201), ex("createMember", 409), ex("createMember", 400),
		ex("getMember", 200), ex("getMember", 400), ex("getMember", 404), ex("getMember", 401),
		ex("getMemberWallet", 200), ex("listMemberTransactions", 200), ex("listMemberTransactions", 400),
		ex("getMemberMe", 200), ex("getMemberMe", 404), ex("getMemberMe", 400), ex("getMemberMe", 401),
		ex("getMemberReferrals", 200), ex("getMemberReferrals", 404), ex("getWalletBalance", 200),
		ex("getWalletTransactions", 200), ex("getWalletTransactions", 400),
		ex("getIntegration", 200), ex("getIntegration", 404), ex("putIntegration", 200), ex("putIntegration", 400),
		ex("getOpenAPIDocument", 200), ex("getOpenAPIDocument", 304),
	)
}

// TestContractIngestExamples runs the receivers' answers that need no
// broker through the validating client.
func TestContractIngestExamples(t *testing.T) {
	t.Parallel()
	env := mustEnv(t)
	const token = "gAcc0123456789abcdefghijklmnopqrstuvWXYZ"
	tn := env.mustTenantWith(t, merchant.Merchant{},
		merchant.Integration{Provider: provider.Guru, AccountToken: token},
		merchant.Integration{Provider: provider.Yampi, WebhookSecret: "wh_sec_yampi_QRST"})
	records := &recordSink{}
	svc := ingest.New(ingest.Config{
		Merchants: env.merchants,
		Coupons:   postgres.NewMemberStore(env.pool),
		Log:       zaptest.NewLogger(t),
		// These deliveries are all answered without a command: only their
		// records are published.
		Publisher: records,
	})
	r := mux.NewRouter()
	svc.Register(r)
	srv := httptest.NewServer(r)
	t.Cleanup(srv.Close)
	v := openapitest.New(t)
	in := &apiEnv{url: srv.URL, client: v.Client(srv.URL)}

	guru := "/api/webhooks/guru/" + tn.merchant.ID.String()
	post := func(path string, body string, header map[string]string) reply {
		return in.call(t, request{method: http.MethodPost, path: path, body: body, header: header})
	}
	r1 := post(guru, `{"api_token":"`+token+`","webhook_type":"transaction","status":"waiting_payment"}`, nil)
	wantStatus(t, r1, http.StatusOK)
	wantFields(t, r1, map[string]any{"status": "ignored"})
	r1 = post(guru, `{"api_token":"`+token+`","webhook_type":"transaction","status":"approved","id":"5001",
		"payment":{"total":97.9,"coupon":{"coupon_code":"NOPE-NOBODY-2222"}},"dates":{"confirmed_at":"2026-11-20T12:00:00Z"}}`, nil)
	wantStatus(t, r1, http.StatusOK)
	wantFields(t, r1, map[string]any{"status": "unattributed"})
	wantError(t, post(guru, `{"api_token":"wrong","webhook_type":"transaction","status":"approved"}`, nil),
		http.StatusUnauthorized, "unauthorized", "")
	wantError(t, post(guru, `{"api_token":"`+token+`","webhook_type":"transaction","status":"approved","id":"5002",
		"payment":{"total":97.999}}`, nil), http.StatusUnprocessableEntity, "invalid_payload", "")
	wantError(t, post("/api/webhooks/guru/"+uuid.NewString(), `{}`, nil), http.StatusNotFound, "not_found", "")
	wantError(t, post("/api/webhooks/yampi/"+tn.merchant.ID.String(), `{"event":"order.paid"}`,
		map[string]string{"X-Yampi-Hmac-SHA256": "bm9wZQ=="}), http.StatusUnauthorized, "unauthorized", "")
	wantError(t, post(guru, `{"api_token":"`+token+`","pad":"`+strings.Repeat("x", ingest.MaxBody)+`"}`, nil),
		http.StatusRequestEntityTooLarge, "payload_too_large", "")

	v.WantExercised(t, ex("receiveGuruWebhook", 200), ex("receiveGuruWebhook", 401), ex("receiveGuruWebhook", 404),
		ex("receiveGuruWebhook", 413), ex("receiveGuruWebhook", 422), ex("receiveYampiWebhook", 401))
	if n := records.count(); n != 6 { // every delivery but the 404
		t.Errorf("records published = %d, want 6", n)
	}
}

// recordSink plays the broker for the ingest: it keeps the records
// published and refuses commands.
type recordSink struct {
	mu sync.Mutex
	ds []inbound.Delivery
}

func (r *recordSink) PublishDelivery(_ context.Context, d inbound.Delivery, cmd *ledger.Command) error {
	if cmd != nil {
		return errors.New("no broker for commands in this test")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ds = append(r.ds, d)
	return nil
}

func (r *recordSink) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.ds)
}

// mustContractEnv is mustEnv with the catalog and the protection wired, as
// program.APIRouter is to wire them, and a validating client.
func mustContractEnv(tb testing.TB, v *openapitest.Validator, protection httpapi.ProtectionConfig) *apiEnv {
	tb.Helper()
	return mustEnvWith(tb, envOptions{
		wire: func(pool *pgxpool.Pool, _ *secretbox.Box) httpapi.Config {
			return httpapi.Config{Catalog: catalog(pool), Protection: protection}
		},
		client: v.Client,
	})
}

// TestContractCatalogExamples runs the lists and updates, with rate limits
// and idempotency on, through the validating client.
func TestContractCatalogExamples(t *testing.T) {
	t.Parallel()
	rdb := testenv.MustRedis(t)
	v := openapitest.New(t)
	env := mustContractEnv(t, v, httpapi.ProtectionConfig{
		Limiter: redisx.NewLimiter(rdb, nil), Idempotency: redisx.NewIdempotency(rdb, nil), PerSecond: 1000, Burst: 1000})
	tn := env.mustTenant(t)
	camp := tn.mustCampaign(t, map[string]any{"name": "Padrão", "reward_type": "percentage", "reward_value": 10})
	ana := tn.mustMember(t, "ana@example.com", "Ana Souza")
	tn.mustLedger(t, tn.sale(ledger.CmdCreditSale, ana, "2001", 9790), tn.sale(ledger.CmdCreditSale, ana, "2002", 5000))
	ref := "ref_" + strings.ReplaceAll(tn.referralID(t, ana, "2001").String(), "-", "")

	r := tn.get(t, "/api/v1/members")
	wantStatus(t, r, http.StatusOK)
	for _, h := range []string{"RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset"} {
		if r.header.Get(h) == "" {
			t.Errorf("GET /members: no %s header", h)
		}
	}
	wantStatus(t, tn.get(t, "/api/v1/members?status=active&search=ana&campaign_id="+camp+"&per_page=1"), http.StatusOK)
	wantError(t, tn.get(t, "/api/v1/members?status=gone"), http.StatusBadRequest, "validation_error", "status")
	wantStatus(t, tn.do(t, http.MethodPatch, "/api/v1/members/"+ana.prefID,
		map[string]any{"name": "Ana S.", "metadata": map[string]any{"tier": 2}}), http.StatusOK)
	wantError(t, tn.do(t, http.MethodPatch, "/api/v1/members/"+ana.prefID, map[string]any{"email": "x@example.com"}),
		http.StatusBadRequest, "validation_error", "email")
	wantError(t, tn.do(t, http.MethodPatch, "/api/v1/members/mem_"+strings.Repeat("0", 32), map[string]any{"name": "X"}),
		http.StatusNotFound, "not_found", "")

	wantStatus(t, tn.get(t, "/api/v1/campaigns"), http.StatusOK)
	wantStatus(t, tn.do(t, http.MethodPatch, "/api/v1/campaigns/"+camp, map[string]any{"reward_value": 15, "warranty_days": 14}),
		http.StatusOK)
	wantError(t, tn.do(t, http.MethodPatch, "/api/v1/campaigns/"+camp, map[string]any{"reward_type": "fixed"}),
		http.StatusBadRequest, "validation_error", "reward_type")

	wantStatus(t, tn.get(t, "/api/v1/referrals?member_id="+ana.prefID+"&status=pending&created_after=2026-11-01"), http.StatusOK)
	wantError(t, tn.get(t, "/api/v1/referrals?created_before=yesterday"), http.StatusBadRequest, "validation_error", "created_before")
	wantStatus(t, tn.get(t, "/api/v1/referrals/"+ref), http.StatusOK)
	wantError(t, tn.get(t, "/api/v1/referrals/ref_"+strings.Repeat("0", 32)), http.StatusNotFound, "not_found", "")

	// Idempotency: a replay, then the key reused with another body.
	key := map[string]string{"X-API-Key": tn.key, "Idempotency-Key": "create-bruno-" + uuid.NewString()}
	body := map[string]any{"email": "bruno@example.com", "name": "Bruno"}
	first := env.call(t, request{method: http.MethodPost, path: "/api/v1/members", header: key, body: body})
	wantStatus(t, first, http.StatusCreated)
	again := env.call(t, request{method: http.MethodPost, path: "/api/v1/members", header: key, body: body})
	wantStatus(t, again, http.StatusCreated)
	if again.header.Get("Idempotent-Replayed") != "true" || string(again.raw) != string(first.raw) {
		t.Errorf("replay: Idempotent-Replayed %q, body %s; want true and the first body %s",
			again.header.Get("Idempotent-Replayed"), again.raw, first.raw)
	}
	other := env.call(t, request{method: http.MethodPost, path: "/api/v1/members", header: key,
		body: map[string]any{"email": "carla@example.com", "name": "Carla"}})
	wantError(t, other, http.StatusUnprocessableEntity, "idempotency_key_reused", "")

	// The rate limit, on a server whose keys may make 2 requests at once.
	lv := openapitest.New(t)
	limited := mustContractEnv(t, lv, httpapi.ProtectionConfig{Limiter: redisx.NewLimiter(rdb, nil), PerSecond: 1, Burst: 2})
	ltn := limited.mustTenant(t)
	var last reply
	for range 3 {
		last = ltn.get(t, "/api/v1/integrations/guru")
	}
	wantError(t, last, http.StatusTooManyRequests, "rate_limited", "")
	for range 2 {
		last = ltn.get(t, "/api/v1/wallet/balance?email=nobody@example.com")
	}
	wantError(t, last, http.StatusTooManyRequests, "RATE_LIMITED", "")

	v.WantExercised(t,
		ex("listMembers", 200), ex("listMembers", 400), ex("updateMember", 200), ex("updateMember", 400),
		ex("updateMember", 404), ex("listCampaigns", 200), ex("updateCampaign", 200), ex("updateCampaign", 400),
		ex("listReferrals", 200), ex("listReferrals", 400), ex("getReferral", 200), ex("getReferral", 404),
		ex("createMember", 201), ex("createMember", 422))
	lv.WantExercised(t, ex("getIntegration", 200), ex("getIntegration", 429), ex("getWalletBalance", 429))
}
