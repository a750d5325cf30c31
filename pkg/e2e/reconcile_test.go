package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/convida/convida/pkg/member"
	"github.com/convida/convida/pkg/program"
	"github.com/convida/convida/pkg/testenv"
)

// salesAPI plays the pull contract of Guru (GET /transactions, cursor
// pages, Unix-second dates, one 429 with Retry-After: 1 first) and Yampi
// (GET /{alias}/orders, numbered pages, promocode_id without the
// promocode), serving the sales of one provider.
type salesAPI struct {
	srv      *httptest.Server
	mu       sync.Mutex
	provider string
	sales    []pulledSale
	limited  bool // the first request was answered 429
}

type pulledSale struct {
	order  string
	status string // "approved"/"refunded" (guru), "paid"/"refunded" (yampi)
	at     time.Time
}

func newSalesAPI(t *testing.T, provider, coupon string) *salesAPI {
	a := &salesAPI{provider: provider}
	a.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		defer a.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if !a.limited {
			a.limited = true
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
			_, _ = w.Write([]byte(`{"message":"too many requests"}`))
			return
		}
		var sales []pulledSale
		if (r.URL.Path == "/transactions") == (a.provider == "guru") {
			sales = a.sales
		}
		switch r.URL.Path {
		case "/transactions":
			if r.Header.Get("Authorization") != "Bearer guru-user-token" {
				w.WriteHeader(http.StatusUnauthorized)
				return
			}
			from, _ := strconv.Atoi(r.URL.Query().Get("cursor"))
			to := min(from+30, len(sales))
			items := []map[string]any{}
			for _, s := range sales[from:to] {
				items = append(items, map[string]any{"id": s.order, "status": s.status,
					"contact": map[string]any{"name": "Bia", "email": "bia@example.com", "doc": "12345678909"},
					"payment": map[string]any{"total": json.Number("100.00"), "currency": "BRL", "coupon": map[string]any{"coupon_code": coupon}},
					"dates":   map[string]any{"ordered_at": s.at.Unix(), "confirmed_at": s.at.Unix()}})
			}
			more := any(to < len(sales))
			if from > 0 {
				more = map[bool]int{true: 1, false: 0}[to < len(sales)] // both spellings occur
			}
			_ = json.NewEncoder(w).Encode(map[string]any{"data": items, "has_more_pages": more, "next_cursor": strconv.Itoa(to)})
		case "/loja/orders":
			if r.Header.Get("User-Token") != "yt" || r.Header.Get("User-Secret-Key") != "ys" {
				w.WriteHeader(http.StatusUnauthorized)
				return
			}
			const size = 50
			page, _ := strconv.Atoi(r.URL.Query().Get("page"))
			from := min((page-1)*size, len(sales))
			to := min(from+size, len(sales))
			items := []map[string]any{}
			for _, s := range sales[from:to] {
				items = append(items, yampiPulled(s, false, coupon))
			}
			total := (len(sales) + size - 1) / size
			_ = json.NewEncoder(w).Encode(map[string]any{"data": items,
				"meta": map[string]any{"pagination": map[string]any{"total": len(sales), "per_page": size, "current_page": page, "total_pages": total}}})
		default:
			for _, s := range sales {
				if r.URL.Path == "/loja/orders/"+s.order && r.URL.Query().Get("include") != "" {
					_ = json.NewEncoder(w).Encode(map[string]any{"data": yampiPulled(s, true, coupon)})
					return
				}
			}
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	t.Cleanup(a.srv.Close)
	return a
}

// yampiPulled is a Yampi order as GET orders lists it: with promocode_id
// and without the promocode, whose id is one of a member's coupons (555)
// for an odd order id and one Convida never kept (777) for an even one,
// which only GET orders/{id} (whole: with the promocode) attributes.
func yampiPulled(s pulledSale, whole bool, coupon string) map[string]any {
	id, _ := strconv.Atoi(s.order)
	o := map[string]any{"id": id, "status": map[string]any{"data": map[string]any{"alias": s.status}},
		"value_total": 100, "promocode_id": map[bool]int{true: 777, false: 555}[id%2 == 0],
		"customer":   map[string]any{"data": map[string]any{"name": "Bia", "email": "bia@example.com", "cpf": "12345678909"}},
		"created_at": map[string]any{"date": s.at.In(time.FixedZone("-03", -3*3600)).Format("2006-01-02 15:04:05.000000"), "timezone": "America/Sao_Paulo"}}
	if whole {
		o["promocode"] = map[string]any{"data": map[string]any{"code": coupon}}
	}
	return o
}

func (a *salesAPI) set(order, status string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for i := range a.sales {
		if a.sales[i].order == order {
			a.sales[i].status = status
		}
	}
}

// TestReconciliationFindsLostSales: for each platform with a pull (Guru,
// Yampi, Hotmart, Kiwify), 100 paid sales of which 10 never reach the
// ingest. A reconciliation asked for through the API and run by the
// scheduler's task credits the 10, so all 100 are credited exactly once;
// the 10 webhooks sent afterwards answer duplicate and change nothing; a
// second run finds nothing missing; a refund known only to the pull
// reverses its reward. The Yampi orders carry only promocode_id,
// attributed through coupon_ids, or, for an id Convida never kept, by
// reading the order whole; Hotmart's by the coupons of sales/price/details,
// Kiwify's by the referral link's sck. Kiwify's refund is of a sale made
// before the run's window: only the list by update finds it.
func TestReconciliationFindsLostSales(t *testing.T) {
	t.Parallel()
	s := startStack(t, stackOptions{})
	start := s.clock.Now()
	providers := []string{"guru", "yampi", "hotmart", "kiwify"}
	for _, provider := range providers {
		t.Run(provider, func(t *testing.T) {
			reconcileLostSales(t, s, provider)
		})
	}
	// Each provider: 10 sales and 1 refund found missing.
	metrics := scrape(t, s.opsURL+"/metrics")
	for _, provider := range providers {
		if n := metricSample(metrics, `convida_reconcile_missing_total{provider="`+provider+`"}`); n != 11 {
			t.Errorf("convida_reconcile_missing_total{provider=%q} = %v, want 11", provider, n)
		}
		at := metricSample(metrics, `convida_reconcile_last_success_timestamp_seconds{provider="`+provider+`"}`)
		// The clock moved on by RECONCILE_COOLDOWN after each run.
		if at < float64(start.Unix()) || at > float64(s.clock.Now().Unix()+1) {
			t.Errorf("convida_reconcile_last_success_timestamp_seconds{provider=%q} = %v, want a run of this test (from %v)", provider, at, start.Unix())
		}
	}
}

// lostSales is what TestReconciliationFindsLostSales does differently for
// one provider: its orders' ids, its webhook of a paid order, how its API
// learns of a refund, and the run that then finds it (its request's body
// and the sales it lists).
type lostSales struct {
	orders     []string
	webhook    func(order string) response
	refund     func(order string)
	refundRun  []byte
	refundSeen int
}

// lostSalesOf configures tn's integration of provider against a fake of
// its API serving 100 paid sales attributed to m.
func lostSalesOf(t *testing.T, s *stack, tn *tenant, m *member.Member, provider string) lostSales {
	ctx := context.Background()
	now := s.clock.Now().UTC()
	ls := lostSales{orders: make([]string, 100), refundSeen: 100}
	put := func(p, body string) {
		if status, res := s.api(tn, http.MethodPut, "/integrations/"+p, []byte(body)); status != 200 {
			t.Fatalf("PUT integration %s = %d %v", p, status, res)
		}
	}
	paidStatus := map[string]string{"guru": "approved", "yampi": "paid", "hotmart": "APPROVED", "kiwify": "paid"}[provider]
	var sales []pulledSale
	for i := range ls.orders {
		ls.orders[i] = map[string]string{"guru": "gr-", "yampi": "", "hotmart": "HP-LOST-", "kiwify": "kw-lost-"}[provider] + strconv.Itoa(i+1)
		if provider == "yampi" {
			ls.orders[i] = strconv.Itoa(880001 + i)
		}
		sales = append(sales, pulledSale{order: ls.orders[i], status: paidStatus, at: now.Add(-time.Duration(i+1) * time.Minute)})
	}
	switch provider {
	case "guru", "yampi":
		api := newSalesAPI(t, provider, m.CouponCode)
		api.sales = sales
		ls.refund = func(order string) { api.set(order, "refunded") }
		for _, p := range []string{"guru", "yampi"} { // both pull from the fake: the other provider lists nothing
			body := `{"user_token": "guru-user-token", "api_url": "` + api.srv.URL + `"}`
			if p == "yampi" {
				body = `{"user_token": "yt", "user_secret_key": "ys", "store_alias": "loja", "api_url": "` + api.srv.URL + `"}`
			}
			put(p, body)
		}
		if _, err := s.deps.Pool.Exec(ctx, `INSERT INTO coupon_ids (merchant_id, platform, coupon_id, member_id) VALUES ($1, 'yampi', '555', $2)`,
			tn.merchant.ID, m.ID); err != nil {
			t.Fatal(err)
		}
	default:
		s.withHotmartKiwify(tn, "")
		api := newHotmartKiwifyAPI(t, s.clock.Now, m.CouponCode)
		api.sales = sales
		ls.refund = func(order string) {
			api.set(order, map[string]string{"hotmart": "REFUNDED", "kiwify": "refunded"}[provider])
		}
		put("hotmart", `{"client_id": "hm-id", "client_secret": "hm-secret", "basic_token": "Basic aG0tYmFzaWM=", "api_url": "`+
			api.srv.URL+`/hotmart/api/v1", "auth_url": "`+api.srv.URL+`/hotmart/oauth/token"}`)
		put("kiwify", `{"client_id": "kw-id", "client_secret": "kw-secret", "account_id": "kw-account", "api_url": "`+api.srv.URL+`/kiwify/v1"}`)
		if provider == "kiwify" {
			// After every sale was made: only the list by update has the refund.
			ls.refundRun, ls.refundSeen = []byte(`{"from": "`+s.clock.Now().UTC().Add(-10*time.Second).Format(time.RFC3339)+`"}`), 1
		}
	}
	ls.webhook = func(order string) response {
		switch provider {
		case "guru":
			return s.postGuru(tn, guruSale(t, tn, order, m.CouponCode, 100, "approved"))
		case "yampi":
			id, _ := strconv.Atoi(order)
			body := yampiOrder(t, yampiPaid, id, m.CouponCode, 100)
			return s.postYampi(tn, body, yampiSign(tn.yampiSecret, body))
		case "hotmart":
			body := fixture(t, hotmartPaid, map[string]any{"data.purchase.transaction": order, "data.purchase.offer.coupon_code": m.CouponCode,
				"data.purchase.price.value": 100})
			return do(t, http.MethodPost, s.ingestURL+"/api/webhooks/hotmart/"+tn.merchant.ID.String(), body, hotmartHeader(tn.hottok))
		}
		body := fixture(t, kiwifyPaid, map[string]any{"order_id": order, "TrackingParameters.sck": m.CouponCode})
		return do(t, http.MethodPost, s.ingestURL+kiwifyPath(tn, kiwifySign(tn.kiwifyToken, body)), body,
			map[string]string{"Content-Type": "application/json"})
	}
	return ls
}

func reconcileLostSales(t *testing.T, s *stack, provider string) {
	ctx := context.Background()
	const reward = 1000
	tn := s.newTenant(testenv.FixedCampaign(reward, 7))
	m := s.newMember(tn, "ana@example.com", "Ana Souza")
	ls := lostSalesOf(t, s, tn, m, provider)
	orders, webhook := ls.orders, ls.webhook
	for _, order := range orders[10:] { // the first 10 webhooks are lost
		wantStatus(t, webhook(order), 200)
	}
	s.waitBalance(tn, m.Email, wallet{totalEarned: 90 * reward, pending: 90 * reward})

	task := program.NewReconcile(s.deps)
	reconcileNow := func(body []byte) map[string]any {
		t.Helper()
		status, res := s.api(tn, http.MethodPost, "/integrations/"+provider+"/reconcile", body)
		if status != http.StatusAccepted {
			t.Fatalf("POST reconcile = %d %v", status, res)
		}
		run := res["data"].(map[string]any)
		if run["status"] != "running" {
			t.Errorf("the run asked for = %v, want running", run)
		}
		if status, res := s.api(tn, http.MethodPost, "/integrations/"+provider+"/reconcile", nil); status != http.StatusTooManyRequests {
			t.Errorf("a second POST within RECONCILE_COOLDOWN = %d %v, want 429", status, res)
		}
		if err := task.Run(ctx, s.clock.Now()); err != nil {
			t.Fatal(err)
		}
		task.Wait()
		s.clock.Advance(s.deps.Config.ReconcileCooldown) // the next may be asked for
		status, res = s.api(tn, http.MethodGet, "/integrations/"+provider+"/reconciliations?per_page=1", nil)
		if status != 200 {
			t.Fatalf("GET reconciliations = %d %v", status, res)
		}
		last := res["data"].([]any)[0].(map[string]any)
		if last["id"] != run["id"] || last["status"] != "succeeded" {
			t.Fatalf("the newest run = %v, want %s succeeded", last, run["id"])
		}
		return last
	}
	counts := func(run map[string]any) string {
		return fmt.Sprintf("seen %v missing %v credited %v reversed %v", run["seen"], run["missing"], run["credited"], run["reversed"])
	}

	first := reconcileNow(nil)
	if got := counts(first); got != "seen 100 missing 10 credited 10 reversed 0" {
		t.Errorf("first run: %s", got)
	}
	s.waitBalance(tn, m.Email, wallet{totalEarned: 100 * reward, pending: 100 * reward})
	if got := s.count(`SELECT count(*) FROM referrals WHERE merchant_id = $1`, tn.merchant.ID); got != 100 {
		t.Errorf("referrals = %d, want 100", got)
	}

	// The lost webhooks arrive at last: duplicates, nothing changes.
	for _, order := range orders[:10] {
		res := webhook(order)
		wantStatus(t, res, 200)
		if got := res.json(t)["status"]; got != "duplicate" {
			t.Errorf("late webhook of %s = %v, want duplicate", order, got)
		}
	}
	// 90 + 10 webhook records, 10 of the reconciliation.
	s.waitRecords(tn, 110)
	if got := s.count(`SELECT count(*) FROM inbound_deliveries WHERE merchant_id = $1 AND source = 'reconciliation' AND outcome = 'accepted'`,
		tn.merchant.ID); got != 10 {
		t.Errorf("reconciliation deliveries = %d, want 10", got)
	}
	status, res := s.api(tn, http.MethodGet, "/integrations/"+provider+"/deliveries?per_page=100", nil)
	if status != 200 {
		t.Fatalf("GET deliveries = %d", status)
	}
	sources := map[any]int{}
	for _, d := range res["data"].([]any) {
		sources[d.(map[string]any)["source"]]++
	}
	if sources["reconciliation"] != 10 || sources["webhook"] != 90 {
		t.Errorf("the deliveries' sources = %v, want 10 reconciliation of 100 listed", sources)
	}

	second := reconcileNow(nil)
	if got := counts(second); got != "seen 100 missing 0 credited 0 reversed 0" {
		t.Errorf("second run: %s", got)
	}

	// A refund only the pull knows of.
	ls.refund(orders[0])
	third := reconcileNow(ls.refundRun)
	if got, want := counts(third), fmt.Sprintf("seen %d missing 1 credited 0 reversed 1", ls.refundSeen); got != want {
		t.Errorf("run after a refund: %s", got)
	}
	s.waitBalance(tn, m.Email, wallet{totalEarned: 99 * reward, pending: 99 * reward, cancelled: reward})
	time.Sleep(300 * time.Millisecond)
	if got := s.count(`SELECT count(*) FROM referrals WHERE merchant_id = $1`, tn.merchant.ID); got != 100 {
		t.Errorf("referrals = %d, want 100 (credited once each)", got)
	}
}

// TestScheduledReconciliation: the scheduler's task starts a run for each
// integration with pull credentials (Hotmart's and Kiwify's complete only)
// every RECONCILE_INTERVAL over the last
// RECONCILE_WINDOW (an integration that ran within the interval waits), and
// ends failed a run whose process stopped writing its heartbeat, so that
// its integration runs again.
func TestScheduledReconciliation(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := startStack(t, stackOptions{})
	tn := s.newTenant(testenv.FixedCampaign(1000, 7))
	m := s.newMember(tn, "ana@example.com", "Ana Souza")
	api := newSalesAPI(t, "guru", m.CouponCode)
	now := s.clock.Now().UTC()
	for i := range 5 {
		api.sales = append(api.sales, pulledSale{order: "sch-" + strconv.Itoa(i), status: "approved", at: now.Add(-time.Duration(i+1) * time.Hour)})
	}
	for p, body := range map[string]string{"guru": `{"user_token": "guru-user-token", "api_url": "` + api.srv.URL + `"}`,
		"yampi": `{"user_token": "yt", "user_secret_key": "ys", "store_alias": "loja", "api_url": "` + api.srv.URL + `"}`} {
		if status, res := s.api(tn, http.MethodPut, "/integrations/"+p, []byte(body)); status != 200 {
			t.Fatalf("PUT integration %s = %d %v", p, status, res)
		}
	}
	// Hotmart without its basic token has no pull yet; Kiwify with its
	// three credentials has one (against a fake listing nothing).
	s.withHotmartKiwify(tn, "")
	quiet := newHotmartKiwifyAPI(t, s.clock.Now, m.CouponCode)
	for p, body := range map[string]string{"hotmart": `{"client_id": "hm-id", "client_secret": "hm-secret"}`,
		"kiwify": `{"client_id": "kw-id", "client_secret": "kw-secret", "account_id": "kw-account", "api_url": "` + quiet.srv.URL + `/kiwify/v1"}`} {
		if status, res := s.api(tn, http.MethodPut, "/integrations/"+p, []byte(body)); status != 200 {
			t.Fatalf("PUT integration %s = %d %v", p, status, res)
		}
	}
	task := program.NewReconcile(s.deps)
	task.Interval, task.Window = time.Hour, 72*time.Hour
	runs := func(provider string) []string {
		var out []string
		rows, err := s.deps.Pool.Query(ctx, `SELECT status || ' ' || missing FROM reconciliation_runs WHERE merchant_id = $1 AND provider = $2
ORDER BY started_at`, tn.merchant.ID, provider)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var r string
			_ = rows.Scan(&r)
			out = append(out, r)
		}
		return out
	}
	tick := func(at time.Time) {
		t.Helper()
		if err := task.Run(ctx, at); err != nil {
			t.Fatal(err)
		}
		task.Wait()
	}
	tick(now)
	if got := fmt.Sprint(runs("guru"), runs("yampi")); got != "[succeeded 5] [succeeded 0]" {
		t.Errorf("after the first tick: guru and yampi runs %s, want one each, guru finding the 5 sales", got)
	}
	s.waitBalance(tn, m.Email, wallet{totalEarned: 5000, pending: 5000})
	if got := fmt.Sprint(runs("hotmart"), runs("kiwify")); got != "[] [succeeded 0]" {
		t.Errorf("after the first tick: hotmart and kiwify runs %s, want none for hotmart (no basic token) and one for kiwify", got)
	}
	tick(now.Add(2 * time.Minute)) // within the interval: nothing due
	if got := fmt.Sprint(runs("guru"), runs("yampi")); got != "[succeeded 5] [succeeded 0]" {
		t.Errorf("within the interval: %s, want no new run", got)
	}

	// A run left running by a process that died blocks its integration
	// until the stale sweep ends it.
	if _, err := s.deps.Pool.Exec(ctx, `INSERT INTO reconciliation_runs (merchant_id, id, provider, status, window_from, window_to,
    started_at, claimed_at, heartbeat_at) VALUES ($1, gen_random_uuid(), 'guru', 'running', $2, $3, $3, $3, $3)`,
		tn.merchant.ID, now.Add(-72*time.Hour), now.Add(-61*time.Minute)); err != nil {
		t.Fatal(err)
	}
	tick(now.Add(61 * time.Minute)) // due again; the abandoned run is older than 15 minutes
	guru := runs("guru")
	if len(guru) != 3 || guru[0] != "failed 0" || guru[2] != "succeeded 0" {
		t.Errorf("guru runs after an hour = %v, want the abandoned one failed and a new one finding nothing missing", guru)
	}
	if got := s.count(`SELECT count(*) FROM reconciliation_runs WHERE merchant_id = $1 AND error = 'abandoned: the process running it stopped'`,
		tn.merchant.ID); got != 1 {
		t.Errorf("abandoned runs = %d, want 1", got)
	}
}

