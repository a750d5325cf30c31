package e2e

import (
	"maps"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/convida/convida/pkg/campaign"
	"github.com/convida/convida/pkg/program"
	"github.com/convida/convida/pkg/testenv"
)

// TestKilledDispatcherDeliveriesTakenOverWithinAMinute: with WEBHOOK_LEASE
// at its default (30 s, renewed while a delivery is in flight), a
// dispatcher killed in the middle of slow deliveries (a receiver that
// takes 1.5 s to answer) leaves them to another dispatcher, which delivers
// every event within a minute of the kill. Under the old 5-minute lease
// the jobs the killed one had stored waited five minutes.
func TestKilledDispatcherDeliveriesTakenOverWithinAMinute(t *testing.T) {
	t.Parallel()
	if cfg, err := program.LoadConfig(func(string) string { return "" }); err != nil || cfg.WebhookLease > 30*time.Second {
		t.Fatalf("WEBHOOK_LEASE defaults to %v (%v), want at most 30s", cfg.WebhookLease, err)
	}
	brokers := testenv.MustBroker(t)
	env := webhookEnv(t, map[string]string{"WEBHOOK_ENDPOINT_CONCURRENCY": "8"})
	stackEnv := maps.Clone(env)
	stackEnv["KAFKA_SESSION_TIMEOUT"] = "6s"
	s := startStack(t, stackOptions{brokers: brokers, scheduler: true, noLedger: true, env: stackEnv})
	rc := newReceiver(t, func(int64, *http.Request) int {
		time.Sleep(1500 * time.Millisecond)
		return 200
	})
	tn := s.newTenant(campaign.Campaign{Name: "A", RewardType: campaign.RewardFixed, RewardValue: 1, WarrantyDays: 1, IsActive: true})
	s.hook(tn, rc, "referral.created")
	recs := publishEvents(t, s, tn.merchant.ID, 24)

	// The child keeps the default session timeout: killed, it holds its
	// partitions until the group gives up on it.
	child := startChildDispatcher(t, s, brokers, env, "LOG_LEVEL=warn")
	// Killed once its lane has 8 deliveries in flight and has stored the
	// rest of the batch as leased rows.
	testenv.Eventually(t, 60*time.Second, "8 deliveries in flight", func() bool { return rc.calls.Load() >= 8 })
	testenv.Eventually(t, 10*time.Second, "the batch's jobs stored", func() bool {
		return s.count(`SELECT count(*) FROM webhook_jobs WHERE merchant_id = $1`, tn.merchant.ID) > 0
	})
	_ = child.Process.Kill()
	_ = child.Wait()
	killed := time.Now()
	stored := s.count(`SELECT count(*) FROM webhook_jobs WHERE merchant_id = $1`, tn.merchant.ID)

	s.run(t.Context(), "dispatcher", program.RunDispatcher)
	// Taken over: every event's delivery is logged as a success and no job
	// is owed. (The receiver also finishes the requests the killed one had
	// in flight, but nobody records those: they must be made again.)
	const done = `SELECT count(DISTINCT event_id) FROM webhook_attempts WHERE merchant_id = $1 AND status = 'success'`
	const owed = `SELECT count(*) FROM webhook_jobs WHERE merchant_id = $1`
	for s.count(done, tn.merchant.ID) < len(recs) || s.count(owed, tn.merchant.ID) > 0 {
		if time.Since(killed) > time.Minute {
			dumpDispatchState(t, s, tn.merchant.ID)
			t.Fatalf("%d of %d events delivered and logged a minute after the dispatcher was killed (it left %d jobs stored)",
				s.count(done, tn.merchant.ID), len(recs), stored)
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("every event delivered %v after the kill; the killed dispatcher left %d jobs stored",
		time.Since(killed).Round(time.Millisecond), stored)
}

// startChildDispatcher runs the real dispatcher (childDispatcher) in a
// child process on s's database, Redis and secrets, with brokers, the
// settings of env and the extra KEY=value ones; it is killed at cleanup.
func startChildDispatcher(t *testing.T, s *stack, brokers []string, env map[string]string, extra ...string) *exec.Cmd {
	t.Helper()
	child := exec.Command(os.Args[0], "-test.run=^$")
	child.Env = append(os.Environ(), "E2E_CHILD=dispatcher", "DATABASE_URL="+s.deps.Config.DatabaseURL,
		"KAFKA_BROKERS="+strings.Join(brokers, ","), "REDIS_URL="+testenv.RedisURL(),
		"SECRETS_KEY="+s.deps.Config.SecretsKey, "DISPATCHER_GROUP="+s.deps.Config.DispatcherGroup,
		"METRICS_ADDR=127.0.0.1:0")
	for k, v := range env {
		child.Env = append(child.Env, k+"="+v)
	}
	child.Env = append(child.Env, extra...)
	child.Env = append(child.Env, s.clock.ChildEnv()...)
	child.Stdout, child.Stderr = os.Stderr, os.Stderr
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	// A failing test must not leave the child running: go test would wait
	// for it, since it writes to the test's stderr.
	t.Cleanup(func() { _ = child.Process.Kill(); _ = child.Wait() })
	return child
}
