package postgres_test

import (
	"context"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/inbound"
	"github.com/convida/convida/pkg/intake"
	"github.com/convida/convida/pkg/ledger"
	"github.com/convida/convida/pkg/merchant"
	"github.com/convida/convida/pkg/postgres"
	"github.com/convida/convida/pkg/provider"
	"github.com/convida/convida/pkg/reconcile"
	"github.com/convida/convida/pkg/testenv"
)

// The ledger's trace of the sales it applied, as a pull reads it: the
// command ids it processed, and the orders with a referral, which outlive
// their command ids (retention forgets those first).
func TestReconcileStoreTrace(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, store, credit, now := firstSale(t)
	refund := ledger.Command{ID: "guru:o2:refund", Type: ledger.CmdRefund, MerchantID: s.merchant.ID, MemberID: s.members[0].ID,
		IssuedAt: now, Sale: sale("o2", 5000, "c@example.com", now)}
	mustApply(t, store, credit, refund)
	// RETENTION_PROCESSED_COMMANDS forgot the sale's command id.
	if _, err := s.pool.Exec(ctx, `DELETE FROM processed_commands WHERE merchant_id = $1 AND command_id = $2`,
		s.merchant.ID, credit.ID); err != nil {
		t.Fatal(err)
	}
	rs := postgres.NewReconcileStore(s.pool)
	ids := []string{credit.ID, refund.ID, "guru:o3:sale"}
	orders := []intake.Order{{Platform: "guru", ID: "o1"}, {Platform: "guru", ID: "o3"}, {Platform: "yampi", ID: "o1"}}
	got, err := rs.Trace(ctx, s.merchant.ID, ids, orders)
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]bool{refund.ID: true}; !maps.Equal(got.Commands, want) {
		t.Errorf("processed commands = %v, want %v", got.Commands, want)
	}
	if want := map[intake.Order]bool{{Platform: "guru", ID: "o1"}: true}; !maps.Equal(got.Referred, want) {
		t.Errorf("referred orders = %v, want %v", got.Referred, want)
	}
	sold := &inbound.OrderEvent{Provider: "guru", OrderID: "o1", Kind: inbound.KindSale, DedupeKey: credit.ID}
	if !intake.AlreadyApplied(sold, got) {
		t.Error("the sale of o1, its command id forgotten, is not applied by its referral")
	}

	other, err := rs.Trace(ctx, uuid.New(), ids, orders)
	if err != nil || len(other.Commands)+len(other.Referred) != 0 {
		t.Errorf("another merchant's trace = %+v, %v; want empty", other, err)
	}
	if none, err := rs.Trace(ctx, s.merchant.ID, nil, nil); err != nil || len(none.Commands)+len(none.Referred) != 0 {
		t.Errorf("the trace of nothing = %+v, %v; want empty", none, err)
	}
}

// The scheduler's candidates: for every platform with a pull, an
// integration holding all its pull's settings is due, and one lacking any
// single one of them is not; a platform without a pull never is.
func TestDueIntegrationsHoldTheirPullsSettings(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, box := testenv.MustPool(t), testenv.MustBox(t)
	merchants := postgres.NewMerchantStore(pool, box)
	rs := postgres.NewReconcileStore(pool)
	save := func(d provider.Descriptor, except string) uuid.UUID {
		m := testenv.MustMerchant(t, pool, box, merchant.Merchant{}).ID
		in := merchant.Integration{Provider: d.Name}
		for _, s := range d.Settings {
			if s.Name != except {
				in.Set(s, "https://example.com/"+s.Name)
			}
		}
		if _, err := merchants.PutIntegration(ctx, m, in); err != nil {
			t.Fatal(err)
		}
		return m
	}
	want := map[reconcile.Due]bool{}
	var ms []uuid.UUID
	for _, d := range provider.All() {
		whole := save(d, "")
		ms = append(ms, whole)
		if d.Can(provider.Pull) {
			want[reconcile.Due{MerchantID: whole, Provider: d.Name}] = true
		}
		for _, need := range d.Needs[provider.Pull] {
			ms = append(ms, save(d, need))
		}
	}
	due, err := rs.DueIntegrations(ctx, provider.Names(), testenv.Now(t).Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	got := map[reconcile.Due]bool{}
	for _, d := range due {
		if slices.Contains(ms, d.MerchantID) {
			got[d] = true
		}
	}
	if !maps.Equal(got, want) {
		t.Errorf("due = %v, want %v", got, want)
	}
}
