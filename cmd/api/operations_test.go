package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"go.yaml.in/yaml/v3"

	"github.com/convida/convida/pkg/merchant"
	"github.com/convida/convida/pkg/postgres"
	"github.com/convida/convida/pkg/program"
	"github.com/convida/convida/pkg/testenv"
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

// TestComposeFile reads docker-compose.yml as compose would (the merge
// key, ${VAR:-default}) and holds it to what docs/operations.md says:
// every setting it passes is one the programs read and loads as they
// would load it; each program's service enters the program the image
// holds, so `docker compose run --rm api merchant create …` runs the
// api's command; the broker accepts the session timeout; METRICS_ADDR is
// on the compose network and never published; TRUSTED_PROXIES is the
// proxy's fixed address; Prometheus scrapes every program.
func TestComposeFile(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("../../docker-compose.yml")
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Services map[string]struct {
			Image       string
			Entrypoint  []string
			Command     []string
			Environment map[string]string
			Ports       []string
			Expose      []string
			Profiles    []string
			Networks    map[string]struct {
				IPv4 string `yaml:"ipv4_address"`
			}
		}
		Networks map[string]struct {
			IPAM struct{ Config []struct{ Subnet string } }
		}
	}
	if err := yaml.Unmarshal(raw, &file); err != nil {
		t.Fatalf("docker-compose.yml: %v", err)
	}
	dockerfile, err := os.ReadFile("../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(dockerfile), "COPY --from=build /out/ /convida/") {
		t.Fatal("Dockerfile: the programs are no longer copied into /convida/")
	}
	defaults := regexp.MustCompile(`^\$\{([A-Z_]+)(:-([^}]*)|:\?[^}]*)\}$`)
	for _, name := range []string{"api", "ingest", "ledger", "dispatcher", "scheduler"} {
		svc, ok := file.Services[name]
		if !ok {
			t.Fatalf("docker-compose.yml has no service %s", name)
		}
		if want := []string{"/convida/" + name}; !slices.Equal(svc.Entrypoint, want) || svc.Command != nil {
			t.Errorf("%s: entrypoint %v, command %v; want the entrypoint %v and no command", name, svc.Entrypoint, svc.Command, want)
		}
		if !strings.Contains(string(dockerfile), "./cmd/"+name) {
			t.Errorf("Dockerfile does not build ./cmd/%s", name)
		}
		env := map[string]string{}
		for k, v := range svc.Environment {
			if _, known := settingOf(k); !known {
				t.Errorf("%s: %s is not a setting of the programs", name, k)
			}
			if m := defaults.FindStringSubmatch(v); m != nil {
				v = m[3] // compose's default; a required one (:?) is set below
			}
			env[k] = v
		}
		env["SECRETS_KEY"] = randomKey(t)
		cfg, err := program.LoadConfig(func(k string) string { return env[k] })
		if err != nil {
			t.Errorf("%s: the settings do not load: %v", name, err)
			continue
		}
		if cfg.KafkaSessionTimeout < 6*time.Second || env["KAFKA_SESSION_TIMEOUT"] == "" {
			t.Errorf("%s: KAFKA_SESSION_TIMEOUT %q: a broker refuses below its group.min.session.timeout.ms, 6 s", name, env["KAFKA_SESSION_TIMEOUT"])
		}
		if cfg.MetricsAddr != ":9090" || !slices.Contains(svc.Expose, "9090") {
			t.Errorf("%s: METRICS_ADDR %q, expose %v; want :9090 on the compose network", name, cfg.MetricsAddr, svc.Expose)
		}
		if !strings.HasPrefix(svc.Environment["SECRETS_KEY"], "${SECRETS_KEY:?") {
			t.Errorf("%s: SECRETS_KEY must be required (${SECRETS_KEY:?…}), not defaulted", name)
		}
		for _, p := range svc.Ports {
			if !strings.HasPrefix(p, "127.0.0.1:") || strings.HasSuffix(p, ":9090") {
				t.Errorf("%s publishes %s: the programs' ports are for this host (the proxy), and 9090 for nobody", name, p)
			}
		}
		proxy := file.Services["proxy"].Networks["default"].IPv4
		if env["TRUSTED_PROXIES"] != proxy+"/32" {
			t.Errorf("%s: TRUSTED_PROXIES %q, want the proxy's address %s/32", name, env["TRUSTED_PROXIES"], proxy)
		}
	}
	subnets := file.Networks["default"].IPAM.Config
	proxy, err := netip.ParseAddr(file.Services["proxy"].Networks["default"].IPv4)
	if err != nil || len(subnets) != 1 || !netip.MustParsePrefix(subnets[0].Subnet).Contains(proxy) {
		t.Errorf("the proxy's address %v is not in the network's subnet %v", proxy, subnets)
	}
	for name, profile := range map[string]string{"proxy": "tls", "prometheus": "monitoring"} {
		if svc := file.Services[name]; !slices.Equal(svc.Profiles, []string{profile}) {
			t.Errorf("%s: profiles %v, want only with --profile %s", name, svc.Profiles, profile)
		}
	}
	if p := file.Services["prometheus"].Ports; !slices.Equal(p, []string{"127.0.0.1:9090:9090"}) {
		t.Errorf("prometheus publishes %v, want 127.0.0.1:9090:9090 only", p)
	}

	promRaw, err := os.ReadFile("../../deploy/prometheus/prometheus.yml")
	if err != nil {
		t.Fatal(err)
	}
	var prom struct {
		RuleFiles     []string `yaml:"rule_files"`
		ScrapeConfigs []struct {
			DNS []struct {
				Names []string
				Port  int
			} `yaml:"dns_sd_configs"`
		} `yaml:"scrape_configs"`
	}
	if err := yaml.Unmarshal(promRaw, &prom); err != nil {
		t.Fatal(err)
	}
	if len(prom.ScrapeConfigs) != 1 || len(prom.ScrapeConfigs[0].DNS) != 1 ||
		!slices.Equal(prom.ScrapeConfigs[0].DNS[0].Names, []string{"api", "ingest", "ledger", "dispatcher", "scheduler"}) ||
		prom.ScrapeConfigs[0].DNS[0].Port != 9090 || !slices.Equal(prom.RuleFiles, []string{"alerts.yml"}) {
		t.Errorf("prometheus.yml does not scrape every program's :9090 with alerts.yml: %+v", prom)
	}
}

