// Package intake takes a sale into the ledger, the one way for a webhook
// (pkg/ingest) and for a sale a pull found that no webhook had brought
// (pkg/reconcile): the fast dedupe, the member the sale names (Attribute:
// one ladder of coupon id, coupon code and referral-link code), the ledger
// command and its id (Command), the delivery's record, the publish of
// both, and the fast dedupe's memory of it. Which pulled sales the ledger
// already applied, and so are passed over, is AlreadyApplied (applied.go).
//
// It is pure but for its ports, declared here once: Coupons and CouponIDs
// (postgres), Publisher (topic.CommandBus), Dedupe (redisx).
package intake

import (
	"context"
	"time"

	"github.com/google/uuid"
	"go.uber.org/zap"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/inbound"
	"github.com/convida/convida/pkg/ledger"
)

// Publisher publishes the record of a delivery and, when cmd is not nil,
// the delivery's ledger command, in one write, and returns once the broker
// acknowledged both (acks=all).
type Publisher interface {
	PublishDelivery(ctx context.Context, d inbound.Delivery, cmd *ledger.Command) error
}

// Dedupe is the fast path of deduplication (Redis): it may fail or forget,
// and then a repeated sale is published again and the ledger, which
// applies a command id once, drops it.
type Dedupe interface {
	Seen(ctx context.Context, key string) (bool, error)
	Remember(ctx context.Context, key string, ttl time.Duration) error
}

// DedupeTTL is how long the fast path remembers a sale taken in, from a
// webhook or a pull (7 days).
const DedupeTTL = 7 * 24 * time.Hour

// FastKey is the key under which the fast path remembers a merchant's
// order event, by its command id: a sale a pull took in makes its late
// webhook a duplicate at once.
func FastKey(merchantID uuid.UUID, commandID string) string {
	return "ingest:dedupe:" + merchantID.String() + ":" + commandID
}

// Intake takes sales in. Its zero PublishTimeout and nil Log and Dedupe
// are usable.
type Intake struct {
	Coupons Coupons
	// CouponIDs finds a member by her coupon's id at a platform; nil
	// passes a claim by id over (the ingest: no webhook carries one, and
	// its request path reads nothing it has not cached).
	CouponIDs CouponIDs
	Publisher Publisher
	Dedupe    Dedupe // optional
	// PublishTimeout bounds the broker's acknowledgement (the ingest's,
	// so that a platform gets its 503 in time); zero: ctx's own bound.
	PublishTimeout time.Duration
	Log            *zap.Logger
}

// Taken is what became of a sale.
type Taken struct {
	Outcome string    // inbound.DeliveryAccepted, DeliveryDuplicate or DeliveryUnattributed
	Reason  string    // why it was not accepted, as its record says; "" when accepted
	Member  uuid.UUID // the member it was attributed to; uuid.Nil unless accepted
}

// answered is the status of a sale's record, taken in or passed over: the
// webhook's answer (200), and the one a pulled sale's webhook would have
// had.
const answered = 200

// Take takes in the sale ev, mapped from a webhook or a pull, whose
// delivery's record d the caller began (id, merchant, platform, receipt,
// headers, body, source). Take sets the rest of the record and:
//
//  1. for a webhook's sale, asks the fast dedupe: a sale it remembers is
//     a duplicate, "already received" (a pulled sale was checked against
//     the ledger itself, AlreadyApplied, which the fast path stands in for);
//  2. finds the member (Attribute, with read for a pull that can read the
//     order's code): none is unattributed, naming the sale's code;
//  3. publishes the command (Command) with the record, accepted, in one
//     write, within PublishTimeout;
//  4. has the fast dedupe remember it, so that its twin (the webhook of a
//     sale the pull took in, a redelivery) is a duplicate at once.
//
// A duplicate's or an unattributed sale's record is the caller's to keep
// or not (the ingest keeps it; a pull keeps no record of a sale it
// leaves). An error is a dependency's failure (the member's lookup, the
// broker, read): nothing was published, or the publish is in doubt, which
// a retry with the same command id settles.
func (in *Intake) Take(ctx context.Context, d *inbound.Delivery, ev *inbound.OrderEvent, read CodeReader) (Taken, error) {
	d.DedupeKey = ev.DedupeKey
	var fastKey string
	if in.Dedupe != nil {
		fastKey = FastKey(d.MerchantID, ev.DedupeKey)
		if d.Source != inbound.SourceReconciliation {
			if seen, err := in.Dedupe.Seen(ctx, fastKey); err == nil && seen {
				return passOver(d, inbound.DeliveryDuplicate, "already received"), nil
			}
		}
	}
	a, err := in.Attribute(ctx, d.MerchantID, ev, read)
	if apperr.Is(err, apperr.NotFound) {
		return passOver(d, inbound.DeliveryUnattributed, "no member has coupon "+quote(firstCode(ev))), nil
	}
	if err != nil {
		return Taken{}, err
	}
	cmd := Command(ev, d.MerchantID, a, d.ReceivedAt)
	d.Outcome, d.HTTPStatus, d.Error = inbound.DeliveryAccepted, answered, ""
	if err := in.publish(ctx, *d, &cmd); err != nil {
		return Taken{}, err
	}
	// Queued before the caller answers (redisx.Dedupe.Remember does not
	// wait for Redis): a repeat's check, queued after it, finds the key
	// (when Redis is up). A lost Remember only lets a repeat through to
	// the ledger, which applies it once.
	if fastKey != "" {
		if err := in.Dedupe.Remember(ctx, fastKey, DedupeTTL); err != nil && in.Log != nil {
			in.Log.Debug("dedupe fast path unavailable", zap.Error(err))
		}
	}
	return Taken{Outcome: inbound.DeliveryAccepted, Member: a.Member}, nil
}

// publish publishes the record and the command in one write. A publish
// that times out and still lands later is harmless: the retried sale
// publishes the same command id, which the ledger applies once.
func (in *Intake) publish(ctx context.Context, d inbound.Delivery, cmd *ledger.Command) error {
	if in.PublishTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, in.PublishTimeout)
		defer cancel()
	}
	return in.Publisher.PublishDelivery(ctx, d, cmd)
}

// passOver sets the record of a sale that carries no command.
func passOver(d *inbound.Delivery, outcome, reason string) Taken {
	d.Outcome, d.HTTPStatus, d.Error = outcome, answered, reason
	return Taken{Outcome: outcome, Reason: reason}
}

func quote(s string) string {
	if s == "" {
		return "(none)"
	}
	return "\"" + s + "\""
}
