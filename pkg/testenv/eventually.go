package testenv

import (
	"testing"
	"time"
)

// Eventually polls cond every 10 ms until it holds, and fails the test,
// naming what it waited for, when within passes first. cond runs on the
// test's goroutine, so it may call tb.Fatal.
func Eventually(tb testing.TB, within time.Duration, what string, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("timed out after %v waiting for %s", within, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