// settingOf reports whether name is a setting of the programs.
func settingOf(name string) (program.Setting, bool) {
	for _, s := range program.Settings {
		if s.Name == name {
			return s, true
		}
	}
	return program.Setting{}, false
}

// TestAlertsMatchTheManual holds the table of alerts in docs/operations.md,
// deploy/prometheus/alerts.yml and the programs' /metrics together: the
// same alerts in the same order, each row's metrics in its rule, and every
// metric of every rule exported by a running standalone (which runs every
// role, so every metric). Where promtool is installed, it checks the rules
// and runs alerts_test.yml.
func TestAlertsMatchTheManual(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(manual)
	if err != nil {
		t.Fatal(err)
	}
	section := string(raw)
	section = section[strings.Index(section, "\n## Alerts\n"):]
	section = section[:strings.Index(section[1:], "\n## ")+1]
	metricName := regexp.MustCompile(`\b(?:convida|kafkabus)_[a-z_]+\b`)
	type row struct {
		alert   string
		metrics []string
	}
	var rows []row
	for _, line := range strings.Split(section, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 6 || !strings.HasPrefix(strings.TrimSpace(cells[1]), "`Convida") {
			continue
		}
		rows = append(rows, row{alert: strings.Trim(strings.TrimSpace(cells[1]), "`"), metrics: metricName.FindAllString(cells[2], -1)})
	}

	rulesRaw, err := os.ReadFile("../../deploy/prometheus/alerts.yml")
	if err != nil {
		t.Fatal(err)
	}
	var rules struct {
		Groups []struct {
			Rules []struct {
				Alert, Expr, For string
				Labels           map[string]string
			}
		}
	}
	if err := yaml.Unmarshal(rulesRaw, &rules); err != nil {
		t.Fatal(err)
	}
	var names []string
	exprs := map[string]string{}
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			names = append(names, r.Alert)
			exprs[r.Alert] = r.Expr
			if r.Labels["severity"] == "" {
				t.Errorf("%s has no severity", r.Alert)
			}
		}
	}
	var documented []string
	for _, r := range rows {
		documented = append(documented, r.alert)
		for _, m := range r.metrics {
			if !strings.Contains(exprs[r.alert], m) && !strings.Contains(section, "(and `"+m) {
				t.Errorf("docs/operations.md: the row %s names %s, which its rule does not read", r.alert, m)
			}
		}
	}
	if !slices.Equal(documented, names) {
		t.Errorf("the manual's alerts %v differ from alerts.yml's %v", documented, names)
	}

	exported := scrapeStandalone(t)
	for alert, expr := range exprs {
		for _, m := range metricName.FindAllString(expr, -1) {
			if !exported[m] {
				t.Errorf("%s reads %s, which no program exports", alert, m)
			}
		}
	}
	for _, r := range rows {
		for _, m := range r.metrics {
			if !exported[m] {
				t.Errorf("docs/operations.md names %s (%s), which no program exports", m, r.alert)
			}
		}
	}

	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Log("promtool is not installed (Debian: prometheus): the rules' syntax and alerts_test.yml were not checked")
		return
	}
	for _, args := range [][]string{{"check", "rules", "alerts.yml"}, {"test", "rules", "alerts_test.yml"}} {
		cmd := exec.Command(promtool, args...)
		cmd.Dir = "../../deploy/prometheus"
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("promtool %v: %v\n%s", args, err, out)
		}
	}
}

// scrapeStandalone runs the standalone program built from this tree on a
// fresh database and its own broker, asks each public server once, and
// returns the metric names its /metrics exports once the scheduler has
// ticked and the consumers measured their lag.
func scrapeStandalone(t *testing.T) map[string]bool {
	t.Helper()
	bin := buildProgram(t, "standalone")
	env := append(os.Environ(), "DATABASE_URL="+emptyDatabase(t), "KAFKA_BROKERS=", "DATA_DIR="+t.TempDir(),
		"SCHEDULER_INTERVAL=1s", "LOG_LEVEL=warn")
	ingest := freeAddr(t)
	p := startProcess(t, bin, append(env, "INGEST_ADDR="+ingest))
	testenv.Eventually(t, 90*time.Second, "standalone ready", func() bool {
		if p.exited() {
			t.Fatalf("standalone exited:\n%s", p.log())
		}
		return p.ready()
	})
	for _, u := range []string{"http://" + p.http + "/api/v1/members", "http://" + ingest + "/api/webhooks/guru/" + uuid.NewString()} {
		resp, err := http.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	want := []string{"convida_consumer_lag_messages", "convida_outbox_pending", "convida_http_requests_total"}
	names := map[string]bool{}
	testenv.Eventually(t, 30*time.Second, "the lag, the scheduler's gauges and the request counts in /metrics", func() bool {
		resp, err := http.Get("http://" + p.metrics + "/metrics")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			if name, ok := strings.CutPrefix(sc.Text(), "# TYPE "); ok {
				names[strings.Fields(name)[0]] = true
			}
		}
		return !slices.ContainsFunc(want, func(n string) bool { return !names[n] })
	})
	p.stop(t)
	return names
}
