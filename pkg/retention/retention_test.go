package retention_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/convida/convida/pkg/retention"
)

// TestNewPlan: a kind set to 0 has no rule (kept forever); the sessions
// and sign-in attempts are always swept; each rule's cutoff is its
// retention before now.
func TestNewPlan(t *testing.T) {
	day := 24 * time.Hour
	for _, tc := range []struct {
		policy retention.Policy
		want   string
	}{
		{retention.Policy{}, "[{sessions 0s} {dashboard_sign_in_attempts 24h0m0s} {portal_sessions 0s} {portal_tokens 0s} {portal_sign_in_attempts 24h0m0s}]"},
		{retention.Policy{InboundDeliveries: 30 * day, WebhookAttempts: 30 * day, Outbox: 7 * day,
			ProcessedCommands: 90 * day, BuyerData: 365 * day, AuditEvents: 365 * day},
			"[{inbound_deliveries 720h0m0s} {reconciliation_runs 720h0m0s} {webhook_attempts 720h0m0s} {outbox 168h0m0s} {processed_commands 2160h0m0s} " +
				"{audit_events 8760h0m0s} {sessions 0s} {dashboard_sign_in_attempts 24h0m0s} {portal_sessions 0s} {portal_tokens 0s} {portal_sign_in_attempts 24h0m0s} {referrals_buyer_data 8760h0m0s}]"},
		{retention.Policy{Outbox: 90 * time.Second, BuyerData: time.Second},
			"[{outbox 1m30s} {sessions 0s} {dashboard_sign_in_attempts 24h0m0s} {portal_sessions 0s} {portal_tokens 0s} {portal_sign_in_attempts 24h0m0s} {referrals_buyer_data 1s}]"},
	} {
		if got := fmt.Sprint(retention.NewPlan(tc.policy)); got != tc.want {
			t.Errorf("NewPlan(%+v) = %s, want %s", tc.policy, got, tc.want)
		}
	}
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	if got := (retention.Rule{Kind: retention.Outbox, Keep: 7 * day}).Cutoff(now); !got.Equal(now.Add(-7 * day)) {
		t.Errorf("Cutoff = %v, want 7 days before %v", got, now)
	}
	if got := (retention.Rule{Kind: retention.Sessions}).Cutoff(now); !got.Equal(now) {
		t.Errorf("sessions' Cutoff = %v, want now: a session is due once expired", got)
	}
}
