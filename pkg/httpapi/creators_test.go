package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest"
	"go.uber.org/zap/zaptest/observer"

	"github.com/convida/convida/pkg/clientip"
	"github.com/convida/convida/pkg/creator"
	"github.com/convida/convida/pkg/httpapi"
	"github.com/convida/convida/pkg/ledger"
	"github.com/convida/convida/pkg/openapi/openapitest"
	"github.com/convida/convida/pkg/postgres"
	"github.com/convida/convida/pkg/redisx"
	"github.com/convida/convida/pkg/secretbox"
	"github.com/convida/convida/pkg/testenv"
)

var (
	_ httpapi.CreatorProfiles = (*postgres.CreatorStore)(nil)

	reToken = regexp.MustCompile(`^[A-Za-z0-9_-]{43}$`)
)

// creatorEnv is the API wired as program.APIRouter wires it (creators,
// catalog, rate limits and idempotency records in the test Redis), called
// through a client that validates every answer against the OpenAPI
// document, every log line kept; its ledger's clock is set by the test.
type creatorEnv struct {
	*apiEnv
	v           *openapitest.Validator
	logs        *observer.ObservedLogs
	ledgerClock *clock
}

// creatorEnvOptions shape mustCreatorEnv.
type creatorEnvOptions struct {
	limits httpapi.CreatorsConfig // the public operations' limits; zero: generous ones
	rdb    *redis.Client          // nil: the test Redis
	brk    *redisx.Breaker
	// failures and trusted wire the failed-authentication limit and
	// TRUSTED_PROXIES (none by default).
	failures clientip.FailureLimit
	trusted  clientip.Resolver
}

func mustCreatorEnv(t *testing.T, o creatorEnvOptions) *creatorEnv {
	t.Helper()
	core, logs := observer.New(zapcore.DebugLevel)
	log := zap.New(zapcore.NewTee(zaptest.NewLogger(t, zaptest.Level(zap.WarnLevel)).Core(), core))
	if o.rdb == nil {
		o.rdb = testenv.MustRedis(t)
	}
	// Every test of the suite calls from 127.0.0.1 into one Redis: the
	// per-address limit is raised here, and tested from another address.
	// So is the per-token one, which a test reading one creator's pages
	// more than 20 times within a few seconds would meet on a fast
	// machine; TestCreatorRateLimits sets both.
	if o.limits.IPPerSecond == 0 {
		o.limits.IPPerSecond, o.limits.IPBurst = 100_000, 100_000
	}
	if o.limits.TokenPerSecond == 0 {
		o.limits.TokenPerSecond, o.limits.TokenBurst = 100_000, 100_000
	}
	lclk := &clock{t: t0}
	v := openapitest.New(t)
	env := mustEnvWith(t, envOptions{
		wire: func(pool *pgxpool.Pool, box *secretbox.Box) httpapi.Config {
			c := o.limits
			c.Profiles, c.Tiers = postgres.NewCreatorStore(pool, box), postgres.NewCampaignTierStore(pool)
			return httpapi.Config{Log: log, Catalog: catalog(pool), Creators: c, TrustedProxies: o.trusted,
				Protection: httpapi.ProtectionConfig{Limiter: redisx.NewLimiter(o.rdb, o.brk),
					Idempotency: redisx.NewIdempotency(o.rdb, o.brk), AuthFailures: o.failures, Log: log}}
		},
		// One second later per ledger write, from wherever the test set it.
		ledgerNow: func() time.Time { lclk.Advance(time.Second); return lclk.Now() },
		client:    v.Client,
	})
	return &creatorEnv{apiEnv: env, v: v, logs: logs, ledgerClock: lclk}
}

// public calls a creator operation: no API key.
func (e *creatorEnv) public(tb testing.TB, path string) reply {
	tb.Helper()
	r := e.call(tb, request{method: http.MethodGet, path: path})
	if cc := r.header.Get("Cache-Control"); cc != "no-store" {
		tb.Errorf("GET %s: Cache-Control %q, want no-store", path, cc)
	}
	return r
}

