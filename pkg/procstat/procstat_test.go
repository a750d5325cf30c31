package procstat_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/convida/convida/pkg/procstat"
)

// The test binary finds itself, and its CPU time grows while it spins.
func TestByCommandFindsItself(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	name := filepath.Base(exe)
	if len(name) > 15 { // the kernel keeps 15 bytes of the command name
		name = name[:15]
	}
	own := func() time.Duration {
		for _, p := range procstat.ByCommand(name) {
			if p.PID == os.Getpid() {
				return p.CPU
			}
		}
		t.Fatalf("ByCommand(%q) did not find pid %d", name, os.Getpid())
		return 0
	}
	start := own()
	for deadline := time.Now().Add(10 * time.Second); own()-start < 50*time.Millisecond; {
		if time.Now().After(deadline) {
			t.Fatalf("own CPU grew %v in 10 s of spinning, want 50 ms", own()-start)
		}
	}
	// Read after its own figure, the total cannot be less: CPU time only grows.
	mine := own()
	if total := procstat.Total(name); total < mine {
		t.Errorf("Total(%q) = %v, less than this process's own %v", name, total, mine)
	}
}
