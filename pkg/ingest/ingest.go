// Package ingest receives the platforms' webhooks at
// /api/webhooks/{provider}/{merchant_id} (docs/decisions.md, decision 23):
// authenticate and parse (pkg/inbound), then take the sale in
// (pkg/intake: deduplicate in Redis, find the member by its codes, cached
// here, publish the ledger command with the delivery's record), and
// answer only after the broker acknowledged both. No PostgreSQL statement
// runs on the path of an accepted sale once the caches are warm; the
// Recorder writes the records to PostgreSQL later, in batches.
package ingest

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/merchant"
)

// Merchants finds merchants and their provider settings.
type Merchants interface {
	FindMerchantByID(ctx context.Context, id uuid.UUID) (*merchant.Merchant, error)
	FindIntegration(ctx context.Context, merchantID uuid.UUID, provider string) (*merchant.Integration, error)
}

// Limiter is a rate limiter (GCRA in Redis): retryAfter > 0 means refused.
type Limiter interface {
	Allow(ctx context.Context, key string, perSecond, burst int) (remaining int, retryAfter, resetAfter time.Duration, err error)
}

// MaxBody is the largest accepted request body.
const MaxBody = 1 << 20

// PublishTimeout bounds the broker's acknowledgement of a delivery's
// command, so that the answer (503 when it does not come) reaches the
// platform within Yampi's 5 s.
const PublishTimeout = 3 * time.Second

// errBrokerBehind refuses a record while the background queue finds the
// broker down.
var errBrokerBehind = errors.New("delivery records are waiting for the broker")
