// Package retention says how long the service keeps what it records, as
// the plan the scheduler's retention sweep carries out: for each kind of
// record, how old one must be before it is deleted (or, for the buyers'
// data on referrals, cleared). docs/retention.md explains each setting
// and why its default is what it is.
package retention

import "time"

// The kinds of records the sweep handles. Each is also the "table" label
// of the convida_retention_deleted_total metric.
const (
	// InboundDeliveries are the platforms' deliveries (inbound_deliveries),
	// by the time they were received.
	InboundDeliveries = "inbound_deliveries"
	// ReconciliationRuns are the runs of the platforms' pulls
	// (reconciliation_runs), by the time they started, kept as long as
	// the deliveries they found; a run still running is kept.
	ReconciliationRuns = "reconciliation_runs"
	// WebhookAttempts is the outbound webhooks' delivery log
	// (webhook_attempts), by the time of the attempt; the attempts of an
	// event still owed to its endpoint (a job waiting for its next try)
	// are kept while it waits.
	WebhookAttempts = "webhook_attempts"
	// Outbox are the domain events (outbox) once relayed to the broker;
	// an event still pending, or set aside for an operator, is kept.
	Outbox = "outbox"
	// ProcessedCommands are the command ids the ledger has applied
	// (processed_commands), by the time it applied them.
	ProcessedCommands = "processed_commands"
	// AuditEvents is the merchants' audit trail (audit_events).
	AuditEvents = "audit_events"
	// Sessions are the dashboard's sessions (sessions), deleted once
	// expired.
	Sessions = "sessions"
	// SignInAttempts are the dashboard's recorded sign-in attempts
	// (dashboard_sign_in_attempts), kept a day: longer than any throttle
	// window that counts them.
	SignInAttempts = "dashboard_sign_in_attempts"
	// PortalSessions, PortalTokens and PortalSignIns are the member
	// portal's sessions and links, deleted once expired, and its e-mailed
	// sign-in requests, kept a day like the dashboard's.
	PortalSessions = "portal_sessions"
	PortalTokens   = "portal_tokens"
	PortalSignIns  = "portal_sign_in_attempts"
	// BuyerData are the buyers' names, e-mails and documents on referrals:
	// cleared (set to ''), the referral itself kept with its amounts and
	// status.
	BuyerData = "referrals_buyer_data"
)

// SignInAttemptsKept is how long the dashboard's sign-in attempts are
// kept: longer than any window the sign-in throttle counts.
const SignInAttemptsKept = 24 * time.Hour

// Policy is how long each configurable kind is kept; 0 keeps it forever.
// Its fields are those of the RETENTION_* settings (program.Retention).
type Policy struct {
	InboundDeliveries time.Duration
	WebhookAttempts   time.Duration
	Outbox            time.Duration
	ProcessedCommands time.Duration
	BuyerData         time.Duration
	AuditEvents       time.Duration
}

// Rule is one kind of record and how long it is kept after its time (for a
// session, after it expired).
type Rule struct {
	Kind string
	Keep time.Duration
}

// Cutoff is the time before which the rule's records are due at now.
func (r Rule) Cutoff(now time.Time) time.Time { return now.Add(-r.Keep) }

// Plan is the rules a sweep carries out, in order. A kind kept forever
// has no rule.
type Plan []Rule

// NewPlan returns the plan of p: a rule for every kind p does not keep
// forever, and the dashboard's expired sessions and old sign-in attempts,
// which are always deleted. The kinds come in the order of the constants
// above, the buyers' data last.
func NewPlan(p Policy) Plan {
	plan := Plan{}
	for _, r := range []Rule{
		{InboundDeliveries, p.InboundDeliveries}, {ReconciliationRuns, p.InboundDeliveries}, {WebhookAttempts, p.WebhookAttempts}, {Outbox, p.Outbox},
		{ProcessedCommands, p.ProcessedCommands}, {AuditEvents, p.AuditEvents},
	} {
		if r.Keep > 0 {
			plan = append(plan, r)
		}
	}
	plan = append(plan, Rule{Sessions, 0}, Rule{SignInAttempts, SignInAttemptsKept},
		Rule{PortalSessions, 0}, Rule{PortalTokens, 0}, Rule{PortalSignIns, SignInAttemptsKept})
	if p.BuyerData > 0 {
		plan = append(plan, Rule{BuyerData, p.BuyerData})
	}
	return plan
}

// Kinds are every kind a plan may hold, in the plan's order.
func Kinds() []string {
	return []string{InboundDeliveries, ReconciliationRuns, WebhookAttempts, Outbox, ProcessedCommands, AuditEvents, Sessions,
		SignInAttempts, PortalSessions, PortalTokens, PortalSignIns, BuyerData}
}
