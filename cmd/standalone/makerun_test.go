package main

import (
	"bufio"
	"bytes"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/convida/convida/pkg/secretbox"
	"github.com/convida/convida/pkg/testenv"
)

// TestTakenPortStopsAtOnce: with one of its three addresses taken, the
// standalone exits 2 within seconds with one line naming the setting to
// change, prints no banner and starts nothing (no data directory).
func TestTakenPortStopsAtOnce(t *testing.T) {
	t.Parallel()
	bin := testenv.BuildStandalone(t)
	dbURL := testenv.MustDatabase(t)
	for _, setting := range []string{"HTTP_ADDR", "INGEST_ADDR", "METRICS_ADDR"} {
		t.Run(setting, func(t *testing.T) {
			taken, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer taken.Close()
			dataDir := filepath.Join(t.TempDir(), "data")
			settings := map[string]string{"DATABASE_URL": dbURL, "REDIS_URL": testenv.RedisURL(), "DATA_DIR": dataDir,
				"HTTP_ADDR": testenv.FreeAddr(t), "INGEST_ADDR": testenv.FreeAddr(t), "METRICS_ADDR": testenv.FreeAddr(t)}
			settings[setting] = taken.Addr().String()

			code, stdout, stderr, took := runBin(t, bin, settings)
			if code != 2 || took > 10*time.Second {
				t.Errorf("exit %d after %s, want 2 within 10 s", code, took)
			}
			lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
			want := "standalone: " + setting + ": " + taken.Addr().String() + " is already in use"
			if len(lines) != 1 || !strings.HasPrefix(lines[0], want) || !strings.Contains(lines[0], "set "+setting+" to a free address") {
				t.Errorf("stderr is not one line %q… naming %s to set:\n%s", want, setting, stderr)
			}
			if stdout != "" {
				t.Errorf("printed %q, want no banner", stdout)
			}
			if _, err := os.Stat(dataDir); !os.IsNotExist(err) {
				t.Errorf("the data directory was created (%v): it started before it failed", err)
			}
		})
	}
}

// TestSecondRunOnTheSameDataDirIsRefused: a second standalone on a data
// directory in use — `make run` twice, the same settings — exits 2 within
// seconds with one line naming the directory and the process that holds
// it, and prints no banner; `make reset` is refused the same way and
// removes nothing. Once the first stops, the directory is free again.
func TestSecondRunOnTheSameDataDirIsRefused(t *testing.T) {
	t.Parallel()
	bin := testenv.BuildStandalone(t)
	dataDir := filepath.Join(t.TempDir(), "data")
	settings := map[string]string{"DATABASE_URL": testenv.MustDatabase(t), "REDIS_URL": testenv.RedisURL(), "DATA_DIR": dataDir,
		"HTTP_ADDR": testenv.FreeAddr(t), "INGEST_ADDR": testenv.FreeAddr(t), "METRICS_ADDR": testenv.FreeAddr(t)}
	first := start(t, bin, settings)
	deadline := time.After(90 * time.Second)
	for running := false; !running; {
		select {
		case line, ok := <-first.lines:
			if !ok {
				<-first.done
				t.Fatalf("the first exited before its banner:\n%s", first.stderr.String())
			}
			running = strings.Contains(line, "is running")
		case <-deadline:
			t.Fatal("the first printed no banner within 90 s")
		}
	}

	inUse := ": " + dataDir + " (DATA_DIR) is in use by another standalone, pid " + strconv.Itoa(first.cmd.Process.Pid) + ": "
	for _, args := range [][]string{nil, {"reset"}} {
		want := strings.Join(append([]string{"standalone"}, args...), " ") + inUse
		code, stdout, stderr, took := runBin(t, bin, settings, args...)
		if code != 2 || took > 10*time.Second {
			t.Errorf("standalone %v: exit %d after %s, want 2 within 10 s", args, code, took)
		}
		if lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n"); len(lines) != 1 || !strings.HasPrefix(lines[0], want) {
			t.Errorf("standalone %v: stderr is not one line %q…:\n%s", args, want, stderr)
		}
		if stdout != "" {
			t.Errorf("standalone %v printed %q, want nothing", args, stdout)
		}
	}
	if _, err := os.Stat(filepath.Join(dataDir, "secrets.key")); err != nil {
		t.Errorf("the refused reset removed the data directory: %v", err)
	}

	if code, stderr := first.interrupt(t); code != 0 {
		t.Fatalf("the first: exit %d after SIGINT\n%s", code, stderr)
	}
	if code, _, stderr, _ := runBin(t, bin, settings, "reset"); code != 0 {
		t.Errorf("reset once the first stopped: exit %d\n%s", code, stderr)
	}
}

