package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/convida/convida/pkg/campaign"
	"github.com/convida/convida/pkg/kafkabus"
	"github.com/convida/convida/pkg/ledger"
	"github.com/convida/convida/pkg/member"
	"github.com/convida/convida/pkg/postgres"
	"github.com/convida/convida/pkg/program"
	"github.com/convida/convida/pkg/testenv"
)

// TestMain lets the test binary play a ledger worker, a dispatcher or an
// ingest in a child process, so that a test can kill one for real.
func TestMain(m *testing.M) {
	switch os.Getenv("E2E_CHILD") {
	case "ledger":
		os.Exit(childLedger())
	case "dispatcher":
		os.Exit(childDispatcher())
	case "ingest":
		os.Exit(childIngest())
	}
	os.Exit(m.Run())
}

// openChild opens a child process's connections as the program it plays
// does, on the clock of the test that started it (testenv.ChildClock).
func openChild(cfg program.Config, log *zap.Logger, name string) (*program.Deps, error) {
	now, err := testenv.ChildClock()
	if err != nil {
		return nil, err
	}
	d, err := program.Open(context.Background(), cfg, log, name)
	if err != nil {
		return nil, err
	}
	d.Now = now
	return d, nil
}

// childLedger runs the ledger's real handler and consumer group. With
// E2E_CRASH_AFTER_BATCHES=N it exits hard right after the database commit
// of its Nth batch, before the offset of that batch is committed: the
// window in which a crash leaves applied commands to be redelivered.
func childLedger() int {
	cfg, err := program.LoadConfig(os.Getenv)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	log, _ := program.NewLogger("warn")
	ctx := context.Background()
	d, err := openChild(cfg, log, "ledger-child")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	crashAfter, _ := strconv.Atoi(os.Getenv("E2E_CRASH_AFTER_BATCHES"))
	var batches atomic.Int64
	l := program.NewLedger(d)
	l.Middleware = func(handle kafkabus.BatchHandler) kafkabus.BatchHandler {
		return func(ctx context.Context, msgs []kafkabus.Message) error {
			if err := handle(ctx, msgs); err != nil {
				return err
			}
			if n := batches.Add(1); crashAfter > 0 && n == int64(crashAfter) {
				log.Warn("crashing on purpose after the database commit", zap.Int64("batch", n), zap.Int("messages", len(msgs)))
				os.Exit(137)
			}
			return nil
		}
	}
	err = l.Run(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// stream is a set of sale commands over members with a fixed reward.
type stream struct {
	tn       *tenant
	members  []*member.Member
	expected map[string]int64 // member id → expected pending
	cmds     []ledger.Command
}

const streamReward = 500

func newStream(t *testing.T, s *stack, members, orders int) *stream {
	t.Helper()
	st := &stream{expected: map[string]int64{}}
	st.tn = s.newTenant(campaign.Campaign{Name: "Fixo", RewardType: campaign.RewardFixed, RewardValue: streamReward, WarrantyDays: 30, IsActive: true})
	for i := 0; i < members; i++ {
		st.members = append(st.members, s.newMember(st.tn, fmt.Sprintf("m%d@example.com", i), "Member "+strconv.Itoa(i)))
	}
	paid := s.clock.Now().UTC()
	for i := 0; i < orders; i++ {
		m := st.members[i%members]
		st.cmds = append(st.cmds, ledger.Command{
			ID: fmt.Sprintf("guru:crash-%d:sale", i), Type: ledger.CmdCreditSale, MerchantID: st.tn.merchant.ID,
			MemberID: m.ID, IssuedAt: paid,
			Sale: &ledger.Sale{Source: "guru", OrderID: fmt.Sprintf("crash-%d", i), Amount: 10000, Currency: "BRL",
				CouponCode: m.CouponCode, BuyerName: "Buyer", BuyerEmail: fmt.Sprintf("buyer%d@example.com", i), PaidAt: paid},
		})
		st.expected[m.ID.String()] += streamReward
	}
	return st
}

// publish sends the commands, plus every tenth one a second time (an
// upstream duplicate the ledger must absorb).
func (st *stream) publish(t *testing.T, s *stack) {
	t.Helper()
	var dups []ledger.Command
	for i := 0; i < len(st.cmds); i += 10 {
		dups = append(dups, st.cmds[i])
	}
	all := append(append([]ledger.Command{}, st.cmds...), dups...)
	for i := 0; i < len(all); i += 500 {
		if err := s.deps.Commands.PublishCommands(context.Background(), all[i:min(i+500, len(all))]); err != nil {
			t.Fatal(err)
		}
	}
}

func (st *stream) referrals(s *stack) int {
	return s.count(`SELECT count(*) FROM referrals WHERE merchant_id = $1`, st.tn.merchant.ID)
}

// verify checks every wallet to the cent, that nothing was doubled, and
// the ledger invariants.
func (st *stream) verify(t *testing.T, s *stack) {
	t.Helper()
	ctx := context.Background()
	rows, err := s.deps.Pool.Query(ctx, `SELECT member_id::text, pending, available, total_earned FROM wallets WHERE merchant_id = $1`, st.tn.merchant.ID)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for rows.Next() {
		var id string
		var pending, available, earned int64
		_ = rows.Scan(&id, &pending, &available, &earned)
		if pending != earned || available != 0 {
			t.Errorf("member %s: pending %d available %d earned %d", id, pending, available, earned)
		}
		got[id] = pending
	}
	rows.Close()
	bad := 0
	for id, want := range st.expected {
		if got[id] != want {
			bad++
			if bad <= 5 {
				t.Errorf("member %s: pending = %d, want %d", id, got[id], want)
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d wallets wrong", bad, len(st.expected))
	}
	n := len(st.cmds)
	for what, q := range map[string]string{
		"referrals":          `SELECT count(*) FROM referrals WHERE merchant_id = $1`,
		"ledger entries":     `SELECT count(*) FROM ledger_entries WHERE merchant_id = $1`,
		"credits":            `SELECT count(*) FROM wallet_transactions WHERE merchant_id = $1`,
		"processed commands": `SELECT count(*) FROM processed_commands WHERE merchant_id = $1`,
		"created events":     `SELECT count(*) FROM outbox WHERE merchant_id = $1 AND type = 'referral.created'`,
	} {
		if c := s.count(q, st.tn.merchant.ID); c != n {
			t.Errorf("%s = %d, want %d", what, c, n)
		}
	}
	if err := postgres.CheckLedger(ctx, s.deps.Pool); err != nil {
		t.Error(err)
	}
}

func TestLedgerCrashMidStream(t *testing.T) {
	t.Parallel()
	brokers := testenv.MustBroker(t)
	dbURL := testenv.MustDatabase(t)
	// The replacement ledger's 2 s session is set before the stack starts:
	// its roles read the configuration while they run.
	s := startStack(t, stackOptions{brokers: brokers, databaseURL: dbURL, noLedger: true,
		env: map[string]string{"KAFKA_SESSION_TIMEOUT": "2s"}})
	st := newStream(t, s, 500, 10_000)
	st.publish(t, s)

	child := exec.Command(os.Args[0], "-test.run=^$")
	child.Env = append(os.Environ(), "E2E_CHILD=ledger", "E2E_CRASH_AFTER_BATCHES=6",
		"DATABASE_URL="+dbURL, "KAFKA_BROKERS="+strings.Join(brokers, ","), "REDIS_URL="+testenv.RedisURL(),
		"SECRETS_KEY="+s.deps.Config.SecretsKey, "LEDGER_GROUP="+s.deps.Config.LedgerGroup, "KAFKA_SESSION_TIMEOUT=2s",
		"METRICS_ADDR=127.0.0.1:0", "LOG_LEVEL=warn")
	child.Env = append(child.Env, s.clock.ChildEnv()...)
	out, err := child.CombinedOutput()
	if code := child.ProcessState.ExitCode(); code != 137 {
		t.Fatalf("child ledger exited %d (%v), want the crash 137:\n%s", code, err, out)
	}
	applied := st.referrals(s)
	t.Logf("the crashed worker had committed %d of %d orders to the database", applied, len(st.cmds))
	if applied == 0 || applied >= len(st.cmds) {
		t.Fatalf("crash was not mid-stream: %d of %d applied", applied, len(st.cmds))
	}

	// A replacement joins the group and takes over from the committed
	// offsets: the crashed worker's last batch is delivered again.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s.run(ctx, "ledger", program.RunLedger)
	testenv.Eventually(t, 90*time.Second, "all orders credited", func() bool { return st.referrals(s) == len(st.cmds) })
	time.Sleep(time.Second) // duplicates still in flight would show now
	st.verify(t, s)
}

func TestLedgerRebalanceMidStream(t *testing.T) {
	t.Parallel()
	s := startStack(t, stackOptions{noLedger: true, env: map[string]string{"KAFKA_SESSION_TIMEOUT": "2s"}})
	st := newStream(t, s, 500, 10_000)

	ctxA, stopA := context.WithCancel(context.Background())
	ctxB, stopB := context.WithCancel(context.Background())
	defer stopB()
	s.run(ctxA, "ledger A", program.RunLedger)
	st.publish(t, s)
	testenv.Eventually(t, 60*time.Second, "a quarter applied", func() bool { return st.referrals(s) >= len(st.cmds)/4 })
	s.run(ctxB, "ledger B", program.RunLedger) // joins mid-stream
	testenv.Eventually(t, 60*time.Second, "half applied", func() bool { return st.referrals(s) >= len(st.cmds)/2 })
	stopA() // leaves mid-stream
	testenv.Eventually(t, 90*time.Second, "all orders credited", func() bool { return st.referrals(s) == len(st.cmds) })
	time.Sleep(time.Second)
	st.verify(t, s)
}
