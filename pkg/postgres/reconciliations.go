package postgres

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/audit"
	"github.com/convida/convida/pkg/ids"
	"github.com/convida/convida/pkg/intake"
	"github.com/convida/convida/pkg/jsontime"
	"github.com/convida/convida/pkg/provider"
	"github.com/convida/convida/pkg/reconcile"
)

// ReconcileStore keeps the reconciliation runs (table
// reconciliation_runs, migration 00021) and reads what the ledger kept of
// the sales it applied (it implements reconcile.Store).
type ReconcileStore struct{ pool *pgxpool.Pool }

var (
	_ reconcile.Runs  = (*ReconcileStore)(nil)
	_ reconcile.Store = (*ReconcileStore)(nil)
)

// NewReconcileStore returns a ReconcileStore.
func NewReconcileStore(pool *pgxpool.Pool) *ReconcileStore { return &ReconcileStore{pool: pool} }

// StartRun records r running, claimed by its caller (a scheduled run).
// The partial unique index on the running rows refuses a second running
// run of one integration: apperr.Conflict.
func (s *ReconcileStore) StartRun(ctx context.Context, r reconcile.Run) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO reconciliation_runs (merchant_id, id, provider, status, window_from, window_to,
    started_at, claimed_at, heartbeat_at) VALUES ($1, $2, $3, 'running', $4, $5, $6, $6, $6)`,
		r.MerchantID, r.ID, r.Provider, r.From, r.To, r.StartedAt)
	return startError(r, err)
}

// RequestRun records r running and unclaimed, for the leading scheduler,
// with its audit event in the same transaction — unless a run of the
// integration started after since (RECONCILE_COOLDOWN): then nothing is
// written and the latest start is returned. Two requests at once both
// find no recent run; the running rows' unique index lets one in and
// makes the other apperr.Conflict.
func (s *ReconcileStore) RequestRun(ctx context.Context, r reconcile.Run, since time.Time) (time.Time, error) {
	var blockedBy time.Time
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `INSERT INTO reconciliation_runs (merchant_id, id, provider, status, window_from, window_to,
    started_at, claimed_at, heartbeat_at)
