package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/convida/convida/pkg/postgres"
	"github.com/convida/convida/pkg/secretbox"
	"github.com/convida/convida/pkg/testenv"
)

// TestWrongSecretsKeyExits2 runs the programs against a database whose
// secrets were sealed with key A. With another key, the api, the ledger
// and `api secrets rotate` each exit 2 within seconds with one line that
// names SECRETS_KEY and how to rotate, never the key. With the new key and
// A as SECRETS_KEY_PREVIOUS (a rotation in progress), the ledger starts.
func TestWrongSecretsKeyExits2(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	build := []string{"build", "-o", dir + string(os.PathSeparator),
		"github.com/convida/convida/cmd/api", "github.com/convida/convida/cmd/ledger"}
	if out, err := exec.Command("go", build...).CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	_, pool := mustConfigAndPool(t)
	dbURL := pool.Config().ConnString()
	keyA, keyB := secretbox.NewKey(), secretbox.NewKey()
	if err := postgres.CheckSecretsKey(context.Background(), pool, mustBox(t, keyA)); err != nil {
		t.Fatal(err)
	}
	brokers := strings.Join(testenv.MustBroker(t), ",")
	env := func(current, previous, metrics string) []string {
		return append(os.Environ(), "DATABASE_URL="+dbURL, "REDIS_URL="+testenv.RedisURL(), "KAFKA_BROKERS="+brokers,
			"SECRETS_KEY="+current, "SECRETS_KEY_PREVIOUS="+previous, "METRICS_ADDR="+metrics,
			"HTTP_ADDR=127.0.0.1:0", "LEDGER_GROUP=ledger-"+filepath.Base(dir), "LOG_LEVEL=info")
	}

	const want = "SECRETS_KEY cannot open the secrets of this database (it is not the key they were sealed with). " +
		`Restore the right key, or to change keys set SECRETS_KEY_PREVIOUS=<old key> with SECRETS_KEY=<new key> and run "api secrets rotate"`
	for _, c := range []struct {
		program string
		args    []string
	}{
		{"ledger", nil},
		{"api", nil},
		{"api", []string{"secrets", "rotate"}},
	} {
		cmd := exec.Command(filepath.Join(dir, c.program), c.args...)
		cmd.Env = env(keyB, "", testenv.FreeAddr(t))
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		start := time.Now()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		timer := time.AfterFunc(30*time.Second, func() { _ = cmd.Process.Kill() })
		_ = cmd.Wait()
		timer.Stop()
		took := time.Since(start)
		// The ops listener starts before the check (its /readyz answers
		// "starting" meanwhile), so a JSON "listening" line may come first;
		// what a person reads is the one plain line.
		line := plainLines(stderr.String())
		if code := cmd.ProcessState.ExitCode(); code != 2 || took > 10*time.Second {
			t.Errorf("%s %v with another key: exit %d after %s, want 2 within 10 s\n%s", c.program, c.args, code, took, line)
		}
		if line != c.program+": "+want+"\n" {
			t.Errorf("%s %v printed %q, want the one line %q", c.program, c.args, line, c.program+": "+want)
		}
		if stdout.Len() > 0 {
			t.Errorf("%s %v printed on stdout: %q", c.program, c.args, stdout.String())
		}
		if all := stderr.String(); strings.Contains(all, keyA) || strings.Contains(all, keyB) {
			t.Errorf("%s %v printed a key", c.program, c.args)
		}
	}

	// A rotation in progress: the ledger starts and serves its readiness.
	metrics := testenv.FreeAddr(t)
	cmd := exec.Command(filepath.Join(dir, "ledger"))
	cmd.Env = env(keyB, keyA, metrics)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	}()
	for deadline := time.Now().Add(60 * time.Second); ; {
		if testenv.Ready("http://" + metrics + "/readyz") {
			break
		}
		select {
		case err := <-done:
			done <- err
			t.Fatalf("the ledger with SECRETS_KEY=B and SECRETS_KEY_PREVIOUS=A exited: %v\n%s", err, stderr.String())
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("the ledger with SECRETS_KEY=B and SECRETS_KEY_PREVIOUS=A is not ready after 60 s\n%s", stderr.String())
		}
	}
}

// plainLines drops the structured log lines (JSON objects) from out and
// keeps what is meant for a person.
func plainLines(out string) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(out, "\n") {
		if l == "" || json.Valid([]byte(strings.TrimSpace(l))) {
			continue
		}
		b.WriteString(l)
	}
	return b.String()
}
