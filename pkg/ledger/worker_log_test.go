package ledger

import (
	"encoding/json"
	"testing"

	"github.com/google/uuid"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/convida/convida/pkg/ids"
	"github.com/convida/convida/pkg/redemption"
)

// Not parallel: AllocsPerRun refuses to run beside other tests.
func TestWorkerLogsOutcomes(t *testing.T) {
	ref, red, mem := uuid.New(), uuid.New(), uuid.New()
	result := func(v any) json.RawMessage { b, _ := json.Marshal(v); return b }
	outcomes := []Outcome{
		{MemberID: mem, Kind: CmdCreditSale, Status: OutcomeApplied, Reason: "credited", Result: result(ReferralResult{ReferralID: ref, Status: "pending"})},
		{MemberID: mem, Kind: CmdRedemptionResult, Status: OutcomeApplied, Result: result(RedemptionResultData{RedemptionID: red, Status: redemption.StatusFailed})},
		{MemberID: mem, Kind: CmdRedeem, Status: OutcomeRejected, ErrorCode: "insufficient_balance"},
		{MemberID: mem, Kind: CmdRelease, Status: OutcomeNoop, Reason: "warranty not expired"},
	}
	core, logs := observer.New(zapcore.InfoLevel)
	(&Worker{log: zap.New(core)}).logOutcomes(outcomes)
	want := []struct{ msg, key, value string }{
		{"sale credited", "referral", ids.Format(ids.Referral, ref)},
		{"redemption failed", "redemption", ids.Format(ids.Redemption, red)},
		{"ledger command refused", "code", "insufficient_balance"},
	}
	got := logs.All()
	if len(got) != len(want) {
		t.Fatalf("%d lines, want %d (the no-op at debug level): %v", len(got), len(want), got)
	}
	for i, w := range want {
		f := got[i].ContextMap()
		if got[i].Message != w.msg || f[w.key] != w.value || f["member"] != ids.Format(ids.Member, mem) {
			t.Errorf("line %d = %q %v, want %q with %s=%s and the member", i, got[i].Message, f, w.msg, w.key, w.value)
		}
	}

	// With info off, the outcomes cost no allocation.
	quiet := &Worker{log: zap.New(zapcore.NewNopCore())}
	if n := testing.AllocsPerRun(100, func() { quiet.logOutcomes(outcomes) }); n != 0 {
		t.Errorf("logOutcomes with info off: %v allocations, want 0", n)
	}
}
