// Package e2e tests the whole service through its HTTP interfaces, with
// real PostgreSQL, Redis and the embedded broker over TCP; platforms are
// played by the test itself.
//
// This file holds the stack, its tenants and the helpers the tests share;
// platforms_test.go plays the platforms (their webhooks, from the bodies of
// pkg/inbound/testdata, and their APIs) and receivers_test.go the
// merchants' webhook receivers; checker_test.go sends the probes of the
// contract tests. A file named after a fake or a harness
// (coupon_shop_test.go, bounds_run_test.go, reconcile_hotmart_kiwify_test.go)
// holds what the tests of a few behaviours share; each other file is one
// behaviour.
package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest"
	"go.uber.org/zap/zaptest/observer"

	"github.com/convida/convida/pkg/campaign"
	"github.com/convida/convida/pkg/ids"
	"github.com/convida/convida/pkg/member"
	"github.com/convida/convida/pkg/merchant"
	"github.com/convida/convida/pkg/openapi/openapitest"
	"github.com/convida/convida/pkg/postgres"
	"github.com/convida/convida/pkg/program"
	"github.com/convida/convida/pkg/provider"
	"github.com/convida/convida/pkg/secretbox"
	"github.com/convida/convida/pkg/testenv"
)

// stack is a running Convida: ingest (and API) over loopback TCP, ledger,
// recorder and dispatcher consuming the embedded broker.
type stack struct {
	t         testing.TB
	logs      *observer.ObservedLogs // with stackOptions.observe
	deps      *program.Deps
	clock     *testenv.Clock // every role's clock (deps.Now): testenv.Now's instant, running
	ingestURL string
	apiURL    string
	opsURL    string // the operator's server (METRICS_ADDR): /readyz, /metrics
	cancel    context.CancelFunc
	wg        sync.WaitGroup
}

type stackOptions struct {
	brokers     []string // reuse a broker
	databaseURL string   // reuse a database (and pass its SECRETS_KEY in env)
	redisURL    string   // another Redis than the test one (a closed port: Redis down)
	noLedger    bool
	noRecorder  bool              // do not run the recorder (delivery records stay in the broker)
	dispatcher  bool              // run the dispatcher (webhooks, redemptions)
	scheduler   bool              // run the scheduler (SCHEDULER_INTERVAL in env)
	env         map[string]string // extra configuration; PLATFORM_ALLOW_PRIVATE_NETWORKS is "true" unless set here
	observe     bool              // keep every log entry, debug level up, in stack.logs
}

