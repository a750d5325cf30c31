// Package e2e tests the whole service through its HTTP interfaces, with
// real PostgreSQL, Redis and the embedded broker over TCP; platforms are
// played by the test itself.
package e2e

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest"
	"go.uber.org/zap/zaptest/observer"

	"github.com/convida/convida/pkg/campaign"
	"github.com/convida/convida/pkg/member"
	"github.com/convida/convida/pkg/merchant"
	"github.com/convida/convida/pkg/outbox"
	"github.com/convida/convida/pkg/postgres"
	"github.com/convida/convida/pkg/program"
	"github.com/convida/convida/pkg/secretbox"
	"github.com/convida/convida/pkg/testenv"
)

// stack is a running Convida: ingest (and API) over loopback TCP, ledger
// and dispatcher consuming the embedded broker.
type stack struct {
	t         testing.TB
	logs      *observer.ObservedLogs // with stackOptions.observe
	deps      *program.Deps
	ingestURL string
	apiURL    string
	cancel    context.CancelFunc
	wg        sync.WaitGroup
}

type stackOptions struct {
	brokers     []string // reuse a broker
	databaseURL string   // reuse a database
	noLedger    bool
	dispatcher  bool              // run the dispatcher (webhooks, redemptions)
	scheduler   bool              // run the scheduler (SCHEDULER_INTERVAL in env)
	env         map[string]string // extra configuration
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
	cfg, err := program.LoadConfig(func(k string) string { return opt.env[k] })
	if err != nil {
		t.Fatal(err)
	}
	cfg.DatabaseURL, cfg.RedisURL, cfg.KafkaBrokers = opt.databaseURL, testenv.RedisURL(), opt.brokers
	cfg.SecretsKey = secretbox.NewKey()
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
	if !opt.noLedger {
		s.run(ctx, "ledger", program.RunLedger)
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

// tenant is a merchant with Guru and Yampi configured and a campaign.
type tenant struct {
	merchant    *merchant.Merchant
	campaign    *campaign.Campaign
	guruToken   string
	yampiSecret string
	apiKey      string
}

func (s *stack) newTenant(c campaign.Campaign) *tenant {
	s.t.Helper()
	ctx := context.Background()
	ms := postgres.NewMerchantStore(s.deps.Pool, s.deps.Box)
	m := &merchant.Merchant{Name: "Loja Exemplo", StoreURL: "https://loja.example.com", DashboardEmail: "owner@example.com"}
	if err := ms.CreateMerchant(ctx, m, "pw"); err != nil {
		s.t.Fatal(err)
	}
	key, _, err := ms.CreateKey(ctx, m.ID)
	if err != nil {
		s.t.Fatal(err)
	}
	tn := &tenant{merchant: m, guruToken: strings.Repeat("g", 40), yampiSecret: "wh_test_secret", apiKey: key}
	for _, in := range []merchant.Integration{
		{Provider: merchant.ProviderGuru, AccountToken: tn.guruToken, UserToken: "guru-user-token"},
		{Provider: merchant.ProviderYampi, WebhookSecret: tn.yampiSecret, UserToken: "yt", UserSecretKey: "ys", StoreAlias: "loja"},
	} {
		if _, err := ms.PutIntegration(ctx, m.ID, in); err != nil {
			s.t.Fatal(err)
		}
	}
	c.MerchantID = m.ID
	if err := postgres.NewCampaignStore(s.deps.Pool).CreateCampaign(ctx, &c); err != nil {
		s.t.Fatal(err)
	}
	tn.campaign = &c
	return tn
}

func (s *stack) newMember(tn *tenant, email, name string) *member.Member {
	s.t.Helper()
	m := &member.Member{MerchantID: tn.merchant.ID, Email: email, Name: name, CampaignID: tn.campaign.ID}
	// As the API does: the member.created event is relayed at once.
	store := postgres.NewMemberStore(s.deps.Pool).WithRelay(outbox.NewRelay(postgres.NewOutboxStore(s.deps.Pool), s.deps.Events))
	if err := store.CreateMember(context.Background(), m, tn.merchant.CodePrefix); err != nil {
		s.t.Fatal(err)
	}
	return m
}

// fixture returns a testdata body with JSON fields replaced by path
// ("payment.coupon.coupon_code" → value).
func fixture(t testing.TB, name string, set map[string]any) []byte {
	t.Helper()
	raw, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	for path, v := range set {
		parts := strings.Split(path, ".")
		node := doc
		for _, p := range parts[:len(parts)-1] {
			node = node[p].(map[string]any)
		}
		node[parts[len(parts)-1]] = v
	}
	out, _ := json.Marshal(doc)
	return out
}

func guruSale(t testing.TB, tn *tenant, orderID, coupon string, total float64, status string) []byte {
	file := "guru-approved.json"
	if status != "approved" {
		file = "guru-refunded.json"
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

// api calls the API with the tenant's key and decodes the JSON answer.
func (s *stack) api(tn *tenant, method, path string, body []byte) (int, map[string]any) {
	s.t.Helper()
	res := do(s.t, method, s.apiURL+"/api/v1"+path, body, map[string]string{"X-API-Key": tn.apiKey, "Content-Type": "application/json"})
	return res.Status, res.json(s.t)
}

// eventually polls cond until it holds or the deadline passes.
func eventually(t testing.TB, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", within, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
