package postgres_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/convida/convida/pkg/audit"
	"github.com/convida/convida/pkg/merchant"
	"github.com/convida/convida/pkg/postgres"
	"github.com/convida/convida/pkg/testenv"
)

// TestAuditEventsWrittenWithTheirChange: an event is written in its
// change's transaction (a rolled-back change leaves none), and the list
// reads a merchant's own, newest first, by action, paginated.
func TestAuditEventsWrittenWithTheirChange(t *testing.T) {
	t.Parallel()
	pool, box := testenv.MustPool(t), testenv.MustBox(t)
	ctx := context.Background()
	m := testenv.MustMerchant(t, pool, box, merchant.Merchant{Name: "A"}).ID
	other := testenv.MustMerchant(t, pool, box, merchant.Merchant{Name: "B"}).ID
	actor := audit.WithActor(ctx, audit.Actor{Type: audit.ActorAPIKey, ID: "key-1", Label: "1a2b3c4d"}, "203.0.113.7")
	start := time.Now().Add(-time.Minute)
	write := func(merchantID uuid.UUID, action string, at time.Time, commit bool) {
		t.Helper()
		err := postgres.InTx(ctx, pool, func(tx pgx.Tx) error {
			if err := postgres.InsertAudit(ctx, tx, audit.New(actor, merchantID, action, audit.Target{Type: "api_key", ID: "k"},
				map[string]any{"fields": []string{"url"}}, at)); err != nil {
				return err
			}
			if !commit {
				return errors.New("roll back")
			}
			return nil
		})
		if commit && err != nil {
			t.Fatal(err)
		}
	}
	write(m, audit.APIKeyCreated, start, true)
	write(m, audit.APIKeyRevoked, start.Add(time.Second), true)
	write(m, audit.APIKeyCreated, start.Add(2*time.Second), true)
	write(m, audit.APIKeyRevoked, start.Add(3*time.Second), false) // rolled back with its change
	write(other, audit.APIKeyCreated, start, true)

	store := postgres.NewAuditStore(pool)
	list, total, err := store.ListAuditEvents(ctx, m, audit.Filter{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if total != 3 || len(list) != 3 || list[0].Action != audit.APIKeyCreated || list[1].Action != audit.APIKeyRevoked ||
		!list[0].CreatedAt.After(list[1].CreatedAt) {
		t.Fatalf("list = %d of %d, %+v: want the merchant's 3, newest first", len(list), total, list)
	}
	e := list[0]
	if e.Actor.Type != audit.ActorAPIKey || e.Actor.Label != "1a2b3c4d" || e.IP != "203.0.113.7" || e.Target.Type != "api_key" ||
		len(e.Details["fields"].([]any)) != 1 {
		t.Errorf("event read back = %+v", e)
	}
	list, total, err = store.ListAuditEvents(ctx, m, audit.Filter{Action: audit.APIKeyCreated, Offset: 1, Limit: 1})
	if err != nil || total != 2 || len(list) != 1 || !list[0].CreatedAt.Equal(start.UTC().Truncate(time.Microsecond)) {
		t.Errorf("second page of api_key.created = %+v of %d (%v), want the older one of 2", list, total, err)
	}
	if _, total, _ := store.ListAuditEvents(ctx, m, audit.Filter{Offset: 10, Limit: 10}); total != 3 {
		t.Errorf("a page past the end tells total %d, want 3", total)
	}
}