// wantNoToken fails when a log line of the run holds one of the tokens,
// in its message or any field; it wants some lines of the creator routes,
// so that it is known to look at the right log.
func (e *creatorEnv) wantNoToken(t *testing.T, tokens ...string) {
	t.Helper()
	creatorLines := 0
	for _, entry := range e.logs.All() {
		line := entry.Message
		for k, v := range entry.ContextMap() {
			line += fmt.Sprintf(" %s=%v", k, v)
		}
		for _, token := range tokens {
			if strings.Contains(line, token) {
				t.Errorf("a log line holds a creator token: %s", line)
			}
		}
		if strings.HasPrefix(fmt.Sprint(entry.ContextMap()["route"]), "/api/v1/creators/{token}") {
			creatorLines++
		}
	}
	if creatorLines == 0 {
		t.Errorf("no access-log line of the creator routes among %d lines", e.logs.Len())
	}
}

// mustCreator makes m a creator through the API and returns its token.
func (tn *tenant) mustCreator(tb testing.TB, m member, displayName string) string {
	tb.Helper()
	r := tn.do(tb, http.MethodPut, "/api/v1/members/"+m.prefID+"/creator",
		map[string]any{"display_name": displayName, "niche": "fitness", "instagram_username": "@ana.fit"})
	wantStatus(tb, r, http.StatusOK)
	return str(tb, r, "data.token")
}

var bronzeSilverGold = map[string]any{"tiers": []map[string]any{
	{"name": "Bronze", "min_sales": 0, "commission_percent": 10},
	{"name": "Silver", "min_sales": 3, "commission_percent": 15},
	{"name": "Gold", "min_sales": 10, "commission_percent": 20},
}}

