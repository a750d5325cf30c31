package reconcile

import (
	"context"

	"github.com/convida/convida/pkg/inbound"
	"github.com/convida/convida/pkg/merchant"
	"github.com/convida/convida/pkg/provider"
)

// Puller is one integration's pull: its sales over a window, page by page.
type Puller interface {
	Sales(ctx context.Context, w inbound.Window, page inbound.Page) error
}

// OrderReader reads one order whole, for a pulled sale whose coupon id
// matched no member's coupon and whose code the list left out (Yampi's).
type OrderReader interface {
	Order(ctx context.Context, id string) (inbound.Sale, error)
}

// Platforms is what reconciliation needs of the platforms' APIs
// (platform.Client): the pull of an integration, and the words of a
// failure, fit for the merchant and free of any credential.
type Platforms interface {
	Puller(in merchant.Integration) (Puller, error)
	Describe(err error) string
}

// Configured reports whether in has the credentials of its platform's
// pull (provider.Pull's needs).
func Configured(in merchant.Integration) bool { return in.Configured(provider.Pull) }

// Providers are the platforms that have a pull, in provider.All's order.
func Providers() []string {
	var names []string
	for _, d := range provider.With(provider.Pull) {
		names = append(names, d.Name)
	}
	return names
}
