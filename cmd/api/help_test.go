package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/convida/convida/pkg/program"
)

// TestHelpNeedsNoService builds every program and runs its help, and the
// help of every administrative command, with nothing to connect to: each
// exits 0 and names the settings it reads; an unknown subcommand or flag
// of each is refused.
func TestHelpNeedsNoService(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	programs := []string{"api", "ingest", "ledger", "dispatcher", "scheduler", "standalone"}
	build := []string{"build", "-o", dir + string(os.PathSeparator)}
	for _, p := range programs {
		build = append(build, "github.com/convida/convida/cmd/"+p)
	}
	if out, err := exec.Command("go", build...).CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	// Nothing listens on these: a program that tried to connect would fail
	// or hang instead of printing its help.
	env := append(os.Environ(), "DATABASE_URL=postgres://nobody@127.0.0.1:1/none?sslmode=disable",
		"REDIS_URL=redis://127.0.0.1:1/0", "KAFKA_BROKERS=", "SECRETS_KEY=", "DATA_DIR="+filepath.Join(dir, "data"))
	run := func(t *testing.T, name string, args []string, settings []program.Setting, want ...string) {
		t.Helper()
		cmd := exec.Command(filepath.Join(dir, name), args...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %v: %v\n%s", name, args, err, out)
		}
		for _, s := range settings {
			want = append(want, s.Name+"="+s.Default)
		}
		for _, w := range want {
			if !strings.Contains(string(out), w) {
				t.Errorf("%s %v does not say %q:\n%s", name, args, w, out)
			}
		}
	}
	for _, p := range programs {
		for _, flag := range []string{"--help", "-h"} {
			run(t, p, []string{flag}, program.SettingsOf(p), "Usage: "+p)
		}
	}
	for _, name := range commandNames {
		args := append(strings.Fields(name), "--help")
		run(t, "api", args, settingsOf(commands[name]), "Usage: api "+name, "Flags:")
	}
	run(t, "api", []string{"key", "--help"}, program.SettingsOf(program.Bootstrap), "api key list")
	run(t, "api", []string{"secrets", "rotate", "--help"}, nil, "SECRETS_KEY=", "SECRETS_KEY_PREVIOUS=", "-batch")
	// An unknown subcommand or flag is an error of one line, exit 2,
	// before anything connects or starts.
	for _, p := range programs {
		for _, args := range [][]string{{"frobnicate"}, {"--bogus"}, {"-v"}} {
			cmd := exec.Command(filepath.Join(dir, p), args...)
			cmd.Env = env
			out, err := cmd.CombinedOutput()
			lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
			if cmd.ProcessState.ExitCode() != 2 || len(lines) != 1 || !strings.HasPrefix(lines[0], p+": unknown argument") {
				t.Errorf("%s %v: %v, printed %q; want exit 2 and one line naming the argument", p, args, err, out)
			}
		}
	}
	for _, args := range [][]string{{"merchant", "frobnicate"}, {"key", "create", "--bogus"}} {
		cmd := exec.Command(filepath.Join(dir, "api"), args...)
		cmd.Env = env
		if out, _ := cmd.CombinedOutput(); cmd.ProcessState.ExitCode() != 2 || strings.Count(string(out), "\n") != 1 {
			t.Errorf("api %v: exit %d, printed %q; want exit 2 and one line", args, cmd.ProcessState.ExitCode(), out)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "data")); !os.IsNotExist(err) {
		t.Errorf("standalone --help created its data directory (%v)", err)
	}
}
