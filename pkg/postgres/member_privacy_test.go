package postgres_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

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

// TestErasureEmptiesTheDeliveriesOfHerBuyers: the deliveries of sales
// through an erased member's code that made no referral (ignored,
// refused before or after they authenticated) lose their bodies, and
// with them her buyers' data, in the erasure; another member's stay as
// they were.
func TestErasureEmptiesTheDeliveriesOfHerBuyers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := mustTenPercent(t, 2)
	her, other := s.members[0], s.members[1]
	now := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	body := func(code, buyer string) []byte {
		return []byte(`{"id":"o-` + buyer + `","status":"waiting_payment","payment":{"coupon":{"coupon_code":"` +
			strings.ToLower(code) + `"}},"contact":{"name":"` + buyer + `","email":"` + buyer + `@example.com"}}`)
	}
	record := func(outcome string, status int, b []byte) inbound.Delivery {
		return inbound.Delivery{ID: ids.New(), MerchantID: s.merchant.ID, Provider: "guru", Outcome: outcome, HTTPStatus: status,
			Error: "refused", Body: b, ReceivedAt: now}
	}
	hers := []inbound.Delivery{
		record(inbound.DeliveryIgnored, 200, body(her.CouponCode, "lara")),
		record(inbound.DeliveryUnprocessable, 422, body(her.CouponCode, "marta")),
		record(inbound.DeliveryUnauthorized, 401, body(her.CouponCode, "nina")),
	}
	others := record(inbound.DeliveryIgnored, 200, body(other.CouponCode, "olga"))
	deliveries := postgres.NewDeliveryStore(s.pool)
	if err := deliveries.RecordDeliveries(ctx, append(hers, others)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := postgres.NewMemberStore(s.pool).EraseMember(ctx, s.merchant.ID, her.ID); err != nil {
		t.Fatal(err)
	}
	list, _, err := deliveries.PageDeliveries(ctx, s.merchant.ID, "guru", 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	kept := map[uuid.UUID]inbound.Delivery{}
	for _, d := range list {
		kept[d.ID] = d
	}
	for _, d := range hers {
		got := kept[d.ID]
		if len(got.Body) != 0 || got.Outcome != d.Outcome || got.HTTPStatus != d.HTTPStatus {
			t.Errorf("her buyer's %s delivery after the erasure: body %q, %s %d; want it emptied, its outcome kept",
				d.Outcome, got.Body, got.Outcome, got.HTTPStatus)
		}
	}
	if got := kept[others.ID]; string(got.Body) != string(others.Body) {
		t.Errorf("another member's buyer's delivery: body %q, want it as it was", got.Body)
	}
}
