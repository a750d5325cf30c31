// Package ingest receives the platforms' webhooks at
// /api/webhooks/{provider}/{merchant_id} (webhooks.md, "Inbound"):
// authenticate, parse, deduplicate, resolve the coupon to a member, publish
// a ledger command, and answer only after the broker acknowledged it.
package ingest

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/inbound"
	"github.com/convida/convida/pkg/ledger"
	"github.com/convida/convida/pkg/merchant"
)

// Merchants finds merchants and their provider settings.
type Merchants interface {
	FindMerchantByID(ctx context.Context, id uuid.UUID) (*merchant.Merchant, error)
	FindIntegration(ctx context.Context, merchantID uuid.UUID, provider string) (*merchant.Integration, error)
}

// Coupons resolves referral codes to members.
type Coupons interface {
	FindMemberByCoupon(ctx context.Context, merchantID uuid.UUID, code string) (uuid.UUID, error)
}

// Deliveries keeps delivery records and the durable dedupe of order events.
type Deliveries interface {
	// Claim records that the event with dedupeKey is being published as
	// commandID; published reports whether an earlier delivery already
	// got it acknowledged by the broker.
	Claim(ctx context.Context, merchantID uuid.UUID, dedupeKey, commandID string) (published bool, err error)
	// Record stores the delivery record and, when markPublished, marks its
	// dedupe key published, in one round trip.
	Record(ctx context.Context, d inbound.Delivery, markPublished bool) error
}

// Dedupe is the fast path of deduplication (Redis). It may fail; the
// durable dedupe in Deliveries decides then.
type Dedupe interface {
	Seen(ctx context.Context, key string) (bool, error)
	Remember(ctx context.Context, key string, ttl time.Duration) error
}

// Publisher publishes ledger commands and returns once the broker
// acknowledged them.
type Publisher interface {
	PublishCommands(ctx context.Context, cmds []ledger.Command) error
}

// Limiter is a rate limiter (GCRA in Redis): retryAfter > 0 means refused.
type Limiter interface {
	Allow(ctx context.Context, key string, perSecond, burst int) (remaining int, retryAfter, resetAfter time.Duration, err error)
}

// DedupeTTL is how long the fast path remembers an event (7 days).
const DedupeTTL = 7 * 24 * time.Hour

// MaxBody is the largest accepted request body.
const MaxBody = 1 << 20

// PublishTimeout bounds the broker's acknowledgement of a delivery's
// command, so that the answer (503 when it does not come) reaches the
// platform within Yampi's 5 s.
const PublishTimeout = 3 * time.Second

// command maps a canonical order event to its ledger command. The command
// id is the dedupe key, so a duplicate that slips through every dedupe
// layer is still applied once.
func command(ev *inbound.OrderEvent, merchantID, memberID uuid.UUID, received time.Time) ledger.Command {
	typ := ledger.CmdCreditSale
	if ev.Kind == inbound.KindRefund {
		typ = ledger.CmdRefund
	}
	paid := ev.OccurredAt
	if paid.IsZero() {
		paid = received
	}
	return ledger.Command{
		ID: ev.DedupeKey, Type: typ, MerchantID: merchantID, MemberID: memberID, IssuedAt: received,
		Sale: &ledger.Sale{
			Source: ev.Provider, OrderID: ev.OrderID, Amount: ev.Amount, Currency: ev.Currency,
			CouponCode: ev.CouponCode, BuyerName: ev.Customer.Name, BuyerEmail: ev.Customer.Email,
			BuyerDocument: ev.Customer.Document, SubscriptionID: ev.SubscriptionID, PaidAt: paid.UTC(),
		},
	}
}

var errUnavailable = errors.New("a dependency is unavailable")
