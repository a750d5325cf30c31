package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/convida/convida/pkg/testenv"
)

// TestCtrlCEndsMakeRunWithZero runs `make run` in a terminal of its own
// (a pseudo-terminal, make in its foreground as a shell puts it) and
// types Ctrl-C once the banner is out: the standalone stops cleanly and
// make ends with 0, printing no "make: ***" line.
func TestCtrlCEndsMakeRunWithZero(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("make"); err != nil {
		t.Fatalf("make is not installed: %v", err)
	}
	terminal, tty := openTerminal(t)
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	dataDir := filepath.Join(t.TempDir(), "data")
	cmd := exec.Command("make", "--no-print-directory", "run")
	cmd.Dir = root
	cmd.Env = testenv.StandaloneEnv(map[string]string{"DATABASE_URL": testenv.MustDatabase(t), "REDIS_URL": testenv.RedisURL(),
		"DATA_DIR": dataDir, "HTTP_ADDR": testenv.FreeAddr(t), "INGEST_ADDR": testenv.FreeAddr(t), "METRICS_ADDR": testenv.FreeAddr(t)})
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0} // the child's fd 0: tty
	screen := &lockedBuffer{}
	go func() { _, _ = screen.ReadFrom(terminal) }()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
	})

	deadline := time.Now().Add(3 * time.Minute)
	for !strings.Contains(screen.String(), "is running") {
		select {
		case err := <-done:
			t.Fatalf("make run ended before its banner (%v):\n%s", err, screen.String())
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("no banner within 3 minutes:\n%s", screen.String())
		}
	}
	if _, err := terminal.Write([]byte{0x03}); err != nil { // Ctrl-C, which the terminal turns into SIGINT
		t.Fatal(err)
	}
	select {
	case err := <-done:
		var exit *exec.ExitError
		if errors.As(err, &exit) || err != nil {
			t.Errorf("make run after Ctrl-C: %v, want exit status 0\n%s", err, screen.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("make run still running 60 s after Ctrl-C:\n%s", screen.String())
	}
	if out := screen.String(); strings.Contains(out, "make: ***") {
		t.Errorf("make reported an error after Ctrl-C:\n%s", out)
	}
}

// openTerminal opens a pseudo-terminal: the side a program reads and
// writes as its terminal (tty), and the side that plays the keyboard and
// the screen.
func openTerminal(t *testing.T) (terminal, tty *os.File) {
	t.Helper()
	terminal, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("open /dev/ptmx: %v", err)
	}
	t.Cleanup(func() { terminal.Close() })
	fd := int(terminal.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		t.Fatalf("unlock the pseudo-terminal: %v", err)
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		t.Fatalf("name the pseudo-terminal: %v", err)
	}
	if tty, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0); err != nil {
		t.Fatalf("open /dev/pts/%d: %v", n, err)
	}
	return terminal, tty
}

// lockedBuffer is what the terminal shows, read while it is written.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) ReadFrom(f *os.File) (int64, error) {
	chunk := make([]byte, 4096)
	var total int64
	for {
		n, err := f.Read(chunk)
		b.mu.Lock()
		b.buf.Write(chunk[:n])
		b.mu.Unlock()
		total += int64(n)
		if err != nil {
			return total, err
		}
	}
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