func TestCreatorProfileOperations(t *testing.T) {
	t.Parallel()
	env := mustCreatorEnv(t, creatorEnvOptions{})
	tn := env.mustTenant(t)
	tn.mustCampaign(t, map[string]any{"name": "Padrão", "reward_type": "fixed", "reward_value": 1000})
	ana := tn.mustMember(t, "ana@example.com", "Ana Souza")
	path := "/api/v1/members/" + ana.prefID + "/creator"
	keys := []string{"member_id", "display_name", "niche", "instagram_username", "token", "created_at", "updated_at"}

	wantError(t, tn.get(t, path), http.StatusNotFound, "not_found", "creator")

	// Created: 200 (a PUT), the token shown, never cached.
	r := tn.do(t, http.MethodPut, path, map[string]any{"display_name": "  Ana Fit  ", "niche": "fitness", "instagram_username": "@ana.fit"})
	wantStatus(t, r, http.StatusOK)
	wantKeys(t, r, "", "data")
	wantKeys(t, r, "data", keys...)
	wantFields(t, r, map[string]any{"data.member_id": ana.prefID, "data.display_name": "Ana Fit", "data.niche": "fitness",
		"data.instagram_username": "ana.fit", "data.token": reToken, "data.created_at": reTimestamp, "data.updated_at": reTimestamp})
	if cc := r.header.Get("Cache-Control"); cc != "no-store" {
		t.Errorf("PUT: Cache-Control %q, want no-store", cc)
	}
	token, created := str(t, r, "data.token"), str(t, r, "data.created_at")

	// Updated: the same token, the same creation time; absent fields empty.
	r = tn.do(t, http.MethodPut, "/api/v1/members/"+ana.id.String()+"/creator", map[string]any{"display_name": "Ana Souza"})
	wantStatus(t, r, http.StatusOK)
	wantFields(t, r, map[string]any{"data.display_name": "Ana Souza", "data.niche": "", "data.instagram_username": "",
		"data.token": token, "data.created_at": created})
	if !ts(str(t, r, "data.updated_at")).After(ts(created)) {
		t.Errorf("updated_at %s, want after created_at %s", str(t, r, "data.updated_at"), created)
	}
	got := tn.get(t, path)
	wantStatus(t, got, http.StatusOK)
	if !jsonEqual(got.json, r.json) || got.header.Get("Cache-Control") != "no-store" {
		t.Errorf("GET = %s (Cache-Control %q), want the PUT's answer %s", got.raw, got.header.Get("Cache-Control"), r.raw)
	}

	// Rotated: a new token, replayed masked with its Idempotency-Key
	// (TestReplayedRotationShowsNoToken).
	r = tn.send(t, http.MethodPost, path+"/rotate-token", "rotate-1", nil)
	wantStatus(t, r, http.StatusOK)
	rotated := str(t, r, "data.token")
	if rotated == token || !reToken.MatchString(rotated) {
		t.Errorf("rotated token %q, want a new one (was %q)", rotated, token)
	}
	again := tn.send(t, http.MethodPost, path+"/rotate-token", "rotate-1", nil)
	if again.status != http.StatusOK || str(t, again, "data.token") != "****"+rotated[len(rotated)-4:] ||
		again.header.Get("Idempotent-Replayed") != "true" || again.header.Get("Cache-Control") != "no-store" {
		t.Errorf("replayed rotation = %s, headers %v; want the token masked, replayed, no-store", again, again.header)
	}
	wantError(t, tn.send(t, http.MethodPost, path+"/rotate-token", "rotate-1", map[string]any{"note": "other"}),
		http.StatusUnprocessableEntity, "idempotency_key_reused", "")
	wantFields(t, tn.get(t, path), map[string]any{"data.token": rotated})

	// Refused input.
	for _, body := range []any{
		map[string]any{"niche": "fitness"}, map[string]any{"display_name": "   "},
		map[string]any{"display_name": strings.Repeat("x", 101)}, map[string]any{"display_name": "A", "niche": strings.Repeat("n", 101)},
		map[string]any{"display_name": "A", "instagram_username": "ana fit"}, map[string]any{"display_name": "A", "instagram_username": strings.Repeat("a", 31)},
		map[string]any{"display_name": 7}, `{"display_name":`, `[]`,
	} {
		wantError(t, tn.do(t, http.MethodPut, path, body), http.StatusBadRequest, "validation_error", "")
	}
	wantError(t, tn.get(t, path+"?x=%00"), http.StatusBadRequest, "validation_error", "x")
	wantError(t, tn.do(t, http.MethodDelete, path+"?x=%FF", nil), http.StatusBadRequest, "validation_error", "x")
	wantError(t, tn.send(t, http.MethodPost, path+"/rotate-token", strings.Repeat("k", 256), nil), http.StatusBadRequest, "validation_error", "Idempotency-Key")
	wantError(t, tn.do(t, http.MethodPut, path, map[string]any{"display_name": "Ana", "pad": strings.Repeat("p", 1<<20)}),
		http.StatusRequestEntityTooLarge, "payload_too_large", "")

	// Unknown members, members without a profile, no key.
	bia := tn.mustMember(t, "bia@example.com", "Bia Lima")
	for _, p := range []string{"/api/v1/members/mem_" + strings.Repeat("0", 32) + "/creator", "/api/v1/members/nonsense/creator",
		"/api/v1/members/" + bia.prefID + "/creator"} {
		wantError(t, tn.get(t, p), http.StatusNotFound, "not_found", "")
		wantError(t, tn.do(t, http.MethodPost, p+"/rotate-token", nil), http.StatusNotFound, "not_found", "")
		wantError(t, tn.do(t, http.MethodDelete, p, nil), http.StatusNotFound, "not_found", "")
	}
	wantError(t, tn.do(t, http.MethodPut, "/api/v1/members/mem_"+strings.Repeat("0", 32)+"/creator", map[string]any{"display_name": "X"}),
		http.StatusNotFound, "not_found", "member")
	for _, m := range []string{http.MethodGet, http.MethodPut, http.MethodDelete} {
		wantError(t, env.call(t, request{method: m, path: path, body: map[string]any{"display_name": "X"}}), http.StatusUnauthorized, "unauthorized", "")
	}
	wantError(t, env.call(t, request{method: http.MethodPost, path: path + "/rotate-token"}), http.StatusUnauthorized, "unauthorized", "")

	// Deleted: 204, then 404; the member stays.
	r = tn.do(t, http.MethodDelete, path, nil)
	wantStatus(t, r, http.StatusNoContent)
	if len(r.raw) != 0 {
		t.Errorf("DELETE answered a body: %s", r.raw)
	}
	wantError(t, tn.get(t, path), http.StatusNotFound, "not_found", "")
	wantError(t, tn.do(t, http.MethodDelete, path, nil), http.StatusNotFound, "not_found", "")
	wantStatus(t, tn.get(t, "/api/v1/members/"+ana.prefID), http.StatusOK)

	env.v.WantExercised(t, ex("putCreator", 200), ex("putCreator", 400), ex("putCreator", 401), ex("putCreator", 404), ex("putCreator", 413),
		ex("getCreator", 200), ex("getCreator", 400), ex("getCreator", 401), ex("getCreator", 404),
		ex("rotateCreatorToken", 200), ex("rotateCreatorToken", 400), ex("rotateCreatorToken", 401), ex("rotateCreatorToken", 404),
		ex("rotateCreatorToken", 422), ex("deleteCreator", 204), ex("deleteCreator", 400), ex("deleteCreator", 401), ex("deleteCreator", 404))
}

