// Package e2e tests the whole service through its HTTP interfaces, with
// real PostgreSQL, Redis and the embedded broker over TCP; platforms are
// played by the test itself.
//
// This file holds the stack and every helper the tests share (tenants,
// platforms, webhook receivers, the platforms' bodies from
// pkg/inbound/testdata); each other file is one behaviour.
package e2e

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest"
	"go.uber.org/zap/zaptest/observer"

	"github.com/convida/convida/pkg/campaign"
	"github.com/convida/convida/pkg/ids"
	"github.com/convida/convida/pkg/inbound"
	"github.com/convida/convida/pkg/member"
	"github.com/convida/convida/pkg/merchant"
	"github.com/convida/convida/pkg/openapi/openapitest"
	"github.com/convida/convida/pkg/outbox"
	"github.com/convida/convida/pkg/postgres"
	"github.com/convida/convida/pkg/program"
	"github.com/convida/convida/pkg/secretbox"
	"github.com/convida/convida/pkg/testenv"
	"github.com/convida/convida/pkg/webhook"
)

// stack is a running Convida: ingest (and API) over loopback TCP, ledger,
// recorder and dispatcher consuming the embedded broker.
type stack struct {
	t         testing.TB
	logs      *observer.ObservedLogs // with stackOptions.observe
	deps      *program.Deps
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
	s := &stack{t: t, deps: d, cancel: cancel, logs: logs}
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
// Hotmart and Kiwify once withHotmartKiwify configured them.
type tenant struct {
	merchant    *merchant.Merchant
	campaign    *campaign.Campaign
	guruToken   string
	yampiSecret string
	hottok      string
	kiwifyToken string
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
		{Provider: merchant.ProviderHotmart, AccountToken: tn.hottok},
		{Provider: merchant.ProviderKiwify, WebhookSecret: tn.kiwifyToken, CheckoutURL: checkoutURL},
	} {
		if _, err := store.PutIntegration(context.Background(), tn.merchant.ID, in); err != nil {
			s.t.Fatal(err)
		}
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
		merchant.Integration{Provider: merchant.ProviderGuru, AccountToken: tn.guruToken, UserToken: "guru-user-token"},
		merchant.Integration{Provider: merchant.ProviderYampi, WebhookSecret: tn.yampiSecret, UserToken: "yt", UserSecretKey: "ys", StoreAlias: "loja"})
	tn.merchant, tn.apiKey = created.Merchant, created.Key
	tn.campaign = testenv.MustCampaign(s.t, s.deps.Pool, tn.merchant.ID, c)
	return tn
}

func (s *stack) newMember(tn *tenant, email, name string) *member.Member {
	s.t.Helper()
	m := &member.Member{MerchantID: tn.merchant.ID, Email: email, Name: name, CampaignID: tn.campaign.ID}
	// As the API does: the member.created event is relayed at once.
	store := postgres.NewMemberStore(s.deps.Pool).WithRelay(s.deps.Relay())
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

// The platforms' bodies are pkg/inbound's fixtures, read from there so that
// the adapters and the whole pipeline are tested on the same bytes.
const (
	guruApproved  = "guru/transaction-approved.json"
	guruRefunded  = "guru/transaction-refunded.json"
	yampiPaid     = "yampi/order-paid.json"
	yampiRefunded = "yampi/order-status-updated-refunded.json"
	hotmartPaid   = "hotmart/purchase-approved.json"
	kiwifyPaid    = "kiwify/order-approved.json"
)

// fixture returns a body of pkg/inbound/testdata with JSON fields replaced
// by path ("payment.coupon.coupon_code" → value).
func fixture(t testing.TB, name string, set map[string]any) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "inbound", "testdata", filepath.FromSlash(name)))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	for path, v := range paidNow(name, time.Now()) {
		setPath(doc, path, v, true)
	}
	for path, v := range set {
		setPath(doc, path, v, false)
	}
	out, _ := json.Marshal(doc)
	return out
}

// paidNow dates a fixture's sale now, as a platform would: the warranty
// runs from the payment's time, so a fixture keeping the day it was
// written would be past its warranty a week later, and the scheduler of a
// test would release it. A test that needs another time sets it.
func paidNow(name string, now time.Time) map[string]any {
	sp := now.In(saoPaulo)
	switch strings.SplitN(name, "/", 2)[0] {
	case "guru":
		at := now.UTC().Format(time.RFC3339)
		return map[string]any{"dates.ordered_at": at, "dates.confirmed_at": at}
	case "yampi":
		return map[string]any{"time": sp.Format("2006-01-02 15:04:05"), "resource.created_at.date": sp.Format("2006-01-02 15:04:05.000000")}
	case "hotmart":
		return map[string]any{"data.purchase.approved_date": now.UnixMilli(), "data.purchase.order_date": now.UnixMilli()}
	case "kiwify":
		return map[string]any{"approved_date": sp.Format("2006-01-02 15:04"), "created_at": sp.Format("2006-01-02 15:04")}
	}
	return nil
}

