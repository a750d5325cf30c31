package member

import (
	"context"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/merchant"
	"github.com/convida/convida/pkg/provider"
)

// Checkouts are a merchant's checkout links, by platform, of the
// platforms that attribute a sale by the link it came through rather than
// a coupon (provider.Link); a platform without a link set is absent.
type Checkouts map[string]string

// IntegrationFinder finds a merchant's settings of a platform
// (apperr.NotFound when not configured).
type IntegrationFinder interface {
	FindIntegration(ctx context.Context, merchantID uuid.UUID, platform string) (*merchant.Integration, error)
}

// CheckoutsOf reads the merchant's checkout links.
func CheckoutsOf(ctx context.Context, f IntegrationFinder, merchantID uuid.UUID) (Checkouts, error) {
	c := Checkouts{}
	for _, d := range provider.With(provider.Link) {
		in, err := f.FindIntegration(ctx, merchantID, d.Name)
		if apperr.Is(err, apperr.NotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if link := in.ValueOf(d.Needs[provider.Link][0]); link != "" {
			c[d.Name] = link
		}
	}
	return c, nil
}

// ReferralLinks are m's referral links at the platforms of provider.Link:
// the merchant's checkout link with her code in the platform's parameter
// (provider.Descriptor.LinkParam), its other parameters kept. A link is
// nil while the merchant has set no checkout link, and for an erased
// member, whose code no longer refers anyone.
func (m *Member) ReferralLinks(c Checkouts) map[string]*string {
	links := map[string]*string{}
	for _, d := range provider.With(provider.Link) {
		links[d.Name] = nil
		if checkout := c[d.Name]; checkout != "" && m.CouponCode != "" && m.ErasedAt.IsZero() {
			link := Link(checkout, d.LinkParam, m.CouponCode)
			links[d.Name] = &link
		}
	}
	return links
}
