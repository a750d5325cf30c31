package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver of database/sql
	"github.com/pressly/goose/v3"

	"github.com/convida/convida/migrations"
	"github.com/convida/convida/pkg/merchant"
	"github.com/convida/convida/pkg/testenv"
)

// oldVersion is the schema the upgrade starts from: before 00011, which
// alters wallets and fills its new columns from the referrals.
const oldVersion = 10

// TestTwoAPIsMigrateAnOldDatabaseOnce starts two api processes at once on
// a database at migration 00010 holding a merchant, a key, a member with a
// wallet and a referral. The test holds a lock on wallets, which 00011
// alters, so that the first migrator waits inside its migration: only one
// process may be waiting there (the other waits for goose's advisory lock),
// where two would mean both run the migrations. Then both serve, every
// version is recorded once, the data reads back through either API, and
// the previous release's migrations, run again on the new schema, apply
// nothing and fail on nothing (a program of the old release restarting
// during a rolling upgrade).
func TestTwoAPIsMigrateAnOldDatabaseOnce(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	bin := buildProgram(t, "api")
	url := emptyDatabase(t)
	db, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	old, err := goose.NewProvider(goose.DialectPostgres, db, migrations.FS)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := old.UpTo(ctx, oldVersion); err != nil {
		t.Fatalf("migrating to %05d: %v", oldVersion, err)
	}
	seed := seedOldSchema(t, ctx, db)

	// Hold wallets, so that whoever migrates stops in 00011.
	hold, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer hold.Rollback() //nolint:errcheck
	if _, err := hold.ExecContext(ctx, `LOCK TABLE wallets IN ACCESS EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}

	env := append(os.Environ(), "DATABASE_URL="+url, "KAFKA_BROKERS="+strings.Join(testenv.MustBroker(t), ","),
		"SECRETS_KEY="+randomKey(t), "LOG_LEVEL=info")
	apis := []*process{startProcess(t, bin, env), startProcess(t, bin, env)}

	waiting := func() int {
		var n int
		if err := db.QueryRowContext(ctx, `SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation
WHERE c.relname = 'wallets' AND NOT l.granted`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	testenv.Eventually(t, 30*time.Second, "a migrator waiting for wallets", func() bool { return waiting() > 0 })
	time.Sleep(2 * time.Second) // the other process has started by now
	if n := waiting(); n != 1 {
		t.Errorf("%d sessions wait to migrate wallets, want 1: the other process must wait for the migration lock", n)
	}
	for _, p := range apis {
		if p.exited() {
			t.Fatalf("an api exited while the migration waited:\n%s", p.log())
		}
	}
	if err := hold.Rollback(); err != nil {
		t.Fatal(err)
	}

	for i, p := range apis {
		testenv.Eventually(t, 60*time.Second, fmt.Sprintf("api %d ready", i+1), func() bool {
			if p.exited() {
				t.Fatalf("api %d exited:\n%s", i+1, p.log())
			}
			return p.ready()
		})
	}

	var versions, total, last int64
	if err := db.QueryRowContext(ctx, `SELECT count(DISTINCT version_id), count(*), max(version_id)
FROM goose_db_version WHERE is_applied`).Scan(&versions, &total, &last); err != nil {
		t.Fatal(err)
	}
	files, err := fs.Glob(migrations.FS, "*.sql")
	if err != nil {
		t.Fatal(err)
	}
	if want := int64(len(files)) + 1; versions != want || total != want { // + goose's version 0
		t.Errorf("goose_db_version holds %d rows of %d versions, want each of the %d versions once", total, versions, want)
	}
	var stats struct {
		Sales  int
		Reward int64
	}
	if err := db.QueryRowContext(ctx, `SELECT month_sales, month_reward FROM wallets WHERE member_id = $1`,
		seed.member).Scan(&stats.Sales, &stats.Reward); err != nil {
		t.Fatal(err)
	}
	if stats.Sales != 1 || stats.Reward != 979 {
		t.Errorf("00011 filled the wallet with %+v, want the referral of the month: 1 sale, 979 cents", stats)
	}
	for i, p := range apis {
		got := p.getJSON(t, "/api/v1/members/mem_"+strings.ReplaceAll(seed.member.String(), "-", ""), seed.key)
		data, _ := got["data"].(map[string]any)
		wallet, _ := data["wallet"].(map[string]any)
		if data["email"] != "ana@example.com" || wallet["pending"] != float64(979) {
			t.Errorf("api %d reads the member as %v, want ana@example.com with 979 cents pending", i+1, got)
		}
	}
	for _, p := range apis {
		p.stop(t)
	}

	// A program of the previous release (its migrations end at 00010)
	// restarting during the rolling upgrade finds nothing to apply and no
	// error in the newer versions it does not know.
	previous := fstest.MapFS{}
	for _, f := range files {
		if version, _ := goose.NumericComponent(f); version <= oldVersion {
			b, _ := fs.ReadFile(migrations.FS, f)
			previous[f] = &fstest.MapFile{Data: b}
		}
	}
	prev, err := goose.NewProvider(goose.DialectPostgres, db, previous)
	if err != nil {
		t.Fatal(err)
	}
	if applied, err := prev.Up(ctx); err != nil || len(applied) != 0 {
		t.Errorf("the previous release's migrations on the new schema: applied %v, %v; want nothing and no error", applied, err)
	}
}

// oldSeed is what seedOldSchema wrote.
type oldSeed struct {
	member uuid.UUID
	key    string
}

// seedOldSchema writes, in the SQL of the schema at oldVersion, a merchant
// with an API key, a campaign, a member with a pending reward and its
// referral of this month.
func seedOldSchema(t *testing.T, ctx context.Context, db *sql.DB) oldSeed {
	t.Helper()
	m, c, mem, key := uuid.New(), uuid.New(), uuid.New(), uuid.NewString()
	stmts := []struct {
		sql  string
		args []any
	}{
		{`INSERT INTO merchants (id, name, store_url, code_prefix, dashboard_email, dashboard_password_hash)
VALUES ($1, 'Loja Antiga', 'https://loja.example.com', 'LOJA', 'owner@loja.example.com', 'x')`, []any{m}},
		{`INSERT INTO api_keys (merchant_id, id, key_hash, prefix) VALUES ($1, $2, $3, $4)`,
			[]any{m, uuid.New(), merchant.HashKey(key), key[:8]}},
		{`INSERT INTO campaigns (merchant_id, id, name, reward_type, reward_value, warranty_days, is_default)
VALUES ($1, $2, 'Indique', 'percentage', 10, 7, true)`, []any{m, c}},
		{`INSERT INTO members (merchant_id, id, email, name, coupon_code, campaign_id)
VALUES ($1, $2, 'ana@example.com', 'Ana', 'LOJA-ANA-0001', $3)`, []any{m, mem, c}},
		{`INSERT INTO wallets (merchant_id, member_id, pending, total_earned) VALUES ($1, $2, 979, 979)`, []any{m, mem}},
		{`INSERT INTO referrals (merchant_id, id, member_id, source, order_id, order_value, reward_amount, status,
  warranty_expires_at, created_at, updated_at)
VALUES ($1, $2, $3, 'guru', 'order-1', 9790, 979, 'pending', now() + interval '7 days', now(), now())`, []any{m, uuid.New(), mem}},
	}
	for _, s := range stmts {
		if _, err := db.ExecContext(ctx, s.sql, s.args...); err != nil {
			t.Fatalf("seeding the old schema: %v\n%s", err, s.sql)
		}
	}
	return oldSeed{member: mem, key: key}
}

// emptyDatabase creates a database with nothing in it, dropped at cleanup.
func emptyDatabase(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, testenv.ServerURL())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	name := "convida_mig_" + strings.ReplaceAll(uuid.NewString(), "-", "")[:16]
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c, err := pgx.Connect(context.Background(), testenv.ServerURL())
		if err == nil {
			_, _ = c.Exec(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
			c.Close(context.Background())
		}
	})
	return testenv.DatabaseURL(name)
}

// buildProgram builds cmd/<name> into a temporary directory.
func buildProgram(t *testing.T, name string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), name)
	if b, err := exec.Command("go", "build", "-o", out, "github.com/convida/convida/cmd/"+name).CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", name, err, b)
	}
	return out
}

func randomKey(t *testing.T) string {
	t.Helper()
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(b)
}

// process is a program started by the test on addresses of its own.
type process struct {
	cmd           *exec.Cmd
	http, metrics string
	out           *lockedBuffer
	done          chan struct{}
}

// startProcess starts bin with env and free HTTP and metrics addresses;
// it is stopped at cleanup if the test did not.
func startProcess(t *testing.T, bin string, env []string, args ...string) *process {
	t.Helper()
	p := &process{http: freeAddr(t), metrics: freeAddr(t), out: &lockedBuffer{}, done: make(chan struct{})}
	p.cmd = exec.Command(bin, args...)
	p.cmd.Env = append(env, "HTTP_ADDR="+p.http, "METRICS_ADDR="+p.metrics)
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() { p.stop(t) })
	return p
}

func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

func (p *process) log() string { return p.out.String() }

// ready reports whether the process's /readyz answers 200.
func (p *process) ready() bool {
	resp, err := http.Get("http://" + p.metrics + "/readyz")
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// getJSON GETs path from the process's API with key.
func (p *process) getJSON(t *testing.T, path, key string) map[string]any {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, "http://"+p.http+path, nil)
	req.Header.Set("X-API-Key", key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var v map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
		t.Fatalf("GET %s: %d, not JSON: %v", path, resp.StatusCode, err)
	}
	return v
}

// stop sends SIGTERM and waits for the process to drain and exit.
func (p *process) stop(t *testing.T) {
	if p.exited() {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(20 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
		t.Errorf("%s did not stop within 20 s of SIGTERM:\n%s", p.cmd.Path, p.log())
	}
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// lockedBuffer is an output both of a process's streams write to.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