// saoPaulo is the platforms' local time (Yampi's and Kiwify's dates carry
// no zone); Brazil has had no daylight saving time since 2019.
var saoPaulo = time.FixedZone("America/Sao_Paulo", -3*60*60)

// setPath sets the dotted path of doc to v; onlyPresent leaves a path
// whose field the fixture does not have (or has null) alone.
func setPath(doc map[string]any, path string, v any, onlyPresent bool) {
	parts := strings.Split(path, ".")
	node := doc
	for _, p := range parts[:len(parts)-1] {
		next, ok := node[p].(map[string]any)
		if !ok && onlyPresent {
			return
		}
		node = next
	}
	last := parts[len(parts)-1]
	if cur, ok := node[last]; onlyPresent && (!ok || cur == nil) {
		return
	}
	node[last] = v
}

func guruSale(t testing.TB, tn *tenant, orderID, coupon string, total float64, status string) []byte {
	file := guruApproved
	if status != "approved" {
		file = guruRefunded
	}
	return fixture(t, file, map[string]any{"api_token": tn.guruToken, "id": orderID, "status": status,
		"payment.coupon.coupon_code": coupon, "payment.total": total})
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

func (s *stack) postGuru(tn *tenant, body []byte) response {
	return do(s.t, http.MethodPost, s.ingestURL+"/api/webhooks/guru/"+tn.merchant.ID.String(), body,
		map[string]string{"Content-Type": "application/json"})
}

func yampiSign(secret string, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	return base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

func (s *stack) postYampi(tn *tenant, body []byte, signature string) response {
	if signature == "" {
		signature = yampiSign(tn.yampiSecret, body)
	}
	return do(s.t, http.MethodPost, s.ingestURL+"/api/webhooks/yampi/"+tn.merchant.ID.String(), body,
		map[string]string{"Content-Type": "application/json", "X-Yampi-Hmac-SHA256": signature})
}

// hotmartHeader is the header of a Hotmart delivery carrying hottok.
func hotmartHeader(hottok string) map[string]string {
	return map[string]string{"Content-Type": "application/json", "X-HOTMART-HOTTOK": hottok}
}

func (s *stack) postHotmart(tn *tenant, body []byte, hottok string) response {
	return do(s.t, http.MethodPost, s.ingestURL+"/api/webhooks/hotmart/"+tn.merchant.ID.String(), body, hotmartHeader(hottok))
}

// kiwifySign is Kiwify's signature of body: hex(HMAC-SHA1(body, token)).
func kiwifySign(token string, body []byte) string { return inbound.KiwifySignature(body, token) }

// kiwifyPath is the path of tn's Kiwify webhooks with signature in the
// query (none when empty).
func kiwifyPath(tn *tenant, signature string) string {
	path := "/api/webhooks/kiwify/" + tn.merchant.ID.String()
	if signature != "" {
		path += "?signature=" + url.QueryEscape(signature)
	}
	return path
}

func (s *stack) postKiwify(tn *tenant, body []byte, signature string) response {
	return do(s.t, http.MethodPost, s.ingestURL+kiwifyPath(tn, signature), body, map[string]string{"Content-Type": "application/json"})
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

func yampiOrder(t testing.TB, file string, orderID int, coupon string, total float64) []byte {
	return fixture(t, file, map[string]any{"resource.id": orderID, "resource.promocode.data.code": coupon,
		"resource.value_total": total})
}

// platform is a local HTTP server playing Guru and Yampi; fail decides the
// status of each platform call (0 = success); respond, when set, answers
// the calls fail lets through (a coupon shop: coupon_test.go). Set both
// before the calls.
type platform struct {
	srv      *httptest.Server
	mu       sync.Mutex
	requests []string // "METHOD path[?query] auth body"
	fail     func(n int64, path string) int
	respond  func(r *http.Request, body []byte) (status int, answer string)
	delay    time.Duration // answer this late (set before the calls)
	calls    atomic.Int64
}

func newPlatform(t *testing.T) *platform {
	p := &platform{}
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		auth := r.Header.Get("Authorization") + r.Header.Get("User-Token") + "/" + r.Header.Get("User-Secret-Key")
		p.mu.Lock()
		target := r.URL.Path
		if r.URL.RawQuery != "" {
			target += "?" + r.URL.RawQuery
		}
		p.requests = append(p.requests, fmt.Sprintf("%s %s %s %s", r.Method, target, auth, body))
		p.mu.Unlock()
		time.Sleep(p.delay)
		if p.fail != nil {
			if code := p.fail(p.calls.Add(1), r.URL.Path); code != 0 {
				w.WriteHeader(code)
				_, _ = w.Write([]byte(`{"message":"refused by the test platform"}`))
				return
			}
		}
		w.Header().Set("Content-Type", "application/json")
		if p.respond != nil {
			status, answer := p.respond(r, body)
			w.WriteHeader(status)
			_, _ = w.Write([]byte(answer))
			return
		}
		if r.Method == http.MethodGet {
			_, _ = w.Write([]byte(`{"id":"sub_1","charged_times":3}`))
			return
		}
		_, _ = w.Write([]byte(`{"data":{"id":1}}`))
	}))
	t.Cleanup(p.srv.Close)
	return p
}

