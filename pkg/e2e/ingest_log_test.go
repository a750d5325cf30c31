package e2e

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/convida/convida/pkg/ingest"
	"github.com/convida/convida/pkg/kafkabus"
	"github.com/convida/convida/pkg/program"
	"github.com/convida/convida/pkg/testenv"
)

// The ingest's request path is the log alone (issue 10): with the merchant
// and the coupon cached, an accepted sale runs no PostgreSQL statement.
// The whole stack reaches PostgreSQL through a proxy the test cuts: the
// sale is answered 200 while PostgreSQL is unreachable, and credited (and
// recorded) once it is back.
func TestIngestAnswersWhilePostgresIsUnreachable(t *testing.T) {
	t.Parallel()
	dbURL := testenv.MustDatabase(t)
	proxy := startProxy(t, hostOf(t, dbURL))
	s, tn, m := startWithAna(t, stackOptions{databaseURL: withHost(t, dbURL, proxy.addr)}, 1500)

	// Warm the caches: the merchant's Guru settings (kept 5 s) and Ana's
	// coupon. The second sale comes at once, well within the 5 s.
	wantStatus(t, s.postGuru(tn, guruSale(t, tn, "pg-down-1", m.CouponCode, 97.9, "approved")), 200)
	proxy.stop()
	start := time.Now()
	res := s.postGuru(tn, guruSale(t, tn, "pg-down-2", m.CouponCode, 97.9, "approved"))
	took := time.Since(start)
	wantStatus(t, res, 200)
	if res.Status == 200 && res.json(t)["status"] != "accepted" {
		t.Errorf("answer %s, want accepted", res.Body)
	}
	t.Logf("answered in %v with PostgreSQL unreachable", took)
	// Past the settings' 5 s: the ingest tries to refresh them, cannot, and
	// keeps the ones it has (stale if error) instead of answering 503.
	time.Sleep(5500 * time.Millisecond)
	wantStatus(t, s.postGuru(tn, guruSale(t, tn, "pg-down-3", m.CouponCode, 97.9, "approved")), 200)
	proxy.restart()

	// Polled through the pool, which finds its broken connections as it
	// goes: the API would answer 503 for a while.
	testenv.Eventually(t, 60*time.Second, "the three sales credited", func() bool {
		var n int
		err := s.deps.Pool.QueryRow(context.Background(), `SELECT count(*) FROM referrals WHERE merchant_id = $1`, tn.merchant.ID).Scan(&n)
		return err == nil && n == 3
	})
	s.waitBalance(tn, m.Email, wallet{totalEarned: 4500, pending: 4500})
	s.waitRecords(tn, 3)
	if err := checkLedger(s); err != nil {
		t.Error(err)
	}
}

// Exactly once without Redis: every repeat is accepted again (there is no
// "duplicate" answer without the fast path) and the ledger applies the
// command id once.
func TestDuplicateDeliveriesCreditOnceWithoutRedis(t *testing.T) {
	t.Parallel()
	s, tn, m := startWithAna(t, stackOptions{redisURL: "redis://" + closedAddr(t) + "/0"}, 1500)
	outcomes := postDuplicates(t, s, tn, m.CouponCode, "noredis")
	if outcomes["accepted"] != 20 {
		t.Errorf("answers = %v, want 20 accepted (no duplicate answer without Redis)", outcomes)
	}
	wantCreditedOnce(t, s, tn, m.Email)
}

