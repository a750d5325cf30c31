package e2e

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"os"
	"runtime/pprof"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/campaign"
	"github.com/convida/convida/pkg/ids"
	"github.com/convida/convida/pkg/program"
	"github.com/convida/convida/pkg/testenv"
)

// childDispatcher runs the real dispatcher until it is killed.
func childDispatcher() int {
	cfg, err := program.LoadConfig(os.Getenv)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	log, _ := program.NewLogger("warn")
	d, err := openChild(cfg, log, "dispatcher-child")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	if err := program.RunDispatcher(context.Background(), d); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// TestWebhookDispatcherKilledMidStream kills a dispatcher process hard in
// the middle of 2,000 events and starts another: every event arrives at
// least once, and only the attempts in flight at the kill arrive twice.
func TestWebhookDispatcherKilledMidStream(t *testing.T) {
	t.Parallel()
	brokers := testenv.MustBroker(t)
	// The jobs the killed child leaves leased come back when the lease
	// ends. Until a dispatcher finishes them the scheduler offers each
	// again at every lease's end: with a 2 s lease and the ~1,500 jobs the
	// child leaves, ~750 retry messages a second into one partition of
	// the embedded broker. In a run on a loaded machine that broker then
	// left the replacement's 31 new connections without an answer for
	// 90 s, most likely from that load. 10 s keeps the test short and the
	// retry traffic a fifth of that.
	env := webhookEnv(t, map[string]string{"WEBHOOK_LEASE": "10s", "WEBHOOK_ENDPOINT_CONCURRENCY": "8"})
	// The child's 2 s session frees its partitions when it is killed; this
	// process's replacement gets a roomier one so that a loaded machine
	// does not expire it in the middle of joining. Set before the stack
	// starts: its roles read the configuration while they run.
	stackEnv := maps.Clone(env)
	stackEnv["KAFKA_SESSION_TIMEOUT"] = "6s"
	s := startStack(t, stackOptions{brokers: brokers, scheduler: true, noLedger: true, env: stackEnv})
	rc := newReceiver(t, func(int64, *http.Request) int {
		time.Sleep(5 * time.Millisecond)
		return 200
	})
	tn := s.newTenant(campaign.Campaign{Name: "A", RewardType: campaign.RewardFixed, RewardValue: 1, WarrantyDays: 1, IsActive: true})
	s.hook(tn, rc, "referral.created")
	recs := publishEvents(t, s, tn.merchant.ID, 2000)

	child := startChildDispatcher(t, s, brokers, env, "KAFKA_SESSION_TIMEOUT=2s", "LOG_LEVEL=info")
	for deadline := time.Now().Add(60 * time.Second); len(rc.received()) < 500; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			// A stalled child shows where it stands: SIGQUIT makes the Go
			// runtime print every goroutine to the test's output.
			_ = child.Process.Signal(syscall.SIGQUIT)
			_ = child.Wait()
			t.Fatalf("the child delivered %d events in 60s, want 500 (its goroutines are above)", len(rc.received()))
		}
	}
	_ = child.Process.Kill()
	_ = child.Wait()
	time.Sleep(100 * time.Millisecond) // the receiver finishes the requests it was answering
	// What the killed dispatcher had recorded as delivered: those events
	// must not arrive again. Every other event it had sent was in flight.
	beforeKill := map[string]bool{}
	for _, g := range rc.received() {
		beforeKill[g.id] = true
	}
	recorded := map[string]bool{}
	rows, err := s.deps.Pool.Query(context.Background(), `SELECT event_id FROM webhook_attempts
WHERE merchant_id = $1 AND status = 'success'`, tn.merchant.ID)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id uuid.UUID
		_ = rows.Scan(&id)
		recorded[ids.Format(ids.Event, id)] = true
	}
	rows.Close()
	if len(beforeKill) >= len(recs) {
		t.Fatalf("the child delivered all %d events before the kill", len(beforeKill))
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s.run(ctx, "dispatcher", program.RunDispatcher)
	seen := map[string]int{}
	for deadline := time.Now().Add(90 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		clear(seen)
		for _, g := range rc.received() {
			seen[g.id]++
		}
		if len(seen) == len(recs) {
			break
		}
		if time.Now().After(deadline) {
			dumpDispatchState(t, s, tn.merchant.ID)
			t.Fatalf("%d of %d events delivered 90s after the replacement started", len(seen), len(recs))
		}
	}
	dups := 0
	for id, n := range seen {
		if n == 1 {
			continue
		}
		dups += n - 1
		if recorded[id] || !beforeKill[id] {
			t.Errorf("event %s delivered %d times but was not in flight at the kill (recorded %v, sent before %v)",
				id, n, recorded[id], beforeKill[id])
		}
	}
	t.Logf("%d events; %d sent before the kill, %d of them recorded as delivered, so %d in flight; %d delivered twice",
		len(recs), len(beforeKill), len(recorded), len(beforeKill)-len(recorded), dups)
	for _, g := range rc.received() {
		if !g.validSigs {
			t.Fatalf("delivery %s: %s", g.id, g.sigProblem)
		}
	}
}

// dumpDispatchState logs what a stalled delivery test needs to be
// understood: the jobs owed and the attempts logged, and the goroutines of
// the test process (the replacement dispatcher's lanes and consumer).
func dumpDispatchState(t *testing.T, s *stack, merchantID uuid.UUID) {
	t.Helper()
	ctx := context.Background()
	var jobs, due, attempted int
	var oldest, newest *time.Time
	err := s.deps.Pool.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE next_attempt_at <= now()),
  count(*) FILTER (WHERE attempts > 0), min(next_attempt_at), max(next_attempt_at)
FROM webhook_jobs WHERE merchant_id = $1`, merchantID).Scan(&jobs, &due, &attempted, &oldest, &newest)
	t.Logf("job rows: %d (%d due, %d attempted before), next attempts from %v to %v, now %v (err %v)",
		jobs, due, attempted, oldest, newest, time.Now().UTC(), err)
	rows, err := s.deps.Pool.Query(ctx, `SELECT status, count(*), count(DISTINCT event_id) FROM webhook_attempts
WHERE merchant_id = $1 GROUP BY status`, merchantID)
	if err == nil {
		for rows.Next() {
			var status string
			var n, events int
			_ = rows.Scan(&status, &n, &events)
			t.Logf("attempts logged: %s %d (%d events)", status, n, events)
		}
		rows.Close()
	}
	var dump strings.Builder
	_ = pprof.Lookup("goroutine").WriteTo(&dump, 1)
	t.Logf("goroutines of the test process:\n%s", dump.String())
}