func (p *platform) seen() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.requests...)
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

// receiver is a merchant's HTTPS webhook endpoint played by the test. It
// checks both signatures of every request and keeps what it received.
type receiver struct {
	t      testing.TB
	srv    *httptest.Server
	secret atomic.Value // string: the endpoint's secret, known after creation
	answer func(n int64, r *http.Request) int
	calls  atomic.Int64

	mu  sync.Mutex
	got []received
}

type received struct {
	id, typ    string
	delivery   string
	at         time.Time
	createdAt  time.Time
	data       map[string]any
	validSigs  bool
	sigProblem string
}

func newReceiver(t testing.TB, answer func(n int64, r *http.Request) int) *receiver {
	rc := &receiver{t: t, answer: answer}
	rc.srv = httptest.NewTLSServer(http.HandlerFunc(rc.serve))
	t.Cleanup(rc.srv.Close)
	return rc
}

func (rc *receiver) serve(w http.ResponseWriter, r *http.Request) {
	n := rc.calls.Add(1)
	body, _ := io.ReadAll(r.Body)
	if rc.answer != nil {
		if code := rc.answer(n, r); code != 200 {
			w.WriteHeader(code)
			return
		}
	}
	var env struct {
		ID        string         `json:"id"`
		Type      string         `json:"type"`
		CreatedAt time.Time      `json:"created_at"`
		Data      map[string]any `json:"data"`
	}
	_ = json.Unmarshal(body, &env)
	got := received{id: env.ID, typ: env.Type, delivery: r.Header.Get("X-Service-Delivery"), at: time.Now(),
		createdAt: env.CreatedAt, data: env.Data}
	secret, _ := rc.secret.Load().(string)
	switch {
	case secret == "":
		got.sigProblem = "secret not known yet"
	case !webhook.VerifyServiceSignature(secret, body, r.Header.Get("X-Service-Signature")):
		got.sigProblem = "X-Service-Signature does not verify"
	case webhook.VerifyStandard(secret, r.Header, body, 5*time.Minute, time.Now()) != nil:
		got.sigProblem = "webhook-signature does not verify"
	case r.Header.Get("webhook-id") != env.ID || r.Header.Get("X-Service-Event") != env.Type:
		got.sigProblem = "webhook-id or X-Service-Event differ from the body"
	default:
		got.validSigs = true
	}
	rc.mu.Lock()
	rc.got = append(rc.got, got)
	rc.mu.Unlock()
	w.WriteHeader(http.StatusOK)
}

func (rc *receiver) received() []received {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return slices.Clone(rc.got)
}

// caFile writes the certificate of httptest's TLS servers (one for all of
// them) to a PEM file for WEBHOOK_CA_FILE.
func caFile(t testing.TB) string {
	srv := httptest.NewTLSServer(http.NotFoundHandler())
	defer srv.Close()
	path := filepath.Join(t.TempDir(), "ca.pem")
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	if err := os.WriteFile(path, pemBytes, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// webhookEnv is the configuration of a stack whose receivers are local.
func webhookEnv(t testing.TB, extra map[string]string) map[string]string {
	env := map[string]string{"WEBHOOK_ALLOW_PRIVATE_NETWORKS": "true", "WEBHOOK_CA_FILE": caFile(t),
		"SCHEDULER_INTERVAL": "100ms", "WEBHOOK_RETRY_SCHEDULE": "1s,1s,1s,1s"}
	for k, v := range extra {
		env[k] = v
	}
	return env
}

// hook creates an endpoint for rc through the management API.
func (s *stack) hook(tn *tenant, rc *receiver, events ...string) string {
	s.t.Helper()
	body, _ := json.Marshal(map[string]any{"url": rc.srv.URL + "/hooks", "events": events})
	res := do(s.t, http.MethodPost, s.apiURL+"/v1/webhooks", body, map[string]string{"Authorization": "Bearer " + tn.apiKey})
	if res.Status != http.StatusCreated {
		s.t.Fatalf("POST /v1/webhooks = %d %s", res.Status, res.Body)
	}
	data := res.json(s.t)["data"].(map[string]any)
	rc.secret.Store(data["secret"].(string))
	return data["id"].(string)
}

// publishEvents puts n events of merchant on the events topic the way the
// outbox relay does, spread over members.
func publishEvents(t testing.TB, s *stack, merchantID uuid.UUID, n int) []outbox.Record {
	recs := make([]outbox.Record, n)
	for i := range recs {
		r, err := outbox.NewRecord(merchantID, uuid.New(), "referral.created", map[string]any{"seq": i}, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		recs[i] = r
	}
	if err := s.deps.Events.PublishEvents(context.Background(), recs); err != nil {
		t.Fatal(err)
	}
	return recs
}
