package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/convida/convida/pkg/retention"
)

// RetentionStore carries out the retention sweep's statements
// (scheduler.RetentionStore). Each statement deletes, or for the buyers'
// data clears, at most a batch of the oldest due rows in its own
// transaction: it locks them FOR UPDATE SKIP LOCKED, so it never waits for
// a row the ledger or a dispatcher holds (that row waits for the next
// sweep), and it holds its own locks for the milliseconds a batch takes.
// The rows are picked through an index on their time (migration 00016), so
// a sweep with nothing due reads a few index pages, not the table.
type RetentionStore struct{ pool *pgxpool.Pool }

// NewRetentionStore returns a RetentionStore.
func NewRetentionStore(pool *pgxpool.Pool) *RetentionStore { return &RetentionStore{pool: pool} }

// purgeBatch deletes the rows of table that pick selects: a subquery that
// returns the ctid of each, locked. The ctids are read and used within one
// statement, where a locked row cannot move; a row another transaction
// changed in between is left for the next sweep.
func purgeBatch(table, pick string) string {
	return `DELETE FROM ` + table + ` WHERE ctid = ANY(ARRAY(` + pick + `))`
}

// purgeSQL is the statement of each kind: $1 is the cutoff, $2 the batch.
var purgeSQL = map[string]string{
	retention.InboundDeliveries: purgeBatch("inbound_deliveries", `SELECT ctid FROM inbound_deliveries
  WHERE received_at < $1 ORDER BY received_at LIMIT $2 FOR UPDATE SKIP LOCKED`),
	// The attempts of an event still owed to its endpoint are its
	// history: the job's next attempt is numbered after them and the log
	// shows them while it retries.
	retention.WebhookAttempts: purgeBatch("webhook_attempts", `SELECT a.ctid FROM webhook_attempts a
  WHERE a.created_at < $1 AND NOT EXISTS (SELECT 1 FROM webhook_jobs j
    WHERE j.merchant_id = a.merchant_id AND j.webhook_id = a.webhook_id AND j.event_id = a.event_id)
  ORDER BY a.created_at LIMIT $2 FOR UPDATE OF a SKIP LOCKED`),
	// Relayed events only: never one still in outbox_pending (written in
	// the same transaction as its event, so never seen without it) nor one
	// set aside for an operator to look at.
	retention.Outbox: purgeBatch("outbox", `SELECT o.ctid FROM outbox o
  WHERE o.created_at < $1 AND o.set_aside_at IS NULL AND NOT EXISTS (SELECT 1 FROM outbox_pending p
    WHERE p.merchant_id = o.merchant_id AND p.event_id = o.event_id)
  ORDER BY o.created_at LIMIT $2 FOR UPDATE OF o SKIP LOCKED`),
	retention.ProcessedCommands: purgeBatch("processed_commands", `SELECT ctid FROM processed_commands
  WHERE processed_at < $1 ORDER BY processed_at LIMIT $2 FOR UPDATE SKIP LOCKED`),
	retention.AuditEvents: purgeBatch("audit_events", `SELECT ctid FROM audit_events
  WHERE created_at < $1 ORDER BY created_at LIMIT $2 FOR UPDATE SKIP LOCKED`),
	retention.Sessions: purgeBatch("sessions", `SELECT ctid FROM sessions
  WHERE expiry < $1 ORDER BY expiry LIMIT $2 FOR UPDATE SKIP LOCKED`),
	retention.SignInAttempts: purgeBatch("dashboard_sign_in_attempts", `SELECT ctid FROM dashboard_sign_in_attempts
  WHERE at < $1 ORDER BY at LIMIT $2 FOR UPDATE SKIP LOCKED`),
	retention.PortalSessions: purgeBatch("portal_sessions", `SELECT ctid FROM portal_sessions
  WHERE expiry < $1 ORDER BY expiry LIMIT $2 FOR UPDATE SKIP LOCKED`),
	retention.PortalTokens: purgeBatch("portal_tokens", `SELECT ctid FROM portal_tokens
  WHERE expires_at < $1 ORDER BY expires_at LIMIT $2 FOR UPDATE SKIP LOCKED`),
	retention.PortalSignIns: purgeBatch("portal_sign_in_attempts", `SELECT ctid FROM portal_sign_in_attempts
  WHERE at < $1 ORDER BY at LIMIT $2 FOR UPDATE SKIP LOCKED`),
	// The buyer's name, e-mail and document (referee_external_id holds the
	// CPF or CNPJ the platform sent) are cleared; the referral keeps its
	// order, amounts, status, dates and ledger rows, and updated_at, since
	// nothing about the sale changed. The predicate is the partial index's
	// (referrals_buyer_data), which holds only referrals not yet cleared.
	// A run still running is kept: it holds its integration's turn.
	retention.ReconciliationRuns: `DELETE FROM reconciliation_runs WHERE ctid = ANY(ARRAY(SELECT ctid FROM reconciliation_runs
  WHERE started_at < $1 AND status <> 'running' ORDER BY started_at LIMIT $2 FOR UPDATE SKIP LOCKED))`,
	retention.BuyerData: `UPDATE referrals SET referee_name = '', referee_email = '', referee_external_id = ''
WHERE ctid = ANY(ARRAY(SELECT ctid FROM referrals
  WHERE created_at < $1 AND (referee_name <> '' OR referee_email <> '' OR referee_external_id <> '')
  ORDER BY created_at LIMIT $2 FOR UPDATE SKIP LOCKED))`,
}

// Purge deletes (for retention.BuyerData, clears) at most limit rows of
// kind dated before cutoff, the oldest first, and returns how many. An
// unknown kind is an error.
func (s *RetentionStore) Purge(ctx context.Context, kind string, cutoff time.Time, limit int) (int, error) {
	sql, ok := purgeSQL[kind]
	if !ok {
		return 0, fmt.Errorf("retention: no statement for %q", kind)
	}
	tag, err := s.pool.Exec(ctx, sql, cutoff, limit)
	if err != nil {
		return 0, err
	}
	return int(tag.RowsAffected()), nil
}