// proc is a standalone started by start, its standard output read line by
// line.
type proc struct {
	cmd    *exec.Cmd
	lines  chan string // standard output; closed at its end
	stderr bytes.Buffer
	done   chan struct{}
}

// start starts bin with settings; it is killed at cleanup if still running.
func start(t *testing.T, bin string, settings map[string]string) *proc {
	t.Helper()
	p := &proc{cmd: exec.Command(bin), lines: make(chan string, 100), done: make(chan struct{})}
	p.cmd.Env = testenv.StandaloneEnv(settings)
	p.cmd.Stderr = &p.stderr
	out, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
		close(p.lines)
		_ = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		<-p.done
	})
	return p
}

// interrupt sends SIGINT, as Ctrl-C does, and returns the exit status and
// the standard error; it fails the test if the process does not end within
// 30 s.
func (p *proc) interrupt(t *testing.T) (int, string) {
	t.Helper()
	if err := p.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
		t.Errorf("still running 30 s after SIGINT")
	}
	return p.cmd.ProcessState.ExitCode(), p.stderr.String()
}

// TestMakeRunOutput runs the standalone on a fresh database and data
// directory: when its banner says it is running, its three addresses
// accept connections; the banner is the one README.md shows under
// "$ make run", line for line but for generated values and addresses (as
// are the lines make prints before it, from the Makefile and
// ensure-services.sh); and SIGINT, Ctrl-C, ends it with exit 0 and no error
// in its log.
func TestMakeRunOutput(t *testing.T) {
	t.Parallel()
	bin := testenv.BuildStandalone(t)
	addrs := map[string]string{"HTTP_ADDR": testenv.FreeAddr(t), "INGEST_ADDR": testenv.FreeAddr(t), "METRICS_ADDR": testenv.FreeAddr(t)}
	dataDir := filepath.Join(t.TempDir(), "data")
	settings := map[string]string{"DATABASE_URL": testenv.MustDatabase(t), "REDIS_URL": testenv.RedisURL(), "DATA_DIR": dataDir}
	for k, v := range addrs {
		settings[k] = v
	}
	p := start(t, bin, settings)

	var banner []string
	deadline := time.After(90 * time.Second)
	for len(banner) == 0 || !strings.HasPrefix(strings.TrimSpace(banner[len(banner)-1]), "Password") {
		select {
		case line, ok := <-p.lines:
			if !ok {
				<-p.done
				t.Fatalf("exited before its banner was whole:\n%s\n%s", strings.Join(banner, "\n"), p.stderr.String())
			}
			if strings.Contains(line, "is running") {
				for setting, addr := range addrs {
					if c, err := net.DialTimeout("tcp", addr, time.Second); err != nil {
						t.Errorf("the banner says it is running but %s (%s) refuses: %v", setting, addr, err)
					} else {
						c.Close()
					}
				}
			}
			banner = append(banner, line)
		case <-deadline:
			t.Fatalf("no whole banner within 90 s:\n%s", strings.Join(banner, "\n"))
		}
	}

	readme := makeRunBlock(t)
	real := map[string]string{
		"http://localhost" + port(addrs["HTTP_ADDR"]):   "http://localhost:8080",
		"http://localhost" + port(addrs["INGEST_ADDR"]): "http://localhost:8081",
		"http://" + addrs["METRICS_ADDR"]:               "http://127.0.0.1:9090",
		dataDir:                                         ".data",
	}
	got, want := normalize(banner, real), normalize(readme[3:], nil)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("the banner differs from README.md's (normalized):\n%s\nREADME.md:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	checkMakeLines(t, readme[:3])

	code, stderr := p.interrupt(t)
	if code != 0 {
		t.Errorf("exit %d after SIGINT, want 0", code)
	}
	for _, line := range strings.Split(stderr, "\n") {
		if strings.Contains(line, `"level":"error"`) || strings.Contains(line, "panic") {
			t.Errorf("stopping logged an error: %s", line)
		}
	}
}

// TestInterruptWhileWaiting: Ctrl-C while the standalone waits for a
// PostgreSQL that does not answer ends it with exit 0, and no banner.
func TestInterruptWhileWaiting(t *testing.T) {
	t.Parallel()
	bin := testenv.BuildStandalone(t)
	api := testenv.FreeAddr(t)
	p := start(t, bin, map[string]string{
		"DATABASE_URL": "postgres://postgres@" + testenv.FreeAddr(t) + "/convida?sslmode=disable&connect_timeout=1",
		"SECRETS_KEY":  secretbox.NewKey(), "REDIS_URL": testenv.RedisURL(), "DATA_DIR": filepath.Join(t.TempDir(), "data"),
		"HTTP_ADDR": api, "INGEST_ADDR": testenv.FreeAddr(t), "METRICS_ADDR": testenv.FreeAddr(t),
	})
	deadline := time.Now().Add(30 * time.Second)
	for !testenv.Ready("http://" + api + "/healthz") {
		if time.Now().After(deadline) {
			t.Fatal("the API's /healthz did not answer within 30 s")
		}
		time.Sleep(100 * time.Millisecond)
	}
	code, stderr := p.interrupt(t)
	if code != 0 {
		t.Errorf("exit %d after SIGINT while waiting, want 0\n%s", code, stderr)
	}
	if line, ok := <-p.lines; ok {
		t.Errorf("printed %q while waiting, want no banner", line)
	}
}

// makeRunBlock returns the lines of README.md's fenced block that opens
// with "$ make run".
func makeRunBlock(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), "```\n$ make run\n")
	block, _, closed := strings.Cut(rest, "\n```\n")
	if !ok || !closed {
		t.Fatal("README.md has no block opening with \"$ make run\"")
	}
	return append([]string{"$ make run"}, strings.Split(block, "\n")...)
}

