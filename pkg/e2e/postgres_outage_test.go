package e2e

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest"
	"go.uber.org/zap/zaptest/observer"

	"github.com/convida/convida/pkg/ids"
	"github.com/convida/convida/pkg/merchant"
	"github.com/convida/convida/pkg/openapi/openapitest"
	"github.com/convida/convida/pkg/program"
	"github.com/convida/convida/pkg/testenv"
)

// PostgreSQL goes away and comes back under the running service. The
// stack reaches the database through a testenv.Proxy: a "restart" ends the
// database's sessions as a server's shutdown does (57P01, through the
// shared server, on this test's database only) and closes the proxy's port
// (connections refused), then opens it again.

// restart is PostgreSQL stopping: the sessions on the database of dbURL
// are terminated and the proxy refuses connections until Restore.
func restart(t *testing.T, dbURL string, proxy *testenv.Proxy) {
	t.Helper()
	ctx := context.Background()
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	admin, err := pgx.Connect(ctx, testenv.ServerURL())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	if _, err := admin.Exec(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
WHERE datname = $1 AND pid <> pg_backend_pid()`, strings.TrimPrefix(u.Path, "/")); err != nil {
		t.Fatal(err)
	}
	proxy.Cut()
}

// TestPostgresRestartUnderAPIReads streams API reads, a few writes and
// dashboard pages while PostgreSQL stops for 3 s and starts again: every
// answer is a success or a 503 service_unavailable with Retry-After (never
// a 500, every one valid for the OpenAPI document), the outage is seen,
// and a few seconds after the database is back every answer is a success
// again without anyone restarting anything.
func TestPostgresRestartUnderAPIReads(t *testing.T) {
	t.Parallel()
	dbURL, proxy := testenv.MustPostgresProxy(t)
	s := startStack(t, stackOptions{databaseURL: dbURL, observe: true})
	// A rate limit above the stream's pace: each request fails fast while
	// the database is down.
	tn := s.newTenantWith(merchant.Merchant{RateLimitPerSecond: 5000, RateLimitBurst: 5000}, testenv.FixedCampaign(500, 30))
	ana := s.newMember(tn, "ana@example.com", "Ana Souza")
	email, password := dashboardUser(t, s.deps.Pool, tn.merchant.ID, merchant.RoleOwner)
	dash := signedIn(t, s.apiURL, email, password)
	api := newChecker(t, s.apiURL)
	memID := ids.Format(ids.Member, ana.ID)
	key := keyed(tn.apiKey)
	reads := []probe{
		{"GET", "/api/v1/members/" + memID, nil, key},
		{"GET", "/api/v1/members?per_page=5", nil, key},
		{"GET", "/api/v1/members/" + memID + "/wallet", nil, key},
		{"GET", "/api/v1/wallet/balance?email=" + url.QueryEscape(ana.Email), nil, key},
		{"GET", "/api/v1/campaigns", nil, key},
		{"GET", "/v1/webhooks", nil, key},
	}

	type answer struct {
		sent, answered time.Time
		status         int
	}
	var (
		mu      sync.Mutex
		answers []answer
		pages   = map[int]int{} // the dashboard's statuses
		stop    atomic.Bool
		wg      sync.WaitGroup
		writes  atomic.Int64
	)
	// note checks an answer: a success, or a 503 with Retry-After and,
	// from the API, the code service_unavailable in the path's style.
	note := func(sent time.Time, method, path string, status int, header http.Header, code string) {
		if status == http.StatusServiceUnavailable {
			if header.Get("Retry-After") == "" {
				t.Errorf("%s %s: 503 without Retry-After", method, path)
			}
			if code != "" && code != styled(path, "service_unavailable") {
				t.Errorf("%s %s: 503 with code %q, want %s", method, path, code, styled(path, "service_unavailable"))
			}
		} else if status != http.StatusOK && status != http.StatusCreated {
			t.Errorf("%s %s answered %d while PostgreSQL restarted, want 200, 201 or 503", method, path, status)
		}
		mu.Lock()
		answers = append(answers, answer{sent, time.Now(), status})
		if strings.HasPrefix(path, "/dashboard") {
			pages[status]++
		}
		mu.Unlock()
	}
	for i := range 4 {
		wg.Go(func() {
			for n := i; !stop.Load(); n++ {
				p := reads[n%len(reads)]
				if n%10 == 0 { // a write now and then: a new member, a renamed one
					w := writes.Add(1)
					p = probe{"POST", "/api/v1/members", jsonBody(map[string]string{"email": fmt.Sprintf("w%d-%d@example.com", i, w),
						"name": "Escrita"}), key}
					if w%2 == 0 {
						p = probe{"PATCH", "/api/v1/members/" + memID, jsonBody(map[string]string{"name": fmt.Sprintf("Ana %d", w)}), key}
					}
				}
				sent := time.Now()
				r := api.send(t, p)
				note(sent, p.method, strings.SplitN(p.path, "?", 2)[0], r.status, r.header, r.code())
				time.Sleep(5 * time.Millisecond)
			}
		})
	}
	wg.Go(func() {
		for !stop.Load() {
			sent := time.Now()
			res, err := dash.c.Get(s.apiURL + "/dashboard/members")
			if err != nil {
				t.Errorf("GET /dashboard/members: %v", err)
				return
			}
			res.Body.Close()
			note(sent, "GET", "/dashboard/members", res.StatusCode, res.Header, "")
			time.Sleep(20 * time.Millisecond)
		}
	})

	time.Sleep(time.Second)
	down := time.Now()
	restart(t, dbURL, proxy)
	time.Sleep(3 * time.Second)
	proxy.Restore()
	back := time.Now()
	time.Sleep(5 * time.Second)
	stop.Store(true)
	wg.Wait()

	before, during, failedLate := map[string]int{}, map[int]int{}, 0
	var lastFailure time.Time
	for _, a := range answers {
		switch {
		case a.answered.Before(down):
			before[fmt.Sprint(a.status)]++
		case a.sent.After(down) && a.answered.Before(back):
			during[a.status]++
		}
		if a.status == http.StatusServiceUnavailable {
			if a.sent.After(lastFailure) {
				lastFailure = a.sent
			}
			if a.sent.After(back.Add(3 * time.Second)) {
				failedLate++
			}
		}
	}
	t.Logf("%d answers; before the restart %v, during it %v; the last 503 %v after the database was back",
		len(answers), before, during, lastFailure.Sub(back).Round(time.Millisecond))
	if before["503"] > 0 {
		t.Errorf("503s before the restart: %v", before)
	}
	if pages[http.StatusServiceUnavailable] == 0 || pages[http.StatusOK] == 0 {
		t.Errorf("dashboard pages answered %v, want 200s and 503s", pages)
	}
	if during[http.StatusServiceUnavailable] == 0 {
		t.Errorf("no 503 while PostgreSQL was down (%v): the outage was not seen", during)
	}
	if failedLate > 0 {
		t.Errorf("%d answers were 503 more than 3 s after PostgreSQL was back: the service did not recover by itself", failedLate)
	}
	// Hundreds of 503s, two warnings: the API's and the dashboard's, each
	// at most once per 30 s.
	for _, what := range []string{"requests that need it are answered 503", "pages are answered 503"} {
		if n := s.logs.FilterMessageSnippet(what).FilterLevelExact(zap.WarnLevel).Len(); n != 1 {
			t.Errorf("%d warnings %q, want 1", n, what)
		}
	}
	api.v.WantExercised(t, ex("getMember", 503), ex("listMembers", 503), ex("getMemberWallet", 503),
		ex("getWalletBalance", 503), ex("listCampaigns", 503), ex("listWebhooks", 503))
}

// TestEveryOperationAnswers503WithoutPostgres: with the database away,
// every operation the OpenAPI document lists with a 503 (all that read or
// write the database) answers it, code service_unavailable in the
// interface's style with Retry-After, given a request that is valid in
// every other way: through a key the API still holds in its cache (the
// handler's own reads fail), and through one it must look up.
func TestEveryOperationAnswers503WithoutPostgres(t *testing.T) {
	t.Parallel()
	dbURL, proxy := testenv.MustPostgresProxy(t)
	s := startStack(t, stackOptions{databaseURL: dbURL})
	tn := s.newTenant(testenv.FixedCampaign(500, 30))
	ana := s.newMember(tn, "ana@example.com", "Ana Souza")
	c := newChecker(t, s.apiURL)
	key := tn.apiKey
	memID, campID := ids.Format(ids.Member, ana.ID), ids.Format(ids.Campaign, tn.campaign.ID)
	wh := c.createWebhook(t, key, true)
	token, _ := c.expect(t, probe{"PUT", "/api/v1/members/" + memID + "/creator", jsonBody(map[string]string{"display_name": "Ana"}),
		keyed(key)}, 200, "").data()["token"].(string)
	wantStatus(t, s.postGuru(tn, guruSale(t, tn, "outage-ref", ana.CouponCode, 100, "approved")), 200)
	var refID uuid.UUID
	testenv.Eventually(t, 30*time.Second, "the referral", func() bool {
		return s.deps.Pool.QueryRow(context.Background(), `SELECT id FROM referrals WHERE merchant_id = $1`, tn.merchant.ID).Scan(&refID) == nil
	})
	idOf := map[string]string{"/api/v1/members/": memID, "/api/v1/campaigns/": campID,
		"/api/v1/referrals/": ids.Format(ids.Referral, refID), "/v1/webhooks/": wh}
	email := "?email=" + url.QueryEscape(ana.Email)
	bodies := map[string][]byte{
		"createMember":     jsonBody(map[string]string{"email": "bia@example.com", "name": "Bia"}),
		"updateMember":     jsonBody(map[string]string{"name": "Ana S."}),
		"redeemMember":     jsonBody(map[string]any{"amount": 100, "type": "store_credit"}),
		"redeemWallet":     jsonBody(map[string]any{"email": ana.Email, "amount": 100, "destination": "store_coupon"}),
		"createCampaign":   jsonBody(map[string]any{"name": "Verão", "reward_type": "fixed", "reward_value": 700}),
		"updateCampaign":   jsonBody(map[string]any{"name": "Inverno"}),
		"putCreator":       jsonBody(map[string]string{"display_name": "Ana"}),
		"putCampaignTiers": jsonBody(map[string]any{"tiers": []map[string]any{{"name": "Prata", "min_sales": 1, "commission_percent": 10}}}),
		"approveReferral":  jsonBody(map[string]string{"notes": "ok"}),
		"rejectReferral":   jsonBody(map[string]string{"reason": "fraud"}),
		"putIntegration":   jsonBody(map[string]string{"user_token": "guru-user-token-2"}),
		"createWebhook":    jsonBody(map[string]any{"url": "https://hooks.example.com/b", "events": []string{"member.created"}}),
		"updateWebhook":    jsonBody(map[string]any{"events": []string{"member.updated"}}),
	}
	probeOf := func(op openapitest.Operation, header map[string]string) probe {
		path := fill(op.Path, map[string]string{"log_id": "whl_" + zeros, "provider": "guru", "token": token})
		for prefix, id := range idOf {
			if strings.HasPrefix(path, prefix+"{id}") {
				path = strings.Replace(path, "{id}", id, 1)
			}
		}
		if memberFacing(path) && !creatorFacing(path) && op.Method == "GET" {
			path += email
		}
		p := probe{method: op.Method, path: path, body: bodies[op.ID], header: header}
		if creatorFacing(path) {
			p.header = nil
		}
		return p
	}
	ops := documented(t, 503, func(op openapitest.Operation) bool { return keyedAPI(op.Path) || creatorFacing(op.Path) })
	uncached := testenv.MustKey(t, s.deps.Pool, tn.merchant.ID)         // not used before the outage
	c.expect(t, probe{"GET", "/v1/webhooks", nil, keyed(key)}, 200, "") // the key is cached now

	restart(t, dbURL, proxy)
	defer proxy.Restore()
	var want []openapitest.Exercise
	for _, op := range ops {
		p := probeOf(op, keyed(key, "Idempotency-Key", "outage-"+op.ID))
		r := c.expect(t, p, 503, styled(p.path, "service_unavailable"))
		if r.status == 503 && r.header.Get("Retry-After") == "" {
			t.Errorf("%s: 503 without Retry-After", op.ID)
		}
		want = append(want, ex(op.ID, 503))
	}
	// A key the API has not cached: its lookup fails the same way.
	if r := c.expect(t, probe{"GET", "/v1/webhooks", nil, keyed(uncached)}, 503, "service_unavailable"); r.header.Get("Retry-After") == "" {
		t.Error("503 of an uncached key without Retry-After")
	}
	c.v.WantExercised(t, want...)
	if len(ops) < 40 {
		t.Errorf("%d operations document 503, want every one of the 40 that read the database", len(ops))
	}
}

// TestProgramsStartedWithoutPostgres starts a ledger, a dispatcher and an
// API while their PostgreSQL does not answer: they stay up, /readyz answers
// 503 "starting" naming it, one warning names DATABASE_URL, the API's port
// answers 503 service_unavailable with Retry-After (and /healthz 200), and
// sales taken by
// the ingest meanwhile (its own connections work) wait in the broker. Once
// PostgreSQL answers, the programs migrate and start by themselves: the
// sales are credited and their webhooks delivered.
func TestProgramsStartedWithoutPostgres(t *testing.T) {
	t.Parallel()
	s := startStack(t, stackOptions{noLedger: true, env: webhookEnv(t, nil)})
	tn := s.newTenant(testenv.FixedCampaign(1500, 7))
	ana := s.newMember(tn, "ana@example.com", "Ana Souza")
	rc := newReceiver(t, nil)
	s.hook(tn, rc, "referral.created")

	dbURL, proxy := testenv.PostgresProxy(t, s.deps.Config.DatabaseURL)
	proxy.Cut()
	cfg := s.deps.Config
	cfg.DatabaseURL = dbURL
	cfg.HTTPAddr = testenv.FreeAddr(t)
	api := "http://" + cfg.HTTPAddr
	core, logs := observer.New(zap.InfoLevel)
	log := zap.New(zapcore.NewTee(zaptest.NewLogger(t, zaptest.Level(zap.WarnLevel)).Core(), core))
	d, err := program.New(cfg, log, "late")
	if err != nil {
		t.Fatal(err)
	}
	ops := httptest.NewServer(d.OpsRouter())
	defer ops.Close()
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	var runErr error
	go func() {
		defer close(stopped)
		runErr = program.RunRoles(ctx, d, program.AfterStart(program.RunLedger, program.RunRecorder, program.RunDispatcher,
			program.RunAPI))
	}()
	defer func() {
		cancel()
		<-stopped
		if runErr != nil {
			t.Errorf("the late programs stopped with %v", runErr)
		}
		d.Close()
	}()

	for i := range 3 {
		wantStatus(t, s.postGuru(tn, guruSale(t, tn, fmt.Sprintf("late-%d", i), ana.CouponCode, 97.9, "approved")), 200)
	}
	time.Sleep(2 * time.Second)
	select {
	case <-stopped:
		t.Fatalf("the programs stopped with PostgreSQL down: %v", runErr)
	default:
	}
	ready := newChecker(t, ops.URL)
	r := ready.expect(t, probe{"GET", "/readyz", nil, nil}, 503, "")
	if checks, _ := r.body["checks"].(map[string]any); r.body["status"] != "starting" || checks["postgres"] != "unavailable" || checks["kafka"] != "ok" {
		t.Errorf("/readyz while waiting = %v, want starting with postgres unavailable and kafka ok", r.body)
	}
	members := do(t, http.MethodGet, api+"/api/v1/members", nil, map[string]string{"X-API-Key": tn.apiKey})
	if code, _ := members.json(t)["error"].(map[string]any); members.Status != 503 || code["code"] != "service_unavailable" ||
		members.Header.Get("Retry-After") == "" {
		t.Errorf("the API while starting: %d %s Retry-After %q, want 503 service_unavailable with Retry-After",
			members.Status, members.Body, members.Header.Get("Retry-After"))
	}
	if h := do(t, http.MethodGet, api+"/healthz", nil, nil); h.Status != 200 {
		t.Errorf("the API's /healthz while starting: %d, want 200", h.Status)
	}
	if n := logs.FilterField(zap.String("setting", "DATABASE_URL")).Len(); n != 1 {
		t.Errorf("%d lines name DATABASE_URL after 2 s of waiting, want 1", n)
	}
	if got := s.balance(tn, ana.Email); got.totalEarned != 0 {
		t.Fatalf("credited %+v before any ledger ran", got)
	}

	proxy.Restore()
	s.waitBalance(tn, ana.Email, wallet{totalEarned: 4500, pending: 4500})
	testenv.Eventually(t, 30*time.Second, "the three referral.created webhooks", func() bool { return len(rc.received()) >= 3 })
	testenv.Eventually(t, 10*time.Second, "/readyz ready", func() bool {
		res, err := http.Get(ops.URL + "/readyz")
		if err != nil {
			return false
		}
		res.Body.Close()
		return res.StatusCode == http.StatusOK
	})
	ready.expect(t, probe{"GET", "/readyz", nil, nil}, 200, "")
	if m := do(t, http.MethodGet, api+"/api/v1/members", nil, map[string]string{"X-API-Key": tn.apiKey}); m.Status != 200 {
		t.Errorf("the API once started: %d %s, want 200", m.Status, m.Body)
	}
	ready.v.WantExercised(t, ex("getReadyz", 503), ex("getReadyz", 200))
	if err := checkLedger(s); err != nil {
		t.Error(err)
	}
}
