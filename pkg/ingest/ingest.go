// Package ingest receives the platforms' webhooks at
// /api/webhooks/{provider}/{merchant_id} (docs/decisions.md, decision 23):
// authenticate, parse, deduplicate (Redis), resolve the coupon to a member
// (cached), publish the ledger command with the delivery's record, and
// answer only after the broker acknowledged both. No PostgreSQL statement
// runs on the path of an accepted sale once the caches are warm; the
// Recorder writes the records to PostgreSQL later, in batches.
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

// Dedupe is the fast path of deduplication (Redis), the only one on the
// request path: it may fail or forget, and then a repeated event is
// published again and the ledger, which applies a command id once, drops
// it.
type Dedupe interface {
	Seen(ctx context.Context, key string) (bool, error)
	Remember(ctx context.Context, key string, ttl time.Duration) error
}

// Publisher publishes the record of a delivery and, when cmd is not nil,
// the delivery's ledger command, in one write, and returns once the broker
// acknowledged both (acks=all).
type Publisher interface {
	PublishDelivery(ctx context.Context, d inbound.Delivery, cmd *ledger.Command) error
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

// errBrokerBehind refuses a record while the background queue finds the
// broker down.
var errBrokerBehind = errors.New("delivery records are waiting for the broker")