// TestCreatorPublicOperations reads the three creator operations of a
// creator with sales of this month and the last, through the ledger.
func TestCreatorPublicOperations(t *testing.T) {
	t.Parallel()
	env := mustCreatorEnv(t, creatorEnvOptions{})
	tn := env.mustTenant(t)
	camp := tn.mustCampaign(t, map[string]any{"name": "Padrão", "reward_type": "fixed", "reward_value": 1000})
	ana := tn.mustMember(t, "ana@example.com", "Ana Souza")
	token := tn.mustCreator(t, ana, "Ana Fit")
	base := "/api/v1/creators/" + token

	// No sales and no tiers: zeros, no tier, empty lists.
	r := env.public(t, base)
	wantStatus(t, r, http.StatusOK)
	wantKeys(t, r, "", "id", "name", "niche", "instagramUsername", "referralCode", "referralLink", "totalSales", "approvedSales", "commissionTier")
	wantFields(t, r, map[string]any{"id": ana.id.String(), "name": "Ana Fit", "niche": "fitness", "instagramUsername": "ana.fit",
		"referralCode": ana.coupon, "referralLink": "https://loja.example.com/produtos?cupom=" + ana.coupon + "&utm_source=convida",
		"totalSales": 0, "approvedSales": 0, "commissionTier": nil})
	r = env.public(t, base+"/tiers")
	wantStatus(t, r, http.StatusOK)
	wantKeys(t, r, "data", "currentTier", "nextTier", "salesToNextTier", "tiers")
	wantFields(t, r, map[string]any{"data.currentTier": nil, "data.nextTier": nil, "data.salesToNextTier": nil})
	wantLen(t, r, "data.tiers", 0)
	r = env.public(t, base+"/sales")
	wantStatus(t, r, http.StatusOK)
	wantLen(t, r, "data", 0)
	wantFields(t, r, map[string]any{"pagination.page": 1, "pagination.limit": 20, "pagination.total": 0})

	// Silver from the 3rd sale of the month.
	wantStatus(t, tn.do(t, http.MethodPut, "/api/v1/campaigns/"+camp+"/tiers", bronzeSilverGold), http.StatusOK)
	env.at(t0.AddDate(0, -1, 0)) // last month: a sale that counts in totalSales, not in the month's
	tn.mustLedger(t, tn.sale(ledger.CmdCreditSale, ana, "oct-1", 5000))
	env.at(t0)
	tn.mustLedger(t, tn.sale(ledger.CmdCreditSale, ana, "nov-1", 5000))
	tn.mustLedger(t, tn.sale(ledger.CmdCreditSale, ana, "nov-2", 6000))
	tn.mustLedger(t, tn.release(t, ana, "oct-1"))
	// A refunded sale is cancelled: not a sale of the month.
	tn.mustLedger(t, tn.sale(ledger.CmdCreditSale, ana, "nov-3", 7000))
	tn.mustLedger(t, tn.sale(ledger.CmdRefund, ana, "nov-3", 7000))

	r = env.public(t, base)
	wantStatus(t, r, http.StatusOK)
	wantFields(t, r, map[string]any{"totalSales": 3, "approvedSales": 1})
	wantKeys(t, r, "commissionTier", "name", "commissionRate")
	wantFields(t, r, map[string]any{"commissionTier.name": "Bronze"})
	wantRate(t, r, "commissionTier.commissionRate", "0.1")
	r = env.public(t, base+"/tiers")
	wantFields(t, r, map[string]any{"data.currentTier.name": "Bronze", "data.currentTier.minSales": 0,
		"data.nextTier.name": "Silver", "data.nextTier.minSales": 3, "data.salesToNextTier": 1})
	wantKeys(t, r, "data.currentTier", "name", "minSales", "commissionRate")
	wantRate(t, r, "data.nextTier.commissionRate", "0.15")
	wantLen(t, r, "data.tiers", 3)
	wantFields(t, r, map[string]any{"data.tiers.2.name": "Gold", "data.tiers.2.minSales": 10})
	wantRate(t, r, "data.tiers.2.commissionRate", "0.2")

	tn.mustLedger(t, tn.sale(ledger.CmdCreditSale, ana, "nov-4", 8000))
	wantFields(t, env.public(t, base), map[string]any{"totalSales": 4, "commissionTier.name": "Silver"})
	wantFields(t, env.public(t, base+"/tiers"), map[string]any{"data.currentTier.name": "Silver", "data.nextTier.name": "Gold",
		"data.salesToNextTier": 7})

	// Sales: every status, newest first, masked buyers, paged.
	r = env.public(t, base+"/sales")
	wantStatus(t, r, http.StatusOK)
	wantKeys(t, r, "", "data", "pagination")
	wantKeys(t, r, "pagination", "page", "limit", "total")
	wantLen(t, r, "data", 5)
	wantKeys(t, r, "data.0", "id", "orderAmount", "commissionAmount", "status", "couponUsed", "buyerEmail", "createdAt")
	wantFields(t, r, map[string]any{"data.0.id": reUUID, "data.0.orderAmount": 8000, "data.0.commissionAmount": 1200, // the month's 3rd live sale: Silver, 15 %
		"data.0.status": "pending", "data.0.couponUsed": ana.coupon, "data.0.buyerEmail": "b***@example.com", "data.0.createdAt": reTimestamp,
		"data.1.orderAmount": 7000, "data.1.commissionAmount": 1050, "data.1.status": "cancelled", "data.4.orderAmount": 5000, "data.4.status": "approved",
		"pagination.total": 5})
	for i := range 5 {
		if email := str(t, r, "data."+strconv.Itoa(i)+".buyerEmail"); email != "b***@example.com" {
			t.Errorf("data.%d.buyerEmail = %q, want it masked", i, email)
		}
	}
	r = env.public(t, base+"/sales?page=2&limit=2")
	wantLen(t, r, "data", 2)
	wantFields(t, r, map[string]any{"data.0.orderAmount": 6000, "data.1.orderAmount": 5000,
		"pagination.page": 2, "pagination.limit": 2, "pagination.total": 5})
	wantLen(t, env.public(t, base+"/sales?page=9&limit=100"), "data", 0)
	for _, q := range []string{"page=0", "page=x", "limit=0", "limit=101", "limit=", "page=-1", "page=2147483648"} {
		if q == "limit=" {
			continue // empty is the default
		}
		wantError(t, env.public(t, base+"/sales?"+q), http.StatusBadRequest, "VALIDATION_ERROR", strings.Split(q, "=")[0])
	}
	wantError(t, env.public(t, base+"?x=%00"), http.StatusBadRequest, "VALIDATION_ERROR", "x")
	wantError(t, env.public(t, base+"/tiers?x=%FF"), http.StatusBadRequest, "VALIDATION_ERROR", "x")

	// A blocked member's page still reads.
	wantStatus(t, tn.do(t, http.MethodPatch, "/api/v1/members/"+ana.prefID, map[string]any{"status": "blocked"}), http.StatusOK)
	wantStatus(t, env.public(t, base), http.StatusOK)

	// Another merchant's key does nothing here, and no key is needed.
	other := env.mustTenant(t)
	r = env.call(t, request{method: http.MethodGet, path: base, header: map[string]string{"X-API-Key": other.key}})
	wantStatus(t, r, http.StatusOK)

	// Unknown, rotated and deleted tokens: 404 NOT_FOUND on all three.
	rotated := str(t, tn.do(t, http.MethodPost, "/api/v1/members/"+ana.prefID+"/creator/rotate-token", nil), "data.token")
	// Fresh unknown tokens each run: the per-token limit's buckets live in
	// the Redis every run of the suite shares.
	unknown := "unknown-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	for _, tok := range []string{token, unknown, creator.NewToken(), "%C3%28" + unknown, strings.Repeat("x", 4990) + unknown} {
		for _, suffix := range []string{"", "/tiers", "/sales"} {
			wantError(t, env.public(t, "/api/v1/creators/"+tok+suffix), http.StatusNotFound, "NOT_FOUND", "")
		}
	}
	wantFields(t, env.public(t, "/api/v1/creators/"+rotated), map[string]any{"totalSales": 4})
	wantStatus(t, tn.do(t, http.MethodDelete, "/api/v1/members/"+ana.prefID+"/creator", nil), http.StatusNoContent)
	for _, suffix := range []string{"", "/tiers", "/sales"} {
		wantError(t, env.public(t, "/api/v1/creators/"+rotated+suffix), http.StatusNotFound, "NOT_FOUND", "")
	}

	env.wantNoToken(t, token, rotated)
	env.v.WantExercised(t, ex("getPublicCreator", 200), ex("getPublicCreator", 400), ex("getPublicCreator", 404),
		ex("getPublicCreatorTiers", 200), ex("getPublicCreatorTiers", 400), ex("getPublicCreatorTiers", 404),
		ex("getPublicCreatorSales", 200), ex("getPublicCreatorSales", 400), ex("getPublicCreatorSales", 404))
}

