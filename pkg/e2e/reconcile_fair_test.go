package e2e

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/convida/convida/pkg/ids"
	"github.com/convida/convida/pkg/program"
	"github.com/convida/convida/pkg/reconcile"
	"github.com/convida/convida/pkg/testenv"
)

// TestReconciliationSharedFairly: merchant A points its four integrations
// at a platform that answers each page in 9 s, with more pages forever,
// and asks for a run of each; then merchant B asks for one against a
// platform that answers at once, and merchant C for one against a platform
// whose pages never end but come at once. With the scheduler running (its
// 4 slots), B's run finishes within 60 s, C's starts before A's fourth
// (a merchant with no run going is served before another's next run) and
// ends failed at RECONCILE_MAX_PAGES, and each of A's runs ends failed at
// RECONCILE_MAX_DURATION of its start, its requests to the platform cut
// short. A's second request of an integration within RECONCILE_COOLDOWN
// (the default, 5 minutes) is 429 with Retry-After, and the trail lists
// A's four requests.
func TestReconciliationSharedFairly(t *testing.T) {
	t.Parallel()
	const maxDuration = 15 * time.Second
	// The platforms first: they close after the stack has stopped its runs.
	slow, endless := newEndlessAPI(t, 9*time.Second), newEndlessAPI(t, 0)
	s := startStack(t, stackOptions{scheduler: true, env: map[string]string{"SCHEDULER_INTERVAL": "200ms",
		"RECONCILE_MAX_DURATION": maxDuration.String(), "RECONCILE_MAX_PAGES": "20"}})
	if s.deps.Config.ReconcileCooldown != 5*time.Minute {
		t.Fatalf("RECONCILE_COOLDOWN = %s, want the default 5m", s.deps.Config.ReconcileCooldown)
	}
	a := s.newTenant(testenv.FixedCampaign(1000, 7))
	b := s.newTenant(testenv.FixedCampaign(1000, 7))
	c := s.newTenant(testenv.FixedCampaign(1000, 7))
	ana := s.newMember(b, "ana@example.com", "Ana Souza") // the fake's buyer is Bia
	fast := newSalesAPI(t, "guru", ana.CouponCode)
	fast.sales = []pulledSale{{order: "fair-1", status: "approved", at: s.clock.Now().Add(-time.Hour)}}
	put := func(tn *tenant, provider, body string) {
		t.Helper()
		if status, res := s.api(tn, http.MethodPut, "/integrations/"+provider, []byte(body)); status != 200 {
			t.Fatalf("PUT integration %s = %d %v", provider, status, res)
		}
	}
	s.withHotmartKiwify(a, "")
	for p, body := range slow.integrations() {
		put(a, p, body)
	}
	put(b, "guru", `{"user_token": "guru-user-token", "api_url": "`+fast.srv.URL+`"}`)
	put(c, "guru", endless.integrations()["guru"])

	ask := func(tn *tenant, provider string) (string, time.Time) {
		t.Helper()
		status, res := s.api(tn, http.MethodPost, "/integrations/"+provider+"/reconcile", nil)
		if status != http.StatusAccepted {
			t.Fatalf("POST %s reconcile = %d %v", provider, status, res)
		}
		return res["data"].(map[string]any)["id"].(string), time.Now()
	}
	providers := []string{"guru", "yampi", "hotmart", "kiwify"}
	aRuns := map[string]string{}
	for _, p := range providers {
		aRuns[p], _ = ask(a, p)
	}
	// A's runs take three slots; the fourth is kept for another merchant.
	testenv.Eventually(t, 10*time.Second, "three of A's runs claimed", func() bool {
		return s.count(`SELECT count(*) FROM reconciliation_runs WHERE merchant_id = $1 AND claimed_at IS NOT NULL`, a.merchant.ID) == 3
	})
	bRun, bAsked := ask(b, "guru")
	cRun, _ := ask(c, "guru")

	// B's run finishes within 60 s of its request, credited.
	last := func(tn *tenant, provider, id string) map[string]any {
		status, res := s.api(tn, http.MethodGet, "/integrations/"+provider+"/reconciliations?per_page=10", nil)
		if status != 200 {
			t.Fatalf("GET reconciliations = %d %v", status, res)
		}
		for _, r := range res["data"].([]any) {
			if run := r.(map[string]any); run["id"] == id {
				return run
			}
		}
		t.Fatalf("run %s not listed: %v", id, res)
		return nil
	}
	testenv.Eventually(t, time.Until(bAsked.Add(60*time.Second)), "B's run finished", func() bool {
		return last(b, "guru", bRun)["status"] != reconcile.StatusRunning
	})
	if run := last(b, "guru", bRun); run["status"] != reconcile.StatusSucceeded || run["credited"] != float64(1) {
		t.Errorf("B's run = %v, want succeeded with its sale credited", run)
	}
	s.waitBalance(b, ana.Email, wallet{totalEarned: 1000, pending: 1000})

	// C's run: served before A's fourth, failed at its page budget.
	testenv.Eventually(t, 30*time.Second, "C's run finished", func() bool { return last(c, "guru", cRun)["status"] != reconcile.StatusRunning })
	if run := last(c, "guru", cRun); run["status"] != reconcile.StatusFailed ||
		!strings.HasPrefix(run["error"].(string), "stopped after RECONCILE_MAX_PAGES (20 pages)") || run["seen"] != float64(20) {
		t.Errorf("C's run = %v, want failed after 20 pages, saying so", run)
	}

	// A's runs end failed, each within RECONCILE_MAX_DURATION of its start.
	testenv.Eventually(t, 3*maxDuration, "A's runs finished", func() bool {
		return s.count(`SELECT count(*) FROM reconciliation_runs WHERE merchant_id = $1 AND status = 'running'`, a.merchant.ID) == 0
	})
	claimed := func(run string) (at, end time.Time) {
		id, ok := ids.Parse(ids.Reconciliation, run)
		if !ok {
			t.Fatalf("run id %q", run)
		}
		if err := s.deps.Pool.QueryRow(context.Background(), `SELECT claimed_at, finished_at FROM reconciliation_runs WHERE id = $1`,
			id).Scan(&at, &end); err != nil {
			t.Fatal(err)
		}
		return at, end
	}
	// B found a slot at once: it need not wait for A's runs to reach
	// their bound (10 minutes by default).
	var bWaited time.Duration
	bID, _ := ids.Parse(ids.Reconciliation, bRun)
	if err := s.deps.Pool.QueryRow(context.Background(), `SELECT extract(epoch FROM claimed_at - started_at) * interval '1 second'
FROM reconciliation_runs WHERE id = $1`, bID).Scan(&bWaited); err != nil {
		t.Fatal(err)
	}
	if bWaited > 3*time.Second {
		t.Errorf("B's run waited %s for a slot, want it started at once (a slot is kept for a merchant with none)", bWaited)
	}
	cStart, _ := claimed(cRun)
	fourth := 0
	for _, p := range providers {
		run := last(a, p, aRuns[p])
		if run["status"] != reconcile.StatusFailed || !strings.HasPrefix(run["error"].(string), "stopped after RECONCILE_MAX_DURATION (15s)") {
			t.Errorf("A's %s run = %v, want failed after RECONCILE_MAX_DURATION, saying so", p, run)
		}
		start, end := claimed(aRuns[p])
		if took := end.Sub(start); took < maxDuration-time.Second || took > maxDuration+3*time.Second {
			t.Errorf("A's %s run took %s from its start, want about RECONCILE_MAX_DURATION (%s)", p, took, maxDuration)
		}
		if start.After(cStart) {
			fourth++
		}
	}
	if fourth != 1 {
		t.Errorf("%d of A's runs started after C's, want 1 (its fourth)", fourth)
	}
	// The slow pages were read (the heartbeat moved on), and the requests
	// under way at the bound were cut short, not left to hold a connection.
	if n := slow.pagesServed("/guru/transactions"); n < 2 {
		t.Errorf("the slow platform served %d Guru pages, want at least 2 (one answered, one cut)", n)
	}
	testenv.Eventually(t, 5*time.Second, "no request left at the slow platform", func() bool {
		inFlight, left := slow.state()
		return inFlight == 0 && left >= 4
	})

	// Within the cooldown: 429 with the seconds left.
	res := do(t, http.MethodPost, s.apiURL+"/api/v1/integrations/guru/reconcile", nil, map[string]string{"X-API-Key": a.apiKey})
	wait, _ := strconv.Atoi(res.Header.Get("Retry-After"))
	if e, _ := res.json(t)["error"].(map[string]any); res.Status != http.StatusTooManyRequests || e["code"] != "rate_limited" || wait < 1 || wait > 300 {
		t.Errorf("a new request within RECONCILE_COOLDOWN = %d %s (Retry-After %q), want 429 rate_limited with Retry-After of at most 300",
			res.Status, res.Body, res.Header.Get("Retry-After"))
	}

	// The trail lists A's four requests, by its key.
	status, trail := s.api(a, http.MethodGet, "/audit-events?action=reconciliation.requested", nil)
	if status != 200 {
		t.Fatalf("GET audit-events = %d %v", status, trail)
	}
	requested := map[string]string{}
	for _, e := range trail["data"].([]any) {
		ev := e.(map[string]any)
		target, details, actor := ev["target"].(map[string]any), ev["details"].(map[string]any), ev["actor"].(map[string]any)
		if target["type"] != "integration" || actor["type"] != "api_key" {
			t.Errorf("event %v, want on an integration by an API key", ev)
		}
		requested[target["id"].(string)] = details["run"].(string)
	}
	for _, p := range providers {
		if requested[p] != aRuns[p] {
			t.Errorf("the trail's %s request names run %q, want %s (trail %v)", p, requested[p], aRuns[p], trail)
		}
	}
}

