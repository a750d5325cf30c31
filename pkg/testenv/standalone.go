package testenv

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Standalone is the built cmd/standalone running as a user runs it: on a
// fresh database and data directory, with its own embedded broker and
// key, on free loopback ports. Its standard error, the JSON log, is in
// LogPath; its standard output (the banner, which shows the API key by
// design) is discarded.
type Standalone struct {
	DataDir, LogPath string
	API, Ingest, Ops string // http://127.0.0.1:port; Ops is METRICS_ADDR
	// Demo is the demo merchant it created (DATA_DIR/demo-merchant.json).
	Demo struct {
		MerchantID string `json:"merchant_id"`
		APIKey     string `json:"api_key"`
	}
	cmd  *exec.Cmd
	done chan error
}

// BuildStandalone builds cmd/standalone into a directory of the test's and
// returns the binary's path.
func BuildStandalone(tb testing.TB) string {
	tb.Helper()
	bin := filepath.Join(tb.TempDir(), "standalone")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/convida/convida/cmd/standalone").CombinedOutput(); err != nil {
		tb.Fatalf("go build ./cmd/standalone: %v\n%s", err, out)
	}
	return bin
}

// StandaloneEnv is the test's environment with settings over it, less
// KAFKA_BROKERS and SECRETS_KEY unless settings name them: the standalone
// starts its own broker and keeps its own key.
func StandaloneEnv(settings map[string]string) []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if _, set := settings[name]; !set && name != "KAFKA_BROKERS" && name != "SECRETS_KEY" {
			env = append(env, kv)
		}
	}
	for k, v := range settings {
		env = append(env, k+"="+v)
	}
	return env
}

// StartStandalone builds and starts the standalone with settings over the
// defaults of a fresh run (a new database, DATA_DIR, free addresses, the
// public URLs on them), and waits up to 90 s until it serves: its demo
// merchant written, /readyz on METRICS_ADDR and both /healthz answering.
// It is stopped at cleanup.
func StartStandalone(tb testing.TB, settings map[string]string) *Standalone {
	tb.Helper()
	bin := BuildStandalone(tb)
	dir := tb.TempDir()
	sa := &Standalone{DataDir: filepath.Join(dir, "data"), LogPath: filepath.Join(dir, "standalone.log"), done: make(chan error, 1)}
	httpAddr, ingestAddr, metricsAddr := FreeAddr(tb), FreeAddr(tb), FreeAddr(tb)
	sa.API, sa.Ingest, sa.Ops = "http://"+httpAddr, "http://"+ingestAddr, "http://"+metricsAddr
	env := map[string]string{
		"DATABASE_URL": MustDatabase(tb), "REDIS_URL": RedisURL(), "DATA_DIR": sa.DataDir,
		"HTTP_ADDR": httpAddr, "INGEST_ADDR": ingestAddr, "METRICS_ADDR": metricsAddr,
		"PUBLIC_URL": sa.API, "INGEST_PUBLIC_URL": sa.Ingest,
	}
	for k, v := range settings {
		env[k] = v
	}
	cmd := exec.Command(bin)
	cmd.Env = StandaloneEnv(env)
	logFile, err := os.Create(sa.LogPath)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { logFile.Close() })
	cmd.Stdout, cmd.Stderr = io.Discard, logFile
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	sa.cmd = cmd
	go func() { sa.done <- cmd.Wait() }()
	tb.Cleanup(func() { sa.Stop(tb) })

	deadline := time.Now().Add(90 * time.Second)
	for {
		b, err := os.ReadFile(filepath.Join(sa.DataDir, "demo-merchant.json"))
		if err == nil && json.Unmarshal(b, &sa.Demo) == nil && sa.Demo.APIKey != "" &&
			Ready(sa.Ops+"/readyz") && Ready(sa.API+"/healthz") && Ready(sa.Ingest+"/healthz") {
			return sa
		}
		select {
		case err := <-sa.done:
			sa.cmd = nil
			log, _ := os.ReadFile(sa.LogPath)
			tb.Fatalf("standalone exited: %v\n%s", err, log)
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(sa.LogPath)
			tb.Fatalf("standalone not ready after 90 s\n%s", log)
		}
	}
}

// Stop ends the standalone with SIGTERM and waits for it; it may be called
// again.
func (sa *Standalone) Stop(tb testing.TB) {
	if sa.cmd == nil {
		return
	}
	_ = sa.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-sa.done:
	case <-time.After(30 * time.Second):
		_ = sa.cmd.Process.Kill()
		<-sa.done
		tb.Errorf("standalone did not stop within 30 s of SIGTERM")
	}
	sa.cmd = nil
}

// LogSize is how many bytes the standalone has logged so far.
func (sa *Standalone) LogSize(tb testing.TB) int64 {
	tb.Helper()
	fi, err := os.Stat(sa.LogPath)
	if err != nil {
		tb.Fatal(err)
	}
	return fi.Size()
}

// Ready reports whether a GET of url answers 200.
func Ready(url string) bool {
	resp, err := http.Get(url)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// FreeAddr returns a loopback address no one listens on now.
func FreeAddr(tb testing.TB) string {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}
