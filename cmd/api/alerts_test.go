package main

import (
	"bufio"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"go.yaml.in/yaml/v3"

	"github.com/convida/convida/pkg/testenv"
)

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
