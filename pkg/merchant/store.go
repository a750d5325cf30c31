package merchant

import (
	"context"

	"github.com/google/uuid"
)

// Finder finds merchants (postgres.MerchantStore).
type Finder interface {
	FindMerchantByID(ctx context.Context, id uuid.UUID) (*Merchant, error)
}

// IntegrationStore keeps a merchant's integrations with the platforms
// (postgres.MerchantStore), their secrets sealed.
type IntegrationStore interface {
	// FindIntegration returns the merchant's integration with provider
	// (apperr.NotFound when not configured).
	FindIntegration(ctx context.Context, merchantID uuid.UUID, provider string) (*Integration, error)
	// PutIntegration creates or replaces the integration in and returns
	// it as stored.
	PutIntegration(ctx context.Context, merchantID uuid.UUID, in Integration) (*Integration, error)
}