// TestStaleReconciliationStopped: a run whose heartbeat has stopped for
// longer than the stale limit is ended failed by the leader's sweep, and
// its pull, still waiting for a slow page here, is stopped at once: its
// request to the platform is cut, and its slot is free again.
func TestStaleReconciliationStopped(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	slow := newEndlessAPI(t, 30*time.Second)
	s := startStack(t, stackOptions{})
	tn := s.newTenant(testenv.FixedCampaign(1000, 7))
	if status, res := s.api(tn, http.MethodPut, "/integrations/guru", []byte(slow.integrations()["guru"])); status != 200 {
		t.Fatalf("PUT integration = %d %v", status, res)
	}
	status, res := s.api(tn, http.MethodPost, "/integrations/guru/reconcile", nil)
	if status != http.StatusAccepted {
		t.Fatalf("POST reconcile = %d %v", status, res)
	}
	task := program.NewReconcile(s.deps)
	if err := task.Run(ctx, s.clock.Now()); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 5*time.Second, "the pull waits for its first page", func() bool {
		inFlight, _ := slow.state()
		return inFlight == 1
	})
	// Its heartbeat is older than the stale limit (15 minutes).
	if _, err := s.deps.Pool.Exec(ctx, `UPDATE reconciliation_runs SET heartbeat_at = heartbeat_at - interval '1 hour' WHERE merchant_id = $1`,
		tn.merchant.ID); err != nil {
		t.Fatal(err)
	}
	if err := task.Run(ctx, s.clock.Now()); err != nil {
		t.Fatal(err)
	}
	stopped := make(chan struct{})
	go func() { task.Wait(); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(5 * time.Second):
		t.Fatal("the stale run's pull still runs 5 s after the sweep (its page comes in 30 s)")
	}
	// The server sees the cut connection a moment after the client let go.
	testenv.Eventually(t, 5*time.Second, "the platform saw its one request cut", func() bool {
		inFlight, left := slow.state()
		return inFlight == 0 && left == 1
	})
	_, res = s.api(tn, http.MethodGet, "/integrations/guru/reconciliations", nil)
	if run := res["data"].([]any)[0].(map[string]any); run["status"] != reconcile.StatusFailed || run["error"] != reconcile.StaleError {
		t.Errorf("the run = %v, want failed as abandoned", run)
	}
}
