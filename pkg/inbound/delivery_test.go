package inbound

import "testing"

// TestDeliveryOrderID reads the order back from the dedupe key complete
// builds, an order id with colons included; a delivery refused before its
// order was read has none.
func TestDeliveryOrderID(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ provider, key, want string }{
		{"guru", "guru:9081534a-7512:sale", "9081534a-7512"},
		{"yampi", "yampi:7001:refund", "7001"},
		{"guru", "guru:a:b:c:sale", "a:b:c"},
		{"guru", "", ""},
		{"guru", "yampi:7001:sale", ""},
		{"guru", "guru::sale", ""},
	} {
		if got := (Delivery{Provider: c.provider, DedupeKey: c.key}).OrderID(); got != c.want {
			t.Errorf("OrderID of %s %q = %q, want %q", c.provider, c.key, got, c.want)
		}
	}
	ev, err := complete(&OrderEvent{Provider: "guru", OrderID: " ord:1 ", Kind: KindSale}, "id")
	if err != nil {
		t.Fatal(err)
	}
	if got := (Delivery{Provider: "guru", DedupeKey: ev.DedupeKey}).OrderID(); got != ev.OrderID {
		t.Errorf("OrderID of the key %q = %q, want %q", ev.DedupeKey, got, ev.OrderID)
	}
}
