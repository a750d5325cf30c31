// Package readme holds the test that keeps README.md true: it runs the
// walkthrough of the section "A sale, from webhook to available balance"
// verbatim against a fresh standalone and compares every answer.
//
// The section's format, which the README states in prose:
//
//   - Its fenced sh blocks run in order in one bash session, so variables
//     set in one block serve the next ones.
//   - The first block sets the session's variables. The test runs it with
//     its values made real: a value containing "…" is read from
//     DATA_DIR/demo-merchant.json (MERCHANT_ID → merchant_id, API_KEY →
//     api_key), and http://localhost:8080 and :8081 become the test
//     standalone's addresses.
//   - In the other blocks, the lines "# → <text>" right after a command are
//     what the command prints, one line each. A command without them must
//     print nothing.
//   - Outputs are compared after the generated parts are replaced on both
//     sides (see normalize): UUIDs, prefixed ids, timestamps, webhook
//     secrets, the random end of coupon codes, and the standalone's
//     addresses.
//   - A read (a command with curl but neither -X nor -d) whose output does
//     not match yet is run again for up to readRetry: the pipeline is
//     asynchronous, and a loaded test machine may take longer than the
//     README's "sleep 1".
//
// The standalone's log (its standard error, JSON lines) is then checked:
// one access line per request, one line per business event, and no secret.
package readme

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/convida/convida/pkg/testenv"
)

// section is the heading of the walkthrough.
const section = "## A sale, from webhook to available balance"

// readRetry bounds how long a read is repeated until it matches.
const readRetry = 20 * time.Second

// guruToken is the account token of the walkthrough: it must never be
// logged.
const guruToken = "guru-account-token-0123456789abcdefghijkl"

func TestREADMEWalkthrough(t *testing.T) {
	raw, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks, err := walkthroughBlocks(string(raw))
	if err != nil {
		t.Fatal(err)
	}

	sa := startStandalone(t)
	sh := startShell(t)
	sh.run(t, setupScript(t, blocks[0], sa))

	var outputs []string // actual outputs, for the secret check
	for bi, b := range blocks[1:] {
		for _, seg := range segments(b) {
			got := sh.run(t, seg.script)
			deadline := time.Now().Add(readRetry)
			for !matches(got, seg.want, sa) && isRead(seg.script) && time.Now().Before(deadline) {
				time.Sleep(300 * time.Millisecond)
				got = sh.run(t, seg.script)
			}
			outputs = append(outputs, got)
			if !matches(got, seg.want, sa) {
				t.Fatalf("README block %d, command:\n%s\nprinted:\n%s\nthe README says:\n%s\n(normalized: printed\n%s\nwant\n%s)",
					bi+2, seg.script, got, strings.Join(seg.want, "\n"),
					normalize(sa.realToREADME(got)), normalize(strings.Join(seg.want, "\n")))
			}
		}
	}

	checkRequestID(t, sa)
	sa.Stop(t)
	checkLog(t, sa, strings.Join(outputs, "\n"))
}

// walkthroughBlocks returns the sh blocks of the section, dedented.
func walkthroughBlocks(readme string) ([][]string, error) {
	lines := strings.Split(readme, "\n")
	start := slices.Index(lines, section)
	if start < 0 {
		return nil, fmt.Errorf("README.md has no line %q", section)
	}
	var blocks [][]string
	var cur []string
	indent, inBlock, inOther := "", false, false
	for _, line := range lines[start+1:] {
		trimmed := strings.TrimSpace(line)
		switch {
		case inBlock && trimmed == "```":
			blocks, cur, inBlock = append(blocks, cur), nil, false
		case inBlock:
			cur = append(cur, strings.TrimPrefix(line, indent))
		case inOther:
			inOther = trimmed != "```"
		case trimmed == "```sh":
			inBlock, indent = true, line[:strings.Index(line, "```")]
		case strings.HasPrefix(trimmed, "```"):
			inOther = true
		case strings.HasPrefix(line, "#"):
			if len(blocks) < 2 {
				return nil, fmt.Errorf("README.md: the section %q has %d sh blocks", section, len(blocks))
			}
			return blocks, nil
		}
	}
	return blocks, nil
}

// segment is a command (one or more lines) and what it prints.
type segment struct {
	script string
	want   []string
}

const wantPrefix = "# → "

// segments splits a block at its expected-output lines.
func segments(block []string) []segment {
	var out []segment
	var cmd []string
	var want []string
	flush := func() {
		if len(cmd) > 0 || len(want) > 0 {
			out = append(out, segment{script: strings.Join(cmd, "\n"), want: want})
		}
		cmd, want = nil, nil
	}
	for _, line := range block {
		if w, ok := strings.CutPrefix(line, wantPrefix); ok {
			want = append(want, w)
			continue
		}
		if len(want) > 0 {
			flush()
		}
		cmd = append(cmd, line)
	}
	flush()
	return out
}

