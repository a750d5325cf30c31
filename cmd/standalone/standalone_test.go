package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/convida/convida/pkg/merchant"
	"github.com/convida/convida/pkg/postgres"
	"github.com/convida/convida/pkg/testenv"
)

// run runs the built standalone with args and settings (over the test's
// environment, less SECRETS_KEY and KAFKA_BROKERS) for at most 30 s, and
// returns its exit status, its output and how long it took.
func run(t *testing.T, settings map[string]string, args ...string) (code int, stdout, stderr string, took time.Duration) {
	t.Helper()
	return runBin(t, testenv.BuildStandalone(t), settings, args...)
}

// runBin is run of a standalone already built at bin.
func runBin(t *testing.T, bin string, settings map[string]string, args ...string) (code int, stdout, stderr string, took time.Duration) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = testenv.StandaloneEnv(settings)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	timer := time.AfterFunc(30*time.Second, func() { _ = cmd.Process.Kill() })
	defer timer.Stop()
	_ = cmd.Wait()
	return cmd.ProcessState.ExitCode(), out.String(), errOut.String(), time.Since(start)
}

func count(t *testing.T, url, query string) int {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var n int
	if err := conn.QueryRow(context.Background(), query).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestRefusesADatabaseOfAnotherDataDir is the new user's mistake: the data
// directory removed, the database kept. With no key file and no SECRETS_KEY
// the standalone says what happened and how to fix it, exits 2 within
// seconds, and creates nothing: no key, no data directory, no second demo
// merchant, no check value.
func TestRefusesADatabaseOfAnotherDataDir(t *testing.T) {
	t.Parallel()
	pool := testenv.MustPool(t)
	testenv.MustMerchant(t, pool, nil, merchant.Merchant{Name: "Loja Demo"})
	dbURL := pool.Config().ConnString()
	dataDir := filepath.Join(t.TempDir(), "data")

	code, stdout, stderr, took := run(t, map[string]string{"DATABASE_URL": dbURL, "DATA_DIR": dataDir,
		"REDIS_URL": testenv.RedisURL(), "HTTP_ADDR": "127.0.0.1:0", "INGEST_ADDR": "127.0.0.1:0", "METRICS_ADDR": "127.0.0.1:0"})
	if code != 2 || took > 10*time.Second {
		t.Errorf("exit %d after %s, want 2 within 10 s", code, took)
	}
	name, _, _ := postgres.DatabaseOf(dbURL)
	for _, want := range []string{
		"standalone: " + dataDir + " has no secrets.key and SECRETS_KEY is not set",
		`the database "` + name + `" on 127.0.0.1 (DATABASE_URL) already has merchants`,
		"restore that secrets.key into " + dataDir + ", or set SECRETS_KEY",
		`"make reset" drops the database "` + name + `" and removes ` + dataDir,
		"Nothing was created.",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr does not say %q:\n%s", want, stderr)
		}
	}
	if stdout != "" {
		t.Errorf("printed a banner: %q", stdout)
	}
	if _, err := os.Stat(dataDir); !os.IsNotExist(err) {
		t.Errorf("the data directory was created (%v)", err)
	}
	if n := count(t, dbURL, `SELECT count(*) FROM merchants`); n != 1 {
		t.Errorf("%d merchants, want the first one alone", n)
	}
	if n := count(t, dbURL, `SELECT count(*) FROM secrets_check`); n != 0 {
		t.Errorf("a check value was stored")
	}
}

