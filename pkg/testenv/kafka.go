package testenv

import (
	"testing"

	"github.com/convida/convida/pkg/embeddedbroker"
)

// MustBroker starts an embedded Kafka-protocol broker for the test, persistent
// in a t.TempDir() and with 16 partitions per topic by default, and closes it
// when the test and its subtests are done. It returns the broker's bootstrap
// addresses. Each call starts a separate broker, so parallel tests do not see
// each other's topics or groups. It fails the test if the broker cannot start.
func MustBroker(tb testing.TB) []string {
	tb.Helper()
	b, err := embeddedbroker.Start(embeddedbroker.Config{DataDir: tb.TempDir()})
	if err != nil {
		tb.Fatalf("testenv: start embedded broker: %v", err)
	}
	tb.Cleanup(b.Close)
	return b.Addrs()
}