func startStack(t testing.TB, opt stackOptions) *stack {
	t.Helper()
	if opt.brokers == nil {
		opt.brokers = testenv.MustBroker(t)
	}
	if opt.databaseURL == "" {
		opt.databaseURL = testenv.MustDatabase(t)
	}
	// The fake platforms are on loopback: a test of the guard sets
	// PLATFORM_ALLOW_PRIVATE_NETWORKS to "false". The tests share one
	// client address (127.0.0.1) and one Redis: a test of the
	// failed-authentication limit turns it on itself, with addresses of its
	// own (forged_test.go).
	// A scheduler runs no scheduled reconciliation (the tenants' API URLs
	// are the platforms' own): a test asks for its runs.
	env := map[string]string{"PLATFORM_ALLOW_PRIVATE_NETWORKS": "true", "AUTH_FAILURE_LIMIT": "0", "RECONCILE_INTERVAL": "0"}
	maps.Copy(env, opt.env)
	cfg, err := program.LoadConfig(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if opt.redisURL == "" {
		opt.redisURL = testenv.RedisURL()
	}
	cfg.DatabaseURL, cfg.RedisURL, cfg.KafkaBrokers = opt.databaseURL, opt.redisURL, opt.brokers
	if cfg.SecretsKey == "" { // a second stack on a database passes the first one's key in env
		cfg.SecretsKey = secretbox.NewKey()
	}
	cfg.LedgerGroup = "ledger-test"
	log := zaptest.NewLogger(t, zaptest.Level(zap.WarnLevel))
	var logs *observer.ObservedLogs
	if opt.observe {
		var core zapcore.Core
		core, logs = observer.New(zap.DebugLevel)
		log = zap.New(zapcore.NewTee(log.Core(), core))
	}
	ctx, cancel := context.WithCancel(context.Background())
	d, err := program.Open(ctx, cfg, log, "test")
	if err != nil {
		cancel()
		t.Fatalf("program.Open: %v", err)
	}
	clock := testenv.NewClock(t)
	d.Now = clock.Now
	s := &stack{t: t, deps: d, clock: clock, cancel: cancel, logs: logs}
	ingestSrv := httptest.NewServer(program.IngestRouter(d))
	s.ingestURL = ingestSrv.URL
	apiSrv := httptest.NewServer(program.APIRouter(d))
	s.apiURL = apiSrv.URL
	opsSrv := httptest.NewServer(d.OpsRouter())
	s.opsURL = opsSrv.URL
	if !opt.noLedger {
		s.run(ctx, "ledger", program.RunLedger)
	}
	if !opt.noRecorder {
		s.run(ctx, "recorder", program.RunRecorder)
	}
	if opt.dispatcher {
		s.run(ctx, "dispatcher", program.RunDispatcher)
	}
	if opt.scheduler {
		s.run(ctx, "scheduler", program.RunScheduler)
	}
	t.Cleanup(func() {
		cancel()
		ingestSrv.Close()
		apiSrv.Close()
		opsSrv.Close()
		s.wg.Wait()
		d.Close()
	})
	return s
}

// secondDeps opens a second set of connections on the same configuration:
// a second API instance.
func (s *stack) secondDeps(t testing.TB) *program.Deps {
	d, err := program.Open(context.Background(), s.deps.Config, s.deps.Log, "test-2")
	if err != nil {
		t.Fatal(err)
	}
	d.Now = s.clock.Now
	t.Cleanup(d.Close)
	return d
}

func checkLedger(s *stack) error { return postgres.CheckLedger(context.Background(), s.deps.Pool) }

func (s *stack) run(ctx context.Context, name string, fn func(context.Context, *program.Deps) error) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		if err := fn(ctx, s.deps); err != nil && !errors.Is(err, context.Canceled) {
			s.t.Errorf("%s: %v", name, err)
		}
	}()
}

// tenant is a merchant with Guru and Yampi configured and a campaign;
// Hotmart and Kiwify once withHotmartKiwify configured them, Eduzz once
// withEduzz did.
type tenant struct {
	merchant    *merchant.Merchant
	campaign    *campaign.Campaign
	guruToken   string
	yampiSecret string
	hottok      string
	kiwifyToken string
	eduzzSecret string
	apiKey      string
}

// withHotmartKiwify saves Hotmart's hottok and Kiwify's webhook token for
// tn (and, when checkoutURL is set, Kiwify's checkout link), as the API
// would, and returns tn.
func (s *stack) withHotmartKiwify(tn *tenant, checkoutURL string) *tenant {
	s.t.Helper()
	tn.hottok, tn.kiwifyToken = "hottok-"+strings.Repeat("h", 24), "kiwify-token-"+strings.Repeat("k", 16)
	store := postgres.NewMerchantStore(s.deps.Pool, s.deps.Box)
	for _, in := range []merchant.Integration{
		{Provider: provider.Hotmart, AccountToken: tn.hottok},
		{Provider: provider.Kiwify, WebhookSecret: tn.kiwifyToken, CheckoutURL: checkoutURL},
	} {
		if _, err := store.PutIntegration(context.Background(), tn.merchant.ID, in); err != nil {
			s.t.Fatal(err)
		}
	}
	return tn
}

// withEduzz saves Eduzz's webhook secret for tn (and, when checkoutURL is
// set, its checkout link), as the API would, and returns tn.
func (s *stack) withEduzz(tn *tenant, checkoutURL string) *tenant {
	s.t.Helper()
	tn.eduzzSecret = "eduzz-secret-" + strings.Repeat("e", 16)
	in := merchant.Integration{Provider: provider.Eduzz, WebhookSecret: tn.eduzzSecret, CheckoutURL: checkoutURL}
	if _, err := postgres.NewMerchantStore(s.deps.Pool, s.deps.Box).PutIntegration(context.Background(), tn.merchant.ID, in); err != nil {
		s.t.Fatal(err)
	}
	return tn
}