// TestReconciliationPlatformDown: a platform that keeps answering 503
// (Retry-After: 1) past the retries of a page ends the run failed with
// the platform's answer, nothing credited; once it answers again, the next
// run credits the sales.
func TestReconciliationPlatformDown(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := startStack(t, stackOptions{})
	tn := s.newTenant(testenv.FixedCampaign(1000, 7))
	m := s.newMember(tn, "ana@example.com", "Ana Souza")
	api := newSalesAPI(t, "guru", m.CouponCode)
	api.sales = []pulledSale{{order: "down-1", status: "approved", at: s.clock.Now().Add(-time.Hour)}}
	var down sync.Mutex // held: the platform answers 503
	down.Lock()
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if down.TryLock() {
			down.Unlock()
			api.srv.Config.Handler.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte(`{"message":"maintenance"}`))
	}))
	t.Cleanup(front.Close)
	if status, res := s.api(tn, http.MethodPut, "/integrations/guru", []byte(`{"user_token": "guru-user-token", "api_url": "`+front.URL+`"}`)); status != 200 {
		t.Fatalf("PUT integration = %d %v", status, res)
	}
	task := program.NewReconcile(s.deps)
	run := func() map[string]any {
		t.Helper()
		if status, res := s.api(tn, http.MethodPost, "/integrations/guru/reconcile", nil); status != http.StatusAccepted {
			t.Fatalf("POST reconcile = %d %v", status, res)
		}
		if err := task.Run(ctx, s.clock.Now()); err != nil {
			t.Fatal(err)
		}
		task.Wait()
		s.clock.Advance(s.deps.Config.ReconcileCooldown)
		_, res := s.api(tn, http.MethodGet, "/integrations/guru/reconciliations?per_page=1", nil)
		return res["data"].([]any)[0].(map[string]any)
	}
	failed := run()
	if failed["status"] != "failed" || !strings.Contains(failed["error"].(string), "503") || failed["missing"] != float64(0) {
		t.Errorf("with the platform down: %v, want failed with its 503", failed)
	}
	down.Unlock()
	if ok := run(); ok["status"] != "succeeded" || ok["credited"] != float64(1) {
		t.Errorf("with the platform back: %v, want the sale credited", ok)
	}
	s.waitBalance(tn, m.Email, wallet{totalEarned: 1000, pending: 1000})
}