// TestReset: `standalone reset` (make reset) says what it removes, drops
// the database and removes the data directory; it refuses a database on
// another host without connecting to it.
func TestReset(t *testing.T) {
	t.Parallel()
	dbURL := testenv.MustDatabase(t)
	name, _, _ := postgres.DatabaseOf(dbURL)
	dataDir := filepath.Join(t.TempDir(), "data")
	if err := os.MkdirAll(filepath.Join(dataDir, "kafka"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dataDir, "secrets.key"), []byte("key\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	remote := "postgres://postgres@db.example.invalid:5432/" + name + "?sslmode=disable&connect_timeout=1"
	code, _, stderr, _ := run(t, map[string]string{"DATABASE_URL": remote, "DATA_DIR": dataDir}, "reset")
	if code != 2 || !strings.Contains(stderr, "DATABASE_URL names a database on db.example.invalid") {
		t.Errorf("reset of a remote database: exit %d, %q; want 2 and a refusal", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(dataDir, "secrets.key")); err != nil {
		t.Errorf("the refused reset removed the data directory: %v", err)
	}

	code, stdout, stderr, _ := run(t, map[string]string{"DATABASE_URL": dbURL, "DATA_DIR": dataDir}, "reset")
	if code != 0 {
		t.Fatalf("reset: exit %d\n%s%s", code, stdout, stderr)
	}
	if want := `reset: dropping the database "` + name + `" on 127.0.0.1 (DATABASE_URL) and removing ` + dataDir + " (DATA_DIR)"; !strings.Contains(stdout, want) {
		t.Errorf("reset printed %q, want %q", stdout, want)
	}
	if _, err := os.Stat(dataDir); !os.IsNotExist(err) {
		t.Errorf("the data directory is still there (%v)", err)
	}
	if n := count(t, testenv.ServerURL(), `SELECT count(*) FROM pg_database WHERE datname = '`+name+`'`); n != 0 {
		t.Errorf("the database %s is still there", name)
	}
}

// logEntry is what the log checks read of a JSON log line.
type logEntry struct {
	Level  string `json:"level"`
	Logger string `json:"logger"`
	Msg    string `json:"msg"`
	Route  string `json:"route"`
	Error  string `json:"error"`
	raw    string
}

// readLog parses the JSON lines of log from offset on; a plain line (the
// broker's, a library's) is kept with its text as msg, at info.
func readLog(t *testing.T, path string, offset int64) []logEntry {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []logEntry
	for _, line := range strings.Split(string(b[offset:]), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		e := logEntry{raw: line}
		if json.Unmarshal([]byte(line), &e) != nil {
			e = logEntry{Level: "info", Msg: line, raw: line}
		}
		out = append(out, e)
	}
	return out
}

// atInfo reports whether a line is at info or above.
func (e logEntry) atInfo() bool { return e.Level != "debug" }

// idleInfoBudget is how many lines at info or above an idle standalone may
// write in a minute: nothing happens, so nothing is worth an operator's
// reading; a few lines of a consumer group that settles are allowed.
const idleInfoBudget = 5

// TestIdleMinuteLogs runs the built standalone, at LOG_LEVEL=debug so
// that the demoted lines are there to count, and reads its log of one idle
// minute once it serves: no line at info or above says "i/o timeout" (the
// Kafka reader's idle fetches), and at most idleInfoBudget lines are at
// info or above. It is not skipped by -short: it runs in `make test`'s
// first phase, in parallel with the package's other tests and beside the
// other packages, so that its minute costs the suite little; and a loaded
// machine is where the reader's fetches meet their deadline.
func TestIdleMinuteLogs(t *testing.T) {
	t.Parallel()
	sa := testenv.StartStandalone(t, map[string]string{"LOG_LEVEL": "debug"})
	start := sa.LogSize(t)
	startup := 0
	for _, l := range readLog(t, sa.LogPath, 0) {
		if l.atInfo() {
			startup++
		}
	}
	time.Sleep(time.Minute)
	lines := readLog(t, sa.LogPath, start)
	var info, timeouts []string
	debugTimeouts := 0
	for _, l := range lines {
		timeout := strings.Contains(l.raw, "i/o timeout")
		switch {
		case l.atInfo() && timeout:
			timeouts = append(timeouts, l.raw)
		case timeout:
			debugTimeouts++
		}
		if l.atInfo() {
			info = append(info, l.raw)
		}
	}
	t.Logf("the start: %d lines at info or above; then an idle minute: %d lines, %d at info or above, %d i/o timeouts at debug\n%s",
		startup, len(lines), len(info), debugTimeouts, strings.Join(info, "\n"))
	if len(timeouts) > 0 {
		t.Errorf("%d i/o timeout lines at info or above in an idle minute:\n%s", len(timeouts), strings.Join(timeouts, "\n"))
	}
	if len(info) > idleInfoBudget {
		t.Errorf("%d lines at info or above in an idle minute, want at most %d:\n%s", len(info), idleInfoBudget, strings.Join(info, "\n"))
	}
}