SELECT $1, $2, $3, 'running', $4, $5, $6, NULL, $6
WHERE NOT EXISTS (SELECT 1 FROM reconciliation_runs WHERE merchant_id = $1 AND provider = $3 AND started_at > $7)`,
			r.MerchantID, r.ID, r.Provider, r.From, r.To, r.StartedAt, since)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return tx.QueryRow(ctx, `SELECT max(started_at) FROM reconciliation_runs WHERE merchant_id = $1 AND provider = $2`,
				r.MerchantID, r.Provider).Scan(&blockedBy)
		}
		return writeAudit(ctx, tx, r.MerchantID, audit.ReconciliationRequested,
			audit.Target{Type: audit.TargetIntegration, ID: r.Provider},
			map[string]any{"run": ids.Format(ids.Reconciliation, r.ID), "from": jsontime.Format(r.From), "to": jsontime.Format(r.To)})
	})
	return blockedBy, startError(r, err)
}

// startError maps the refusal of a second running run of an integration
// to apperr.Conflict.
func startError(r reconcile.Run, err error) error {
	if isUniqueViolation(err, "reconciliation_runs_running") {
		return apperr.Errorf(apperr.Conflict, "a %s reconciliation is already running", r.Provider)
	}
	if err != nil {
		return fmt.Errorf("start reconciliation: %w", err)
	}
	return nil
}

// Heartbeat writes r's counts and that its process is alive at at. It is
// reconcile.ErrNotRunning when the row is no longer running.
func (s *ReconcileStore) Heartbeat(ctx context.Context, r reconcile.Run, at time.Time) error {
	tag, err := s.pool.Exec(ctx, `UPDATE reconciliation_runs SET seen = $3, missing = $4, credited = $5, reversed = $6,
    heartbeat_at = $7 WHERE merchant_id = $1 AND id = $2 AND status = 'running'`,
		r.MerchantID, r.ID, r.Seen, r.Missing, r.Credited, r.Reversed, at)
	if err != nil {
		return fmt.Errorf("reconciliation heartbeat: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return reconcile.ErrNotRunning
	}
	return nil
}

// FinishRun writes r's end. A run the stale sweep already failed keeps
// that end.
func (s *ReconcileStore) FinishRun(ctx context.Context, r reconcile.Run) error {
	_, err := s.pool.Exec(ctx, `UPDATE reconciliation_runs SET status = $3, seen = $4, missing = $5, credited = $6, reversed = $7,
    error = $8, finished_at = $9, heartbeat_at = $9 WHERE merchant_id = $1 AND id = $2 AND status = 'running'`,
		r.MerchantID, r.ID, r.Status, r.Seen, r.Missing, r.Credited, r.Reversed, r.Error, r.FinishedAt)
	if err != nil {
		return fmt.Errorf("finish reconciliation: %w", err)
	}
	return nil
}

// Trace returns, of the command ids given, those the ledger processed
// for the merchant (processed_commands' primary key), and of the orders
// given, those that have a referral (one per order, decision 14): what
// intake.AlreadyApplied decides by. One round trip.
func (s *ReconcileStore) Trace(ctx context.Context, merchantID uuid.UUID, commandIDs []string, orders []intake.Order) (intake.Trace, error) {
	t := intake.Trace{Commands: map[string]bool{}, Referred: map[intake.Order]bool{}}
	platforms, ids := make([]string, len(orders)), make([]string, len(orders))
	for i, o := range orders {
		platforms[i], ids[i] = o.Platform, o.ID
	}
	b := &pgx.Batch{}
	b.Queue(`SELECT command_id FROM processed_commands WHERE merchant_id = $1 AND command_id = ANY($2)`, merchantID, commandIDs).
		Query(func(rows pgx.Rows) error {
			var id string
			_, err := pgx.ForEachRow(rows, []any{&id}, func() error { t.Commands[id] = true; return nil })
			return err
		})
	b.Queue(`SELECT r.source, r.order_id FROM referrals r
  JOIN unnest($2::text[], $3::text[]) AS o(source, order_id) ON r.source = o.source AND r.order_id = o.order_id
  WHERE r.merchant_id = $1`, merchantID, platforms, ids).
		Query(func(rows pgx.Rows) error {
			var o intake.Order
			_, err := pgx.ForEachRow(rows, []any{&o.Platform, &o.ID}, func() error { t.Referred[o] = true; return nil })
			return err
		})
	if err := s.pool.SendBatch(ctx, b).Close(); err != nil {
		return intake.Trace{}, fmt.Errorf("ledger trace: %w", err)
	}
	return t, nil
}

// runColumns are the columns scanRun reads, in its order.
const runColumns = `merchant_id, id, provider, status, window_from, window_to, started_at, finished_at, seen, missing, credited, reversed, error`

func scanRun(row pgx.CollectableRow) (reconcile.Run, error) {
	var r reconcile.Run
	var finished *time.Time
	err := row.Scan(&r.MerchantID, &r.ID, &r.Provider, &r.Status, &r.From, &r.To, &r.StartedAt, &finished,
		&r.Seen, &r.Missing, &r.Credited, &r.Reversed, &r.Error)
	if finished != nil {
		r.FinishedAt = *finished
	}
	return r, err
}

// PageRuns returns a page of the merchant's runs of provider, newest
// first, and how many there are.
func (s *ReconcileStore) PageRuns(ctx context.Context, merchantID uuid.UUID, provider string, offset, limit int) ([]reconcile.Run, int, error) {
	var list []reconcile.Run
	total := 0
	b := &pgx.Batch{}
	b.Queue(`SELECT `+runColumns+` FROM reconciliation_runs WHERE merchant_id = $1 AND provider = $2
ORDER BY started_at DESC, id DESC OFFSET $3 LIMIT $4`, merchantID, provider, offset, limit).Query(func(rows pgx.Rows) (err error) {
		list, err = pgx.CollectRows(rows, scanRun)
		return err
	})
	b.Queue(`SELECT count(*) FROM reconciliation_runs WHERE merchant_id = $1 AND provider = $2`, merchantID, provider).
		QueryRow(func(row pgx.Row) error { return row.Scan(&total) })
	if err := s.pool.SendBatch(ctx, b).Close(); err != nil {
		return nil, 0, fmt.Errorf("page reconciliations: %w", err)
	}
	return list, total, nil
}

// WaitingRuns returns up to limit runs the API asked for that no process
// runs yet, oldest first, without claiming them: the scheduler picks
// among them (ClaimRun).
func (s *ReconcileStore) WaitingRuns(ctx context.Context, limit int) ([]reconcile.Run, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+runColumns+` FROM reconciliation_runs WHERE status = 'running' AND claimed_at IS NULL
ORDER BY started_at, id LIMIT $1`, limit)
	if err != nil {
		return nil, fmt.Errorf("waiting reconciliations: %w", err)
	}
	list, err := pgx.CollectRows(rows, scanRun)
	if err != nil {
		return nil, fmt.Errorf("waiting reconciliations: %w", err)
	}
	return list, nil
}

// ClaimRun claims the waiting run r at at, its heartbeat starting then.
// It reports false when the run is no longer waiting (another process
// claimed it).
func (s *ReconcileStore) ClaimRun(ctx context.Context, r reconcile.Run, at time.Time) (bool, error) {
	tag, err := s.pool.Exec(ctx, `UPDATE reconciliation_runs SET claimed_at = $3, heartbeat_at = $3