func (s *stack) newTenant(c campaign.Campaign) *tenant {
	s.t.Helper()
	return s.newTenantWith(merchant.Merchant{}, c)
}

// newTenantWith is newTenant with the merchant's settings (rate limits).
func (s *stack) newTenantWith(m merchant.Merchant, c campaign.Campaign) *tenant {
	s.t.Helper()
	tn := &tenant{guruToken: strings.Repeat("g", 40), yampiSecret: "wh_test_secret"}
	created := testenv.MustTenant(s.t, s.deps.Pool, s.deps.Box, m,
		merchant.Integration{Provider: provider.Guru, AccountToken: tn.guruToken, UserToken: "guru-user-token"},
		merchant.Integration{Provider: provider.Yampi, WebhookSecret: tn.yampiSecret, UserToken: "yt", UserSecretKey: "ys", StoreAlias: "loja"})
	tn.merchant, tn.apiKey = created.Merchant, created.Key
	tn.campaign = testenv.MustCampaign(s.t, s.deps.Pool, tn.merchant.ID, c)
	return tn
}

func (s *stack) newMember(tn *tenant, email, name string) *member.Member {
	s.t.Helper()
	m := &member.Member{MerchantID: tn.merchant.ID, Email: email, Name: name, CampaignID: tn.campaign.ID}
	// As the API does: the member.created event is relayed at once.
	store := postgres.NewMemberStore(s.deps.Pool).WithRelay(s.deps.Relay()).WithClock(s.clock.Now)
	if err := store.CreateMember(context.Background(), m, tn.merchant.CodePrefix); err != nil {
		s.t.Fatal(err)
	}
	return m
}

// startWithAna starts a stack with opt and a tenant whose campaign pays a
// fixed reward (warranty 7 days), with one member, Ana Souza.
func startWithAna(t testing.TB, opt stackOptions, reward int64) (*stack, *tenant, *member.Member) {
	t.Helper()
	s := startStack(t, opt)
	tn := s.newTenant(testenv.FixedCampaign(reward, 7))
	return s, tn, s.newMember(tn, "ana@example.com", "Ana Souza")
}

type response struct {
	Status int
	Body   []byte
	Header http.Header
}

func (r response) json(t testing.TB) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(r.Body, &v); err != nil {
		t.Fatalf("body %q is not JSON: %v", r.Body, err)
	}
	return v
}

func do(t testing.TB, method, url string, body []byte, header map[string]string) response {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode >= 500 && res.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("%s %s answered %d: %s", method, url, res.StatusCode, b)
	}
	return response{Status: res.StatusCode, Body: b, Header: res.Header}
}

// api calls the API with the tenant's key and decodes the JSON answer.
func (s *stack) api(tn *tenant, method, path string, body []byte) (int, map[string]any) {
	s.t.Helper()
	res := do(s.t, method, s.apiURL+"/api/v1"+path, body, map[string]string{"X-API-Key": tn.apiKey, "Content-Type": "application/json"})
	return res.Status, res.json(s.t)
}

// count runs a count(*) query on the stack's database.
func (s *stack) count(query string, args ...any) int {
	s.t.Helper()
	var n int
	if err := s.deps.Pool.QueryRow(context.Background(), query, args...).Scan(&n); err != nil {
		s.t.Fatal(err)
	}
	return n
}

// wantStatus fails the test, without stopping it, unless res has status want.
func wantStatus(t testing.TB, res response, want int) {
	t.Helper()
	if res.Status != want {
		t.Errorf("status = %d (%s), want %d", res.Status, res.Body, want)
	}
}

// wallet is the member-facing balance as the API shows it.
type wallet struct{ totalEarned, totalRedeemed, available, pending, cancelled int64 }