// isRead reports whether script only reads: running it again is harmless.
func isRead(script string) bool {
	return strings.Contains(script, "curl") && !strings.Contains(script, " -X ") && !strings.Contains(script, " -d ")
}

// setupScript makes the variables of the first block real.
func setupScript(t *testing.T, block []string, sa *standalone) string {
	t.Helper()
	fromDemo := map[string]string{"MERCHANT_ID": sa.Demo.MerchantID, "API_KEY": sa.Demo.APIKey}
	assign := regexp.MustCompile(`^(export )?([A-Z_]+)=(\S*)`)
	var b strings.Builder
	seen := map[string]bool{}
	for _, line := range block {
		m := assign.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("README: the first block of %q should only set variables; it has %q", section, line)
		}
		name, value := m[2], m[3]
		if strings.Contains(value, "…") {
			v, ok := fromDemo[name]
			if !ok {
				t.Fatalf("README: the test knows no value for %s", name)
			}
			value = v
		}
		value = sa.readmeToReal(value)
		seen[name] = true
		fmt.Fprintf(&b, "export %s='%s'\n", name, value)
	}
	for _, name := range []string{"MERCHANT_ID", "API_KEY", "API", "INGEST"} {
		if !seen[name] {
			t.Fatalf("README: the first block of %q does not set %s", section, name)
		}
	}
	return b.String()
}

// normalizers replace what differs from run to run, in this order.
var normalizers = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`\b([a-z]+)_[0-9a-f]{32}\b`), "${1}_<id>"},
	{regexp.MustCompile(`\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b`), "<uuid>"},
	{regexp.MustCompile(`\b\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z`), "<time>"},
	{regexp.MustCompile(`whsec_[A-Za-z0-9+/]{43}=`), "whsec_<secret>"},
	{regexp.MustCompile(`whsec_\*\*\*\*[A-Za-z0-9+/=]{4}`), "whsec_****<end>"},
	{regexp.MustCompile(`\bDEMO-([A-Z0-9]+)-[A-Z0-9]{4}\b`), "DEMO-${1}-<code>"},
}

func normalize(s string) string {
	for _, n := range normalizers {
		s = n.re.ReplaceAllString(s, n.with)
	}
	return s
}

func matches(got string, want []string, sa *standalone) bool {
	return normalize(sa.realToREADME(got)) == normalize(strings.Join(want, "\n"))
}

// standalone is the program under test (testenv.StartStandalone).
type standalone struct{ *testenv.Standalone }

// The README's addresses.
const (
	readmeAPI    = "http://localhost:8080"
	readmeIngest = "http://localhost:8081"
)

func (sa *standalone) readmeToReal(s string) string {
	return strings.NewReplacer(readmeAPI, sa.API, readmeIngest, sa.Ingest).Replace(s)
}

func (sa *standalone) realToREADME(s string) string {
	return strings.NewReplacer(sa.API, readmeAPI, sa.Ingest, readmeIngest).Replace(s)
}

// startStandalone builds cmd/standalone and starts it on a fresh database
// and data directory, with its own broker, and waits until it serves.
func startStandalone(t *testing.T) *standalone {
	t.Helper()
	return &standalone{testenv.StartStandalone(t, map[string]string{"SCHEDULER_INTERVAL": "1s", "LOG_LEVEL": "info"})}
}

// shell is one bash session the README's commands run in.
type shell struct {
	stdin io.Writer
	lines chan string
	n     int
}

func startShell(t *testing.T) *shell {
	t.Helper()
	cmd := exec.Command("bash", "--noprofile", "--norc")
	cmd.Env = append(os.Environ(), "LC_ALL=C.UTF-8")
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = w, w
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	sh := &shell{stdin: stdin, lines: make(chan string, 1024)}
	go func() {
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			sh.lines <- sc.Text()
		}
		close(sh.lines)
	}()
	t.Cleanup(func() {
		stdin.Close()
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return sh
}

// run runs script and returns what it printed, trimmed.
func (sh *shell) run(t *testing.T, script string) string {
	t.Helper()
	sh.n++
	marker := fmt.Sprintf("__readme_test_done_%d__", sh.n)
	if _, err := fmt.Fprintf(sh.stdin, "%s\nprintf '\\n%s\\n'\n", script, marker); err != nil {
		t.Fatalf("bash: %v", err)
	}
	var out []string
	timeout := time.After(2 * time.Minute)
	for {
		select {
		case line, ok := <-sh.lines:
			if !ok {
				t.Fatalf("bash exited running:\n%s\noutput:\n%s", script, strings.Join(out, "\n"))
			}
			if line == marker {
				return strings.TrimSpace(strings.Join(out, "\n"))
			}
			out = append(out, line)
		case <-timeout:
			t.Fatalf("bash did not finish in 2 minutes:\n%s\noutput so far:\n%s", script, strings.Join(out, "\n"))
		}
	}
}
