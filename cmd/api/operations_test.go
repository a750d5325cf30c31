package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/merchant"
	"github.com/convida/convida/pkg/postgres"
	"github.com/convida/convida/pkg/program"
)

const manual = "../../docs/operations.md"

// docBlock is a fenced block of the manual.
type docBlock struct {
	lang, text string
	run        bool // an sh block; every other block says it is not run
}

// manualBlocks returns the manual's fenced blocks. An sh block runs in
// TestOperationsManual; any other must follow a line "<!-- not run: why -->",
// and an sh block must not, so that the manual's promise holds.
func manualBlocks(t *testing.T) []docBlock {
	t.Helper()
	raw, err := os.ReadFile(manual)
	if err != nil {
		t.Fatal(err)
	}
	var blocks []docBlock
	lines := strings.Split(string(raw), "\n")
	notRun := false
	for i := 0; i < len(lines); i++ {
		trimmed := strings.TrimSpace(lines[i])
		if strings.HasPrefix(trimmed, "<!-- not run:") {
			notRun = true
			continue
		}
		if !strings.HasPrefix(trimmed, "```") {
			if trimmed != "" {
				notRun = false
			}
			continue
		}
		indent := lines[i][:strings.Index(lines[i], "```")]
		b := docBlock{lang: strings.TrimPrefix(trimmed, "```")}
		var body []string
		for i++; i < len(lines) && strings.TrimSpace(lines[i]) != "```"; i++ {
			body = append(body, strings.TrimPrefix(lines[i], indent))
		}
		b.text, b.run = strings.Join(body, "\n"), b.lang == "sh"
		switch {
		case b.run && notRun:
			t.Errorf("docs/operations.md: an sh block is marked not run; mark it bash or drop the comment:\n%s", b.text)
		case !b.run && !notRun:
			t.Errorf("docs/operations.md: a %q block is neither sh (run by the test) nor after <!-- not run: … -->:\n%s", b.lang, b.text)
		}
		blocks, notRun = append(blocks, b), false
	}
	return blocks
}

// dockerShim is docker compose as TestOperationsManual plays it: run
// executes the program built from this tree with .env's settings, exec in
// postgres runs the PostgreSQL client against the test's database (named
// convida in the manual), and the commands that manage containers are
// printed, not run.
const dockerShim = `#!/usr/bin/env bash
set -euo pipefail
[ "${1:-}" = compose ] || { echo "docker shim: only docker compose is played" >&2; exit 2; }
shift
while [ "${1:-}" = --profile ]; do shift 2; done
sub=$1; shift
case "$sub" in
run)
  [ "${1:-}" = --rm ] && shift
  svc=$1; shift
  set -a; . ./.env; set +a
  exec "$CONVIDA_BIN/$svc" "$@" ;;
exec)
  [ "${1:-}" = -T ] && shift
  [ "$1" = postgres ] || { echo "docker shim: exec in $1 is not played" >&2; exit 2; }
  shift
  args=()
  for a in "$@"; do
    case "$a" in convida) a=$TEST_DB ;; --dbname=convida) a=--dbname=$TEST_DB ;; esac
    args+=("$a")
  done
  exec "${args[@]}" ;;
up|stop|start|pull|build) echo "docker compose $sub $* (not run by the test)" ;;
*) echo "docker shim: docker compose $sub is not played" >&2; exit 2 ;;
esac
`