WHERE merchant_id = $1 AND id = $2 AND status = 'running' AND claimed_at IS NULL`, r.MerchantID, r.ID, at)
	if err != nil {
		return false, fmt.Errorf("claim reconciliation: %w", err)
	}
	return tag.RowsAffected() == 1, nil
}

// FailStale ends failed, at at, every claimed running run whose
// heartbeat is older than before (its process died, or its pull stopped
// moving), and returns their ids: the leader stops those it runs.
func (s *ReconcileStore) FailStale(ctx context.Context, before, at time.Time) ([]uuid.UUID, error) {
	rows, err := s.pool.Query(ctx, `UPDATE reconciliation_runs SET status = 'failed', error = $2, finished_at = $3
WHERE status = 'running' AND claimed_at IS NOT NULL AND heartbeat_at < $1 RETURNING id`, before, reconcile.StaleError, at)
	if err != nil {
		return nil, fmt.Errorf("fail stale reconciliations: %w", err)
	}
	list, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
	if err != nil {
		return nil, fmt.Errorf("fail stale reconciliations: %w", err)
	}
	return list, nil
}

// DueIntegrations returns the integrations of the providers given whose
// last run started before startedBefore, or that never ran, and that
// hold every setting their platform's pull needs (pullReadySQL): the
// scheduler's candidates (it reads each one's credentials to check them
// whole, reconcile.Configured).
func (s *ReconcileStore) DueIntegrations(ctx context.Context, providers []string, startedBefore time.Time) ([]reconcile.Due, error) {
	rows, err := s.pool.Query(ctx, `SELECT i.merchant_id, i.provider FROM integration_settings i
WHERE i.provider = ANY($1)
  AND `+pullReadySQL+`
  AND NOT EXISTS (SELECT 1 FROM reconciliation_runs r WHERE r.merchant_id = i.merchant_id AND r.provider = i.provider
                  AND r.started_at >= $2)
ORDER BY i.merchant_id, i.provider`, providers, startedBefore)
	if err != nil {
		return nil, fmt.Errorf("due reconciliations: %w", err)
	}
	list, err := pgx.CollectRows(rows, pgx.RowToStructByPos[reconcile.Due])
	if err != nil {
		return nil, fmt.Errorf("due reconciliations: %w", err)
	}
	return list, nil
}

// settingColumns are integration_settings' column of each role: the
// sealed ones hold ciphertext or NULL, the others text or ”.
var settingColumns = map[provider.Role]string{
	provider.AccountToken: "account_token_enc", provider.WebhookSecret: "webhook_secret_enc",
	provider.UserToken: "user_token_enc", provider.UserSecretKey: "user_secret_key_enc",
	provider.ClientSecret: "client_secret_enc", provider.BasicToken: "basic_token_enc",
	provider.StoreAlias: "store_alias", provider.APIURL: "api_url", provider.ClientID: "client_id",
	provider.AccountID: "account_id", provider.AuthURL: "auth_url", provider.CheckoutURL: "checkout_url",
}

// pullReadySQL is the condition that row i holds every setting its
// platform's pull needs, one branch per platform with a pull, written from
// the descriptors: a platform added there is pulled without a line here.
var pullReadySQL = func() string {
	var b strings.Builder
	b.WriteString("CASE i.provider")
	for _, d := range provider.With(provider.Pull) {
		fmt.Fprintf(&b, " WHEN '%s' THEN TRUE", d.Name) // names are lower-case words (provider's tests)
		for _, name := range d.Needs[provider.Pull] {
			st, _ := d.Setting(name)
			if st.Role.Sealed() {
				fmt.Fprintf(&b, " AND i.%s IS NOT NULL", settingColumns[st.Role])
			} else {
				fmt.Fprintf(&b, " AND i.%s <> ''", settingColumns[st.Role])
			}
		}
	}
	b.WriteString(" ELSE FALSE END")
	return b.String()
}()
