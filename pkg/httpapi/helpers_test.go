package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/gorilla/mux"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/convida/convida/pkg/httpapi"
	"github.com/convida/convida/pkg/ids"
	"github.com/convida/convida/pkg/ledger"
	"github.com/convida/convida/pkg/merchant"
	"github.com/convida/convida/pkg/postgres"
	"github.com/convida/convida/pkg/secretbox"
	"github.com/convida/convida/pkg/testenv"
)

// ingestURL is the INGEST_PUBLIC_URL the test API is wired with.
const ingestURL = "https://ingest.convida.test"

// Formats the tests hold the API to.
var (
	reTimestamp = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$`)
	reUUID      = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
	reMemberID  = regexp.MustCompile(`^mem_[0-9a-f]{32}$`)
	reCampID    = regexp.MustCompile(`^camp_[0-9a-f]{32}$`)
	reTxnID     = regexp.MustCompile(`^txn_[0-9a-f]{32}$`)
	reNonEmpty  = regexp.MustCompile(`\S`)
)

// clock is a settable time source for httpapi.Config.Now.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// tickingClock returns a time source that moves one second per call, so
// ledger rows written one after another have increasing created_at.
func tickingClock(start time.Time) func() time.Time {
	var mu sync.Mutex
	t := start
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		t = t.Add(time.Second)
		return t
	}
}

// apiEnv is the API served over a loopback listener on a fresh database,
// wired like program.APIRouter.
type apiEnv struct {
	pool      *pgxpool.Pool
	box       *secretbox.Box
	merchants *postgres.MerchantStore
	ledger    *postgres.LedgerStore
	reads     *postgres.WalletReads
	clock     *clock
	url       string
	client    *http.Client
}

// t0 is when every test's clocks start.
var t0 = time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)

// envOptions shapes mustEnvWith. Every field is optional.
type envOptions struct {
	// wire adds to what every test server has (the stores of withBase):
	// the catalog, protection, webhooks.
	wire func(pool *pgxpool.Pool, box *secretbox.Box) httpapi.Config
	// routes adds the test's own routes to the router.
	routes func(s *httpapi.Server, r *mux.Router)
	// ledgerNow is the ledger store's clock (default tickingClock(t0)).
	ledgerNow func() time.Time
	// client returns the client the tests call the server with (default
	// the test server's own).
	client func(url string) *http.Client
}

// withBase fills in what every test server has: the stores on pool, the
// merchant store ms, a test logger (unless cfg has a logger), the clock and
// the ingest URL.
func withBase(tb testing.TB, pool *pgxpool.Pool, ms *postgres.MerchantStore, clk *clock, cfg httpapi.Config) httpapi.Config {
	cfg.Merchants = ms
	cfg.Campaigns = postgres.NewCampaignStore(pool)
	cfg.Members = postgres.NewMemberStore(pool)
	cfg.Wallets = postgres.NewWalletReads(pool)
	cfg.Coupons = postgres.NewCouponStore(pool)
	if cfg.Log == nil { // a test may keep its own
		cfg.Log = zaptest.NewLogger(tb, zaptest.Level(zap.WarnLevel)) // no info lines: a fuzz target may not log
	}
	cfg.Now = clk.Now
	cfg.IngestPublicURL = ingestURL
	return cfg
}

// mustEnvWith serves the API, wired by withBase and o.wire, on a fresh
// database.
func mustEnvWith(tb testing.TB, o envOptions) *apiEnv {
	tb.Helper()
	pool, box := testenv.MustPool(tb), testenv.MustBox(tb)
	clk := &clock{t: t0}
	ms := postgres.NewMerchantStore(pool, box)
	var cfg httpapi.Config
	if o.wire != nil {
		cfg = o.wire(pool, box)
	}
	s, router := httpapi.New(withBase(tb, pool, ms, clk, cfg))
	if o.routes != nil {
		o.routes(s, router)
	}
	srv := httptest.NewServer(router)
	tb.Cleanup(srv.Close)
	if o.ledgerNow == nil {
		o.ledgerNow = tickingClock(t0)
	}
	client := srv.Client()
	if o.client != nil {
		client = o.client(srv.URL)
	}
	return &apiEnv{
		pool: pool, box: box, merchants: ms,
		ledger: postgres.NewLedgerStore(pool, o.ledgerNow),
		reads:  postgres.NewWalletReads(pool),
		clock:  clk, url: srv.URL, client: client,
	}
}

// mustEnv is the API with the stores every test server has and nothing
// more: no catalog, protection or webhooks.
func mustEnv(tb testing.TB) *apiEnv {
	tb.Helper()
	return mustEnvWith(tb, envOptions{})
}

// catalog is the catalog wiring of program.APIRouter.
func catalog(pool *pgxpool.Pool) httpapi.CatalogConfig {
	return httpapi.CatalogConfig{
		Members:   postgres.NewMemberStore(pool),
		Campaigns: postgres.NewCampaignStore(pool),
		Referrals: postgres.NewReferralReads(pool),
	}
}

// tenant is a merchant with one API key.
type tenant struct {
	env      *apiEnv
	merchant *merchant.Merchant
	key      string
}

// storeURL is every test merchant's store: the referral link must keep its
// query parameter.
const storeURL = "https://loja.example.com/produtos?utm_source=convida"

// mustTenant creates a merchant named "Loja Exemplo" (code prefix LOJ) and
// an API key for it.
func (e *apiEnv) mustTenant(tb testing.TB) *tenant {
	tb.Helper()
	return e.mustTenantWith(tb, merchant.Merchant{})
}

// mustTenantWith is mustTenant with settings (rate limits) and
// integrations; the store is storeURL unless m names another.
func (e *apiEnv) mustTenantWith(tb testing.TB, m merchant.Merchant, integrations ...merchant.Integration) *tenant {
	tb.Helper()
	if m.StoreURL == "" {
		m.StoreURL = storeURL
	}
	tn := testenv.MustTenantOn(tb, e.clock.Now, e.pool, e.box, m, integrations...)
	return &tenant{env: e, merchant: tn.Merchant, key: tn.Key}
}

// anotherKey returns the tenant's merchant with a second API key.
func (tn *tenant) anotherKey(tb testing.TB) *tenant {
	tb.Helper()
	return &tenant{env: tn.env, merchant: tn.merchant, key: testenv.MustKey(tb, tn.env.pool, tn.merchant.ID)}
}

// request is one HTTP call. body is sent as is when it is a string or
// []byte, JSON-encoded otherwise, and omitted when nil.
type request struct {
	method string
	path   string
	header map[string]string
	body   any
}

// reply is what the client saw.
type reply struct {
	status int
	header http.Header
	raw    []byte
	json   any // decoded with UseNumber; nil when the body is empty
}

func (r reply) String() string { return fmt.Sprintf("%d %s", r.status, bytes.TrimSpace(r.raw)) }

// call sends req and fails the test on a transport error, on any 5xx and on
// a body that is not JSON.
func (e *apiEnv) call(tb testing.TB, req request) reply {
	tb.Helper()
	r, err := e.try(req)
	if err != nil {
		tb.Fatalf("%s %s: %v", req.method, req.path, err)
	}
	if ct := r.header.Get("Content-Type"); len(bytes.TrimSpace(r.raw)) > 0 && !strings.HasPrefix(ct, "application/json") {
		tb.Errorf("%s %s: Content-Type = %q, want application/json", req.method, req.path, ct)
	}
	return r
}

// try is call for any goroutine: it returns what call would fail on as an
// error.
func (e *apiEnv) try(req request) (reply, error) {
	var body io.Reader
	switch b := req.body.(type) {
	case nil:
	case string:
		body = strings.NewReader(b)
	case []byte:
		body = bytes.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			return reply{}, fmt.Errorf("marshal body: %w", err)
		}
		body = bytes.NewReader(raw)
	}
	hr, err := http.NewRequest(req.method, e.url+req.path, body)
	if err != nil {
		return reply{}, err
	}
	if body != nil {
		hr.Header.Set("Content-Type", "application/json")
	}
	for k, v := range req.header {
		hr.Header.Set(k, v)
	}
	resp, err := e.client.Do(hr)
	if err != nil {
		return reply{}, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return reply{}, fmt.Errorf("read body: %w", err)
	}
	r := reply{status: resp.StatusCode, header: resp.Header, raw: raw}
	if r.status >= 500 {
		return r, fmt.Errorf("got %s; a 5xx is always a bug", r)
	}
	if len(bytes.TrimSpace(raw)) > 0 {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		if err := dec.Decode(&r.json); err != nil {
			return r, fmt.Errorf("body is not JSON: %v: %s", err, raw)
		}
	}
	return r, nil
}

// do calls the API with the tenant's key in X-API-Key.
func (tn *tenant) do(tb testing.TB, method, path string, body any) reply {
	tb.Helper()
	return tn.env.call(tb, request{method: method, path: path, body: body,
		header: map[string]string{"X-API-Key": tn.key}})
}

// get is do with GET.
func (tn *tenant) get(tb testing.TB, path string) reply {
	tb.Helper()
	return tn.do(tb, http.MethodGet, path, nil)
}

// mustCampaign creates a campaign through the API and returns its id.
func (tn *tenant) mustCampaign(tb testing.TB, body map[string]any) string {
	tb.Helper()
	r := tn.do(tb, http.MethodPost, "/api/v1/campaigns", body)
	wantStatus(tb, r, http.StatusCreated)
	return str(tb, r, "data.id")
}

// member is a member created through the API.
type member struct {
	id     uuid.UUID
	prefID string // mem_…
	email  string
	coupon string
}

// mustMember creates a member through the API.
func (tn *tenant) mustMember(tb testing.TB, email, name string) member {
	tb.Helper()
	r := tn.do(tb, http.MethodPost, "/api/v1/members", map[string]any{"email": email, "name": name})
	wantStatus(tb, r, http.StatusCreated)
	m := member{prefID: str(tb, r, "data.id"), email: email, coupon: str(tb, r, "data.coupon_code")}
	id, ok := ids.Parse(ids.Member, m.prefID)
	if !ok {
		tb.Fatalf("member id %q does not parse", m.prefID)
	}
	m.id = id
	return m
}

// mustLedger applies commands through the ledger store, the only writer of
// wallets.
func (tn *tenant) mustLedger(tb testing.TB, cmds ...ledger.Command) {
	tb.Helper()
	book, err := tn.env.ledger.ApplyBatch(context.Background(), cmds)
	if err != nil {
		tb.Fatalf("ApplyBatch: %v", err)
	}
	for _, o := range book.Outcomes {
		if o.Status != ledger.OutcomeApplied {
			tb.Fatalf("command %s: outcome %s (%s %s), want applied", o.CommandID, o.Status, o.ErrorCode, o.Reason)
		}
	}
}

// sale returns the credit_sale (or, with typ CmdRefund, the refund) of an
// order paid at t0 and attributed to m.
func (tn *tenant) sale(typ string, m member, order string, amount int64) ledger.Command {
	return ledger.Command{ID: "guru:" + order + ":" + typ, Type: typ, MerchantID: tn.merchant.ID, MemberID: m.id,
		IssuedAt: t0, Sale: &ledger.Sale{Source: "guru", OrderID: order, Amount: amount, Currency: "BRL",
			CouponCode: m.coupon, BuyerName: "Bruno Lima", BuyerEmail: "bruno." + order + "@example.com", PaidAt: t0}}
}

// release returns the command releasing the referral of order after its
// warranty (of at most 30 days) has passed.
func (tn *tenant) release(tb testing.TB, m member, order string) ledger.Command {
	tb.Helper()
	refID := tn.referralID(tb, m, order)
	return ledger.Command{ID: "release:" + refID.String(), Type: ledger.CmdRelease, MerchantID: tn.merchant.ID,
		MemberID: m.id, ReferralID: refID, IssuedAt: t0.Add(30 * 24 * time.Hour)}
}

// referralID returns the id of the member's referral of order.
func (tn *tenant) referralID(tb testing.TB, m member, order string) uuid.UUID {
	tb.Helper()
	refs, err := tn.env.reads.ListMemberReferrals(context.Background(), tn.merchant.ID, m.id)
	if err != nil {
		tb.Fatalf("ListMemberReferrals: %v", err)
	}
	for _, r := range refs {
		if r.OrderID == order {
			return r.ID
		}
	}
	tb.Fatalf("no referral of order %s", order)
	return uuid.Nil
}