// The record of a delivery is in the broker before the answer: an ingest
// killed after answering, before any recorder ran, loses none (an accepted
// sale's record inside its command, for the ledger; the others on the
// deliveries topic, for the recorder).
func TestDeliveryRecordsSurviveTheIngestKilledAfterAnswering(t *testing.T) {
	t.Parallel()
	s, tn, m := startWithAna(t, stackOptions{noRecorder: true}, 1500)
	child := exec.Command(os.Args[0], "-test.run=^$")
	child.Env = append(os.Environ(), "E2E_CHILD=ingest",
		"DATABASE_URL="+s.deps.Config.DatabaseURL, "KAFKA_BROKERS="+strings.Join(s.deps.Config.KafkaBrokers, ","),
		"REDIS_URL="+testenv.RedisURL(), "SECRETS_KEY="+s.deps.Config.SecretsKey, "LOG_LEVEL=warn")
	child.Env = append(child.Env, s.clock.ChildEnv()...)
	stdout, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	child.Stderr = os.Stderr
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = child.Process.Kill(); _ = child.Wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("child ingest: %v", err)
	}
	ingestURL := "http://" + strings.TrimSpace(line) + "/api/webhooks/guru/" + tn.merchant.ID.String()
	post := func(body []byte) int {
		return do(t, http.MethodPost, ingestURL, body, map[string]string{"Content-Type": "application/json"}).Status
	}
	sale := guruSale(t, tn, "killed-1", m.CouponCode, 97.9, "approved")
	wrong := guruSale(t, tn, "killed-2", m.CouponCode, 97.9, "approved")
	wrong = []byte(strings.ReplaceAll(string(wrong), tn.guruToken, strings.Repeat("x", 40)))
	for _, tt := range []struct {
		body []byte
		want int
	}{{sale, 200}, {sale, 200}, {wrong, 401}, {guruSale(t, tn, "killed-3", "NOBODY-XXXX", 10, "approved"), 200}} {
		if got := post(tt.body); got != tt.want {
			t.Errorf("answer = %d, want %d", got, tt.want)
		}
	}
	if err := child.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = child.Wait()
	// The accepted sale's record travels inside its command, and the
	// ledger may have written it already; the others wait in the broker.
	if got := s.count(`SELECT count(*) FROM inbound_deliveries WHERE outcome <> 'accepted'`); got != 0 {
		t.Fatalf("records without a command before any recorder ran = %d, want 0", got)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s.run(ctx, "recorder", program.RunRecorder)
	s.waitRecords(tn, 4)
	outcomes := map[string]int{}
	rows, err := s.deps.Pool.Query(context.Background(), `SELECT outcome || ' ' || http_status FROM inbound_deliveries WHERE merchant_id = $1`, tn.merchant.ID)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var o string
		_ = rows.Scan(&o)
		outcomes[o]++
	}
	rows.Close()
	want := map[string]int{"accepted 200": 1, "duplicate 200": 1, "unauthorized 401": 1, "unattributed 200": 1}
	if fmt.Sprint(outcomes) != fmt.Sprint(want) {
		t.Errorf("records = %v, want %v", outcomes, want)
	}
	s.waitBalance(tn, m.Email, wallet{totalEarned: 1500, pending: 1500})
}