// TestOperationsManual runs the sh blocks of docs/operations.md in order
// in one bash session: the first merchant and its keys, a backup, a
// restore that undoes what came after the backup, and the rotation of
// SECRETS_KEY over a sealed secret, which opens with the new key alone at
// the end.
func TestOperationsManual(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	blocks := manualBlocks(t)
	binDir := t.TempDir()
	if out, err := exec.Command("go", "build", "-o", filepath.Join(binDir, "api"), "github.com/convida/convida/cmd/api").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	if err := os.WriteFile(filepath.Join(binDir, "docker"), []byte(dockerShim), 0o755); err != nil {
		t.Fatal(err)
	}
	url := emptyDatabase(t)
	dbName := url[strings.LastIndex(url, "/")+1 : strings.Index(url, "?")]
	work := t.TempDir()
	sh := startBash(t, work, append(os.Environ(), "PATH="+binDir+":"+os.Getenv("PATH"), "CONVIDA_BIN="+binDir,
		"DATABASE_URL="+url, "TEST_DB="+dbName, "PGHOST=127.0.0.1", "PGPORT=5432"))

	merchants := func() *postgres.MerchantStore {
		pool, err := postgres.Open(ctx, url, 2)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(pool.Close)
		box, err := program.NewBox(program.Config{SecretsKey: envFile(t, work)["SECRETS_KEY"]})
		if err != nil {
			t.Fatal(err)
		}
		return postgres.NewMerchantStore(pool, box)
	}
	const token = "guru-account-token-0123456789abcdefghijkl"
	var merchantID uuid.UUID
	hooks := []struct {
		in            string // a line of the block
		before, after func(out string)
	}{
		{in: "openssl rand -base64 32", after: func(string) {
			if fi, err := os.Stat(filepath.Join(work, ".env")); err != nil || fi.Mode().Perm() != 0o600 {
				t.Errorf(".env: %v, mode %v; want 0600", err, fi)
			}
		}},
		{in: "merchant create", after: func(out string) {
			for _, k := range []string{`"merchant_id"`, `"api_key"`, `"dashboard_email"`, `"dashboard_password"`} {
				if !strings.Contains(out, k) {
					t.Errorf("merchant create printed %q, without %s", out, k)
				}
			}
			id, err := uuid.Parse(sh.run(t, `echo "$MERCHANT_ID"`).stdout)
			if err != nil {
				t.Fatalf("MERCHANT_ID is not the merchant's id: %v", err)
			}
			merchantID = id
		}},
		{in: "key list", after: func(out string) {
			if out := lastLine(out); strings.Count(out, `"key_prefix"`) != 2 || !strings.Contains(out, merchantID.String()) {
				t.Errorf("key list printed %s, want the merchant's two keys", out)
			}
		}},
		{in: "pg_dump", after: func(string) {
			if fi, err := os.Stat(filepath.Join(work, sh.run(t, `echo "$DUMP"`).stdout)); err != nil || fi.Size() == 0 {
				t.Fatalf("the dump: %v %v", err, fi)
			}
			// After the backup: a key the restore must take away.
			if _, _, err := merchants().CreateKey(ctx, merchantID); err != nil {
				t.Fatal(err)
			}
		}},
		{in: "secrets rotate", before: func(string) {
			// A secret sealed under the key being rotated away from.
			if _, err := merchants().PutIntegration(ctx, merchantID, merchant.Integration{Provider: "guru", AccountToken: token}); err != nil {
				t.Fatal(err)
			}
		}, after: func(out string) {
			var got struct{ Resealed, Unreadable int }
			if err := json.Unmarshal([]byte(lastLine(out)), &got); err != nil || got.Resealed < 1 || got.Unreadable != 0 {
				t.Errorf("secrets rotate printed %q, want resealed ≥ 1 and unreadable 0 (%v)", out, err)
			}
		}},
		{in: "SECRETS_KEY_PREVIOUS=/d", after: func(string) {
			env := envFile(t, work)
			if _, ok := env["SECRETS_KEY_PREVIOUS"]; ok {
				t.Errorf(".env still holds SECRETS_KEY_PREVIOUS")
			}
			in, err := merchants().FindIntegration(ctx, merchantID, "guru") // the new key alone
			if err != nil || in.AccountToken != token {
				t.Errorf("the Guru token under the new key alone: %v, %v", in, err)
			}
		}},
	}
	ran := 0
	for _, b := range blocks {
		if !b.run {
			continue
		}
		ran++
		hook := -1
		for i, h := range hooks {
			if slices.ContainsFunc(strings.Split(b.text, "\n"), func(l string) bool { return strings.Contains(l, h.in) }) {
				hook = i
			}
		}
		if hook >= 0 && hooks[hook].before != nil {
			hooks[hook].before("")
		}
		res := sh.run(t, b.text)
		if res.status != 0 {
			t.Fatalf("docs/operations.md block exited %d:\n%s\nstdout:\n%s\nstderr:\n%s", res.status, b.text, res.stdout, res.stderr)
		}
		if hook >= 0 && hooks[hook].after != nil {
			hooks[hook].after(res.stdout)
		}
	}
	if ran < 8 {
		t.Errorf("ran %d sh blocks of docs/operations.md; did its blocks change?", ran)
	}
}

// envFile reads dir/.env as compose would (KEY=value lines).
func envFile(t *testing.T, dir string) map[string]string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, ".env"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, line := range strings.Split(string(raw), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			out[k] = v
		}
	}
	return out
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// bash is one bash session the blocks share, so that a variable set in
// one serves the next.
type bash struct {
	in    io.Writer
	lines chan string
	dir   string
	n     int
}

type bashResult struct {
	stdout, stderr string
	status         int
}

func startBash(t *testing.T, dir string, env []string) *bash {
	t.Helper()
	cmd := exec.Command("bash", "--noprofile", "--norc")
	cmd.Dir, cmd.Env = dir, env
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	b := &bash{in: stdin, lines: make(chan string, 64), dir: t.TempDir()}
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			b.lines <- sc.Text()
		}
		close(b.lines)
	}()
	t.Cleanup(func() {
		stdin.Close()
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return b
}

// run runs script in the session, under set -e and pipefail, and returns
// its output and status; a failing command ends the session, and the test
// with it.
func (b *bash) run(t *testing.T, script string) bashResult {
	t.Helper()
	b.n++
	out, errf := filepath.Join(b.dir, fmt.Sprint(b.n, ".out")), filepath.Join(b.dir, fmt.Sprint(b.n, ".err"))
	marker := fmt.Sprintf("__operations_block_%d__", b.n)
	// The script runs in the session itself, so its variables persist.
	fmt.Fprintf(b.in, "__block() {\nset -eo pipefail\n%s\n}\n__block > %q 2> %q; __s=$?; set +e +o pipefail; echo %s $__s\n",
		script, out, errf, marker)
	timeout := time.After(3 * time.Minute)
	for {
		select {
		case line, ok := <-b.lines:
			if !ok {
				o, _ := os.ReadFile(out)
				e, _ := os.ReadFile(errf)
				t.Fatalf("docs/operations.md block failed (set -e ended the session):\n%s\nstdout:\n%s\nstderr:\n%s", script, o, e)
			}
			if rest, found := strings.CutPrefix(line, marker+" "); found {
				var status int
				fmt.Sscan(rest, &status)
				o, _ := os.ReadFile(out)
				e, _ := os.ReadFile(errf)
				return bashResult{stdout: strings.TrimSpace(string(o)), stderr: string(e), status: status}
			}
		case <-timeout:
			t.Fatalf("bash did not finish within 3 minutes:\n%s", script)
		}
	}
}
