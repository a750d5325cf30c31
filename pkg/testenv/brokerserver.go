package testenv

import (
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/convida/convida/pkg/embeddedbroker"
)

// BrokerServer is an embedded broker a test stops and starts again on the
// same address with its data, as a broker outage (MustBroker's cannot
// come back).
type BrokerServer struct {
	tb   testing.TB
	dir  string
	port int
	addr []string

	mu sync.Mutex
	b  *embeddedbroker.Broker // nil while stopped
}

// StartBrokerServer starts a BrokerServer, persistent in a t.TempDir(),
// and closes it at cleanup (registered now: it runs after the cleanups of
// what the test starts later, so their writers' last retries find it).
func StartBrokerServer(tb testing.TB) *BrokerServer {
	tb.Helper()
	bs := &BrokerServer{tb: tb, dir: tb.TempDir()}
	b, err := embeddedbroker.Start(embeddedbroker.Config{DataDir: bs.dir})
	if err != nil {
		tb.Fatalf("testenv: start embedded broker: %v", err)
	}
	bs.b, bs.addr = b, b.Addrs()
	if bs.port, err = strconv.Atoi(bs.addr[0][strings.LastIndex(bs.addr[0], ":")+1:]); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(bs.Stop)
	return bs
}

// Addrs are the broker's bootstrap addresses, the same across restarts.
func (bs *BrokerServer) Addrs() []string { return bs.addr }

// Stop closes the broker: connections break, new ones are refused.
func (bs *BrokerServer) Stop() {
	bs.mu.Lock()
	defer bs.mu.Unlock()
	if bs.b != nil {
		bs.b.Close()
		bs.b = nil
	}
}

// Start runs the broker again on its address with its data.
func (bs *BrokerServer) Start() {
	bs.tb.Helper()
	bs.mu.Lock()
	defer bs.mu.Unlock()
	if bs.b != nil {
		return
	}
	b, err := embeddedbroker.Start(embeddedbroker.Config{DataDir: bs.dir, Port: bs.port})
	if err != nil {
		bs.tb.Fatalf("testenv: start the embedded broker again on port %d: %v", bs.port, err)
	}
	bs.b = b
}