func (s *stack) balance(tn *tenant, email string) wallet {
	s.t.Helper()
	status, body := s.api(tn, http.MethodGet, "/wallet/balance?email="+url.QueryEscape(email), nil)
	if status != 200 {
		s.t.Fatalf("GET /wallet/balance = %d %v", status, body)
	}
	b := body["data"].(map[string]any)["balance"].(map[string]any)
	n := func(k string) int64 { return int64(b[k].(float64)) }
	return wallet{n("totalEarned"), n("totalRedeemed"), n("available"), n("pending"), n("cancelled")}
}

// transactionStatuses returns "amount:status" of the public transactions, sorted.
func (s *stack) transactionStatuses(tn *tenant, email string) []string {
	s.t.Helper()
	status, body := s.api(tn, http.MethodGet, "/wallet/transactions?email="+url.QueryEscape(email), nil)
	if status != 200 {
		s.t.Fatalf("GET /wallet/transactions = %d %v", status, body)
	}
	var out []string
	for _, t := range body["data"].(map[string]any)["transactions"].([]any) {
		tx := t.(map[string]any)
		out = append(out, fmt.Sprintf("%s:%d:%s", tx["type"], int64(tx["amount"].(float64)), tx["status"]))
	}
	sort.Strings(out)
	return out
}

func (s *stack) waitBalance(tn *tenant, email string, want wallet) {
	s.t.Helper()
	var got wallet
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		if got = s.balance(tn, email); got == want {
			return
		}
		time.Sleep(25 * time.Millisecond)
	}
	s.t.Fatalf("balance = %+v, want %+v", got, want)
}

// richMember returns a member of a fresh tenant with `available` cents
// available: one sale credited through the ingest and approved by hand
// through the API. The tenant's Guru and Yampi API calls go to guru and
// yampi; with both nil its integrations stay as newTenant saved them.
func (s *stack) richMember(t *testing.T, available int64, minRedemption int64, guru, yampi *platform) (*tenant, *member.Member) {
	tn := s.newTenant(campaign.Campaign{Name: "Fixo", RewardType: campaign.RewardFixed, RewardValue: available,
		WarrantyDays: 30, MinRedemption: minRedemption, IsActive: true})
	for provider, p := range map[string]*platform{"guru": guru, "yampi": yampi} {
		if p == nil {
			continue
		}
		body := `{"user_token": "guru-user-token", "api_url": "` + p.srv.URL + `"}`
		if provider == "yampi" {
			body = `{"user_token": "yampi-ut", "user_secret_key": "yampi-usk", "store_alias": "loja", "api_url": "` + p.srv.URL + `"}`
		}
		if status, res := s.api(tn, http.MethodPut, "/integrations/"+provider, []byte(body)); status != 200 {
			t.Fatalf("PUT integration %s = %d %v", provider, status, res)
		}
	}
	m := s.newMember(tn, "ana@example.com", "Ana Souza")
	wantStatus(t, s.postGuru(tn, guruSale(t, tn, "rich-1", m.CouponCode, 100, "approved")), 200)
	s.waitBalance(tn, m.Email, wallet{totalEarned: available, pending: available})
	var refID string
	_ = s.deps.Pool.QueryRow(context.Background(), `SELECT id::text FROM referrals WHERE merchant_id = $1`, tn.merchant.ID).Scan(&refID)
	ref, _ := ids.Parse(ids.Referral, refID)
	// 202: the ledger did not answer within ACTION_TIMEOUT (1 s in some
	// tests, which a loaded machine exceeds); the approval is accepted and
	// the wait below sees it land.
	status, body := s.api(tn, http.MethodPost, "/referrals/"+ids.Format(ids.Referral, ref)+"/approve", []byte(`{"notes":"checked"}`))
	if status != 202 && (status != 200 || body["data"].(map[string]any)["status"] != "approved") {
		t.Fatalf("approve = %d %v", status, body)
	}
	s.waitBalance(tn, m.Email, wallet{totalEarned: available, available: available})
	return tn, m
}

func startRedeemStack(t *testing.T) *stack {
	return startStack(t, stackOptions{dispatcher: true, env: map[string]string{"REDEMPTION_RETRY_DELAYS": "50ms,50ms,50ms,50ms", "ACTION_TIMEOUT": "60s"}})
}

func ex(op string, status int) openapitest.Exercise {
	return openapitest.Exercise{Operation: op, Status: status}
}
