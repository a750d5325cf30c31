package intake_test

import (
	"testing"

	"github.com/convida/convida/pkg/inbound"
	"github.com/convida/convida/pkg/intake"
)

// The rule by which a pulled sale is passed over, on the ledger's trace.
func TestAlreadyApplied(t *testing.T) {
	t.Parallel()
	ev := func(platform, order string, kind inbound.Kind) *inbound.OrderEvent {
		return &inbound.OrderEvent{Provider: platform, OrderID: order, Kind: kind, DedupeKey: inbound.CommandID(platform, order, kind)}
	}
	trace := intake.Trace{
		Commands: map[string]bool{"guru:o1:sale": true, "guru:o2:refund": true},
		Referred: map[intake.Order]bool{{Platform: "guru", ID: "o1"}: true, {Platform: "guru", ID: "o3"}: true},
	}
	for _, tc := range []struct {
		name string
		ev   *inbound.OrderEvent
		want bool
	}{
		{"a sale whose command the ledger processed", ev("guru", "o1", inbound.KindSale), true},
		{"a sale whose command id retention forgot, its referral kept", ev("guru", "o3", inbound.KindSale), true},
		{"a sale the ledger never saw", ev("guru", "o4", inbound.KindSale), false},
		{"the same order at another platform", ev("yampi", "o3", inbound.KindSale), false},
		{"a refund whose command the ledger processed", ev("guru", "o2", inbound.KindRefund), true},
		{"a refund of an order with a referral, the refund not processed", ev("guru", "o3", inbound.KindRefund), false},
		{"a refund of a sale processed, the refund not", ev("guru", "o1", inbound.KindRefund), false},
	} {
		if got := intake.AlreadyApplied(tc.ev, trace); got != tc.want {
			t.Errorf("%s: AlreadyApplied = %v, want %v", tc.name, got, tc.want)
		}
	}
	if intake.AlreadyApplied(ev("guru", "o1", inbound.KindSale), intake.Trace{}) {
		t.Error("an empty trace applied a sale")
	}
}
