package postgres_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/convida/convida/pkg/postgres"
	"github.com/convida/convida/pkg/retention"
	"github.com/convida/convida/pkg/testenv"
	"github.com/convida/convida/pkg/testenv/backlog"
)

// retentionIndexes is the index each retention statement picks its rows
// by: their time first (migration 00016 for most).
var retentionIndexes = map[string]string{
	retention.InboundDeliveries: "inbound_deliveries_received",
	retention.WebhookAttempts:   "webhook_attempts_created",
	retention.Outbox:            "outbox_created",
	retention.ProcessedCommands: "processed_commands_processed",
	retention.AuditEvents:       "audit_events_created_at",
	retention.Sessions:          "sessions_expiry_idx",
	retention.SignInAttempts:    "dashboard_sign_in_attempts_at",
	retention.BuyerData:         "referrals_buyer_data",
}

// TestRetentionStatementsReadAnIndex: every kind of the retention sweep
// has its statement, and each finds its due rows through the index on
// their time, so that a sweep of a table of millions with nothing due
// costs a few index pages. Sequential scans are priced out, so that the
// planner's choice on these small tables is the one it makes on large
// ones; without the index it would scan the table, or another index,
// whole.
func TestRetentionStatementsReadAnIndex(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := testenv.MustPool(t)
	for _, kind := range retention.Kinds() {
		sql, ok := postgres.PurgeSQL[kind]
		if !ok {
			t.Errorf("%s: no statement", kind)
			continue
		}
		var plan []string
		err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, `SET LOCAL enable_seqscan = off`); err != nil {
				return err
			}
			rows, err := tx.Query(ctx, `EXPLAIN `+sql, time.Now(), 5000)
			if err != nil {
				return err
			}
			plan, err = pgx.CollectRows(rows, pgx.RowTo[string])
			return err
		})
		if err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		text := strings.Join(plan, "\n")
		if index := retentionIndexes[kind]; !strings.Contains(text, " "+index+" ") || strings.Contains(text, "Seq Scan") {
			t.Errorf("%s does not find its rows through %s:\n%s", kind, index, text)
		}
	}
	if len(postgres.PurgeSQL) != len(retention.Kinds()) {
		t.Errorf("%d statements for %d kinds", len(postgres.PurgeSQL), len(retention.Kinds()))
	}
	if _, err := postgres.NewRetentionStore(pool).Purge(ctx, "members", time.Now(), 10); err == nil {
		t.Error("Purge of a kind without a statement succeeded")
	}
}

// TestRetentionSkipsRowsHeld: a statement of the sweep does not wait for
// a row another transaction holds (the ledger updating a referral): it
// takes the others at once, and the held one at the next statement after
// the holder is done.
func TestRetentionSkipsRowsHeld(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := testenv.MustPool(t)
	merchantID, memberID := testenv.MustRetentionTenant(t, pool)
	if _, err := backlog.Seed(ctx, pool, merchantID, memberID, 3, time.Now().Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	ledger, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ledger.Rollback(ctx) }()
	if _, err := ledger.Exec(ctx, `UPDATE referrals SET notes = 'held' WHERE id = (SELECT id FROM referrals LIMIT 1)`); err != nil {
		t.Fatal(err)
	}
	store := postgres.NewRetentionStore(pool)
	quick, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	for _, want := range []int{2, 0} {
		if n, err := store.Purge(quick, retention.BuyerData, time.Now(), 10); err != nil || n != want {
			t.Fatalf("Purge beside a held referral = %d, %v; want %d at once", n, err, want)
		}
	}
	if err := ledger.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	var name, email, document, notes string
	if n, err := store.Purge(ctx, retention.BuyerData, time.Now(), 10); err != nil || n != 1 {
		t.Fatalf("Purge after the holder committed = %d, %v; want the held one", n, err)
	}
	if err := pool.QueryRow(ctx, `SELECT referee_name, referee_email, referee_external_id, notes FROM referrals
WHERE notes = 'held'`).Scan(&name, &email, &document, &notes); err != nil || name+email+document != "" {
		t.Errorf("the held referral after the sweep: %q %q %q (%v), want its buyer cleared and its notes kept", name, email, document, err)
	}
}
