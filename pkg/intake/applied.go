package intake

import (
	"context"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/inbound"
)

// Order is one order of a platform: its sale makes one referral at most
// (decision 14).
type Order struct{ Platform, ID string }

// Trace is what the ledger keeps of the sales it applied, of one
// merchant: the command ids it processed (processed_commands, until
// RETENTION_PROCESSED_COMMANDS forgets them) and the orders it made a
// referral of (as long as the referral is kept).
type Trace struct {
	Commands map[string]bool
	Referred map[Order]bool
}

// Traces reads the ledger's trace (postgres.ReconcileStore): of the
// command ids given, those the ledger processed; of the orders given,
// those that have a referral; in one read.
type Traces interface {
	Trace(ctx context.Context, merchantID uuid.UUID, commandIDs []string, orders []Order) (Trace, error)
}

// AlreadyApplied is the rule by which a sale a pull found is passed over:
// the ledger applied it already, from its webhook or an earlier pull. It
// did when it processed the event's command id (Command: the webhook's
// and the pull's are one), or, for a sale (not a refund), when the
// order has a referral, which outlives its command id in
// processed_commands. A refund is known by its command id alone: its
// order has its referral whether or not the refund was applied.
func AlreadyApplied(ev *inbound.OrderEvent, t Trace) bool {
	return t.Commands[ev.DedupeKey] || ev.Kind == inbound.KindSale && t.Referred[Order{ev.Provider, ev.OrderID}]
}

// TraceOf reads the trace AlreadyApplied needs of evs, of one merchant, in
// one read: their command ids, and the orders of their sales.
func TraceOf(ctx context.Context, traces Traces, merchantID uuid.UUID, evs []*inbound.OrderEvent) (Trace, error) {
	ids := make([]string, len(evs))
	var orders []Order
	for i, ev := range evs {
		ids[i] = ev.DedupeKey
		if ev.Kind == inbound.KindSale {
			orders = append(orders, Order{ev.Provider, ev.OrderID})
		}
	}
	return traces.Trace(ctx, merchantID, ids, orders)
}