// at sets the ledger's clock: the next write is one second after t.
func (e *creatorEnv) at(t time.Time) { e.ledgerClock.Advance(t.Sub(e.ledgerClock.Now())) }

// The stores' rows follow the tokens: the hash finds the profile, and a
// rotated token finds nothing.
func TestCreatorStoreTokenLookup(t *testing.T) {
	t.Parallel()
	env := mustCreatorEnv(t, creatorEnvOptions{})
	tn := env.mustTenant(t)
	tn.mustCampaign(t, map[string]any{"name": "Padrão", "reward_type": "fixed", "reward_value": 1000})
	ana := tn.mustMember(t, "ana@example.com", "Ana")
	token := tn.mustCreator(t, ana, "Ana")
	store := postgres.NewCreatorStore(env.pool, env.box)
	ctx := context.Background()
	p, err := store.FindCreatorByToken(ctx, token)
	if err != nil || p.MemberID != ana.id || p.MerchantID != tn.merchant.ID || p.Token != token {
		t.Fatalf("FindCreatorByToken = %+v, %v", p, err)
	}
	var sealed []byte
	if err := env.pool.QueryRow(ctx, `SELECT token_enc FROM creator_profiles WHERE member_id = $1`, ana.id).Scan(&sealed); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(sealed), token) {
		t.Error("the token is stored in clear")
	}
	if _, err := store.RotateCreatorToken(ctx, tn.merchant.ID, ana.id); err != nil {
		t.Fatal(err)
	}
	if _, err := store.FindCreatorByToken(ctx, token); err == nil {
		t.Error("the rotated token still finds the profile")
	}
}