// A batch of records written but not committed (the recorder failed or
// died after its statement) comes again, and is written once. The records
// are of unattributed sales: an accepted sale's record travels inside its
// command, and the ledger writes it.
func TestRecorderWritesARedeliveredBatchOnce(t *testing.T) {
	t.Parallel()
	s, tn, _ := startWithAna(t, stackOptions{noRecorder: true}, 1500)
	for i := range 5 {
		wantStatus(t, s.postGuru(tn, guruSale(t, tn, "rec-"+strconv.Itoa(i), "NOBODY-XXXX", 10, "approved")), 200)
	}
	r := program.NewRecorder(s.deps)
	var calls atomic.Int64
	r.Middleware = func(handle kafkabus.BatchHandler) kafkabus.BatchHandler {
		return func(ctx context.Context, msgs []kafkabus.Message) error {
			if err := handle(ctx, msgs); err != nil {
				return err
			}
			if calls.Add(1) == 1 {
				return errors.New("lost after the write, before the offsets")
			}
			return nil
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s.run(ctx, "recorder", func(ctx context.Context, _ *program.Deps) error { return r.Run(ctx) })
	testenv.Eventually(t, 15*time.Second, "the failed batch retried", func() bool { return calls.Load() >= 2 })
	s.waitRecords(tn, 5)
}

// A body near the 1 MiB limit is accepted, and its record, which must fit
// in one message, keeps the first MaxRecordedBody bytes and says so.
func TestLargeBodyIsAcceptedAndItsRecordCut(t *testing.T) {
	t.Parallel()
	s, tn, m := startWithAna(t, stackOptions{}, 1500)
	body := fixture(t, guruApproved, map[string]any{"api_token": tn.guruToken, "id": "large-1",
		"payment.coupon.coupon_code": m.CouponCode, "pad": strings.Repeat("a", 1000<<10)})
	if len(body) <= ingest.MaxRecordedBody || len(body) > ingest.MaxBody {
		t.Fatalf("body of %d bytes", len(body))
	}
	wantStatus(t, s.postGuru(tn, body), 200)
	s.waitRecords(tn, 1)
	var kept int
	var cut string
	err := s.deps.Pool.QueryRow(context.Background(), `SELECT length(body), headers->>$2 FROM inbound_deliveries WHERE merchant_id = $1`,
		tn.merchant.ID, ingest.HeaderBodyTruncated).Scan(&kept, &cut)
	if err != nil {
		t.Fatal(err)
	}
	// The length noted is the redacted body's: the token became [REDACTED].
	redacted := len(body) - len(tn.guruToken) + len("[REDACTED]")
	if kept != ingest.MaxRecordedBody || cut != strconv.Itoa(redacted) {
		t.Errorf("record keeps %d bytes, truncated header %q; want %d and %d", kept, cut, ingest.MaxRecordedBody, redacted)
	}
	s.waitBalance(tn, m.Email, wallet{totalEarned: 1500, pending: 1500})
}

// childIngest serves the ingest router as cmd/ingest does, on a loopback
// port it prints on stdout, until it is killed.
func childIngest() int {
	cfg, err := program.LoadConfig(os.Getenv)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	log, _ := program.NewLogger("warn")
	d, err := openChild(cfg, log, "ingest-child")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	fmt.Println(ln.Addr().String())
	fmt.Fprintln(os.Stderr, http.Serve(ln, program.IngestRouter(d)))
	return 1
}

// postDuplicates posts one Guru sale and one Yampi order five times each
// at once, then five times each in sequence, all answered 200, and
// returns the answers' statuses.
func postDuplicates(t *testing.T, s *stack, tn *tenant, coupon, id string) map[string]int {
	guru := guruSale(t, tn, "dup-guru-"+id, coupon, 97.9, "approved")
	yampi := yampiOrder(t, yampiPaid, 990001, coupon, 100)
	var mu sync.Mutex
	outcomes := map[string]int{}
	count := func(res response) {
		wantStatus(t, res, 200)
		if res.Status == 200 {
			mu.Lock()
			outcomes[res.json(t)["status"].(string)]++
			mu.Unlock()
		}
	}
	var wg sync.WaitGroup
	for i := 0; i < 5; i++ {
		wg.Add(2)
		go func() { defer wg.Done(); count(s.postGuru(tn, guru)) }()
		go func() { defer wg.Done(); count(s.postYampi(tn, yampi, "")) }()
	}
	wg.Wait()
	for i := 0; i < 5; i++ {
		count(s.postGuru(tn, guru))
		count(s.postYampi(tn, yampi, ""))
	}
	return outcomes
}

// wantCreditedOnce checks that the two orders of postDuplicates made one
// referral and one credit each, and that all 20 deliveries are recorded.
func wantCreditedOnce(t *testing.T, s *stack, tn *tenant, email string) {
	s.waitBalance(tn, email, wallet{totalEarned: 3000, pending: 3000})
	time.Sleep(500 * time.Millisecond) // let any straggling duplicate reach the ledger
	if got := s.count(`SELECT count(*) FROM referrals WHERE merchant_id = $1`, tn.merchant.ID); got != 2 {
		t.Errorf("referrals = %d, want 2", got)
	}
	if got := s.count(`SELECT count(*) FROM ledger_entries WHERE merchant_id = $1`, tn.merchant.ID); got != 2 {
		t.Errorf("ledger entries = %d, want 2", got)
	}
	s.waitRecords(tn, 20)
	s.waitBalance(tn, email, wallet{totalEarned: 3000, pending: 3000})
}

// proxy forwards TCP connections to target until stopped; stop also cuts
// the connections it carries, as an unreachable server would.
type proxy struct {
	t      testing.TB
	addr   string
	target string

	mu    sync.Mutex
	ln    net.Listener
	conns map[net.Conn]bool
}

func startProxy(t testing.TB, target string) *proxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{t: t, addr: ln.Addr().String(), target: target, conns: map[net.Conn]bool{}}
	p.serve(ln)
	t.Cleanup(p.stop)
	return p
}

func (p *proxy) serve(ln net.Listener) {
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go p.forward(c)
		}
	}()
}

func (p *proxy) forward(c net.Conn) {
	up, err := net.Dial("tcp", p.target)
	if err != nil {
		_ = c.Close()
		return
	}
	p.mu.Lock()
	if p.ln == nil { // stopped meanwhile
		p.mu.Unlock()
		_ = c.Close()
		_ = up.Close()
		return
	}
	p.conns[c], p.conns[up] = true, true
	p.mu.Unlock()
	go func() { _, _ = io.Copy(up, c); _ = up.Close() }()
	_, _ = io.Copy(c, up)
	_ = c.Close()
}

// stop closes the listener and every connection.
func (p *proxy) stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		_ = p.ln.Close()
		p.ln = nil
	}
	for c := range p.conns {
		_ = c.Close()
	}
	p.conns = map[net.Conn]bool{}
}

// restart listens again on the same address.
func (p *proxy) restart() {
	ln, err := net.Listen("tcp", p.addr)
	if err != nil {
		p.t.Fatalf("proxy restart: %v", err)
	}
	p.serve(ln)
}

func hostOf(t testing.TB, raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u.Host
}

func withHost(t testing.TB, raw, host string) string {
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	u.Host = host
	return u.String()
}

// closedAddr returns a loopback address nothing listens on.
func closedAddr(t testing.TB) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	return addr
}