// checkMakeLines checks the README's first lines under "$ make run": what
// ensure-services.sh logs when both services are up, and the Makefile's
// line on the build.
func checkMakeLines(t *testing.T, lines []string) {
	t.Helper()
	script, err := os.ReadFile("../../scripts/ensure-services.sh")
	if err != nil {
		t.Fatal(err)
	}
	if msg, ok := strings.CutPrefix(lines[1], "ensure-services: "); !ok || !strings.Contains(string(script), `log "`+msg+`"`) {
		t.Errorf("README.md's %q is not what ensure-services.sh logs", lines[1])
	}
	makefile, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(makefile), "\t@echo \""+lines[2]+"\"\n") {
		t.Errorf("README.md's %q is not what the Makefile's run target echoes", lines[2])
	}
}

var generated = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`), "<uuid>"},
	{regexp.MustCompile(`^(  Kafka +)\S+$`), "${1}<broker>"},
	{regexp.MustCompile(`^(  Password +)\S+$`), "${1}<password>"},
}

// normalize replaces in lines each key of real by its value, then the
// generated values (ids, keys, the broker's port, the password) by
// placeholders.
func normalize(lines []string, real map[string]string) []string {
	out := make([]string, len(lines))
	for i, line := range lines {
		for from, to := range real {
			line = strings.ReplaceAll(line, from, to)
		}
		for _, g := range generated {
			line = g.re.ReplaceAllString(line, g.with)
		}
		out[i] = line
	}
	return out
}

// port is the ":port" end of addr.
func port(addr string) string {
	_, p, _ := net.SplitHostPort(addr)
	return ":" + p
}
