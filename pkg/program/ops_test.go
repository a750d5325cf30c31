package program

import (
	"net"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
)

// TestOpsOnATakenAddressStopsNothing: two programs left at the default
// METRICS_ADDR on one host must both keep serving; the second one logs,
// naming the setting, and goes on without its operator's server.
func TestOpsOnATakenAddressStopsNothing(t *testing.T) {
	t.Parallel()
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	core, logs := observer.New(zap.ErrorLevel)
	d := &Deps{Config: Config{MetricsAddr: taken.Addr().String()}, Log: zap.New(core)}
	if err := RunOps(t.Context(), d, "ingest"); err != nil {
		t.Fatalf("RunOps on a taken address = %v, want nil: the program must go on", err)
	}
	if logs.FilterField(zap.String("METRICS_ADDR", taken.Addr().String())).Len() != 1 {
		t.Errorf("want one error line naming METRICS_ADDR, got %v", logs.All())
	}
}
