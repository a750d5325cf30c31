package postgres_test

import (
	"context"
	"testing"

	"github.com/convida/convida/pkg/ids"
	"github.com/convida/convida/pkg/inbound"
	"github.com/convida/convida/pkg/ledger"
	"github.com/convida/convida/pkg/postgres"
	"github.com/convida/convida/pkg/referral"
)

// TestErasedMembersSalesSaySo: a sale or a refund of an erased member's
// code is recorded as member_erased with the ledger's note, as the list
// of deliveries (the API's and the dashboard's) shows it, not as
// accepted; her sale from before the erasure stays accepted.
func TestErasedMembersSalesSaySo(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, store, credit, now := firstSale(t)
	m := s.members[0]
	delivery := func(key string) *inbound.Delivery {
		return &inbound.Delivery{ID: ids.New(), MerchantID: s.merchant.ID, Provider: "guru", DedupeKey: key,
			Outcome: inbound.DeliveryAccepted, HTTPStatus: 200, Body: []byte(`{}`), ReceivedAt: now}
	}
	credit.Delivery = delivery(credit.ID)
	mustApply(t, store, credit)
	if _, _, err := postgres.NewMemberStore(s.pool).EraseMember(ctx, s.merchant.ID, m.ID); err != nil {
		t.Fatal(err)
	}
	after := ledger.Command{ID: "guru:o2:sale", Type: ledger.CmdCreditSale, MerchantID: s.merchant.ID, MemberID: m.ID,
		IssuedAt: now, Sale: sale("o2", 5000, "carla@example.com", now), Delivery: delivery("guru:o2:sale")}
	refund := ledger.Command{ID: "guru:o3:refund", Type: ledger.CmdRefund, MerchantID: s.merchant.ID, MemberID: m.ID,
		IssuedAt: now, Sale: sale("o3", 5000, "davi@example.com", now), Delivery: delivery("guru:o3:refund")}
	mustApply(t, store, after, refund)

	list, _, err := postgres.NewDeliveryStore(s.pool).PageDeliveries(ctx, s.merchant.ID, "guru", 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, d := range list {
		got[d.DedupeKey] = d.Outcome + " / " + d.Error
	}
	erased := inbound.DeliveryMemberErased + " / " + referral.ErasedNote
	for key, want := range map[string]string{"guru:o1:sale": "accepted / ", "guru:o2:sale": erased, "guru:o3:refund": erased} {
		if got[key] != want {
			t.Errorf("the delivery %s is recorded %q, want %q", key, got[key], want)
		}
	}
}
