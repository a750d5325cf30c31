package reconcile

import (
	"context"
	"maps"
	"slices"

	"github.com/convida/convida/pkg/merchant"
	"github.com/convida/convida/pkg/platform"
)

// Puller is one integration's pull: its sales over a window, page by page
// (platform.Guru, platform.Yampi, …).
type Puller interface {
	Sales(ctx context.Context, w platform.Window, page platform.Page) error
}

// OrderReader reads one order whole, for a pulled sale whose coupon id
// matched no member's coupon and whose code the list left out
// (platform.Yampi).
type OrderReader interface {
	Order(ctx context.Context, id string) (platform.Sale, error)
}

// Adapter is what reconciliation knows of one provider: whether an
// integration has the credentials of a pull, and how to open it. Hotmart
// and Kiwify plug in here, one entry each.
type Adapter struct {
	Configured func(in merchant.Integration) bool
	Open       func(c *platform.Client, in merchant.Integration) (Puller, error)
}

// adapters are the providers that have a pull.
var adapters = map[string]Adapter{
	merchant.ProviderGuru: {
		Configured: func(in merchant.Integration) bool { return in.UserToken != "" },
		Open: func(c *platform.Client, in merchant.Integration) (Puller, error) {
			return c.Guru(platform.GuruAccount{APIURL: in.APIURL, UserToken: in.UserToken, Secrets: []string{in.AccountToken}})
		},
	},
	merchant.ProviderYampi: {
		Configured: func(in merchant.Integration) bool {
			return in.UserToken != "" && in.UserSecretKey != "" && in.StoreAlias != ""
		},
		Open: func(c *platform.Client, in merchant.Integration) (Puller, error) {
			return c.Yampi(platform.YampiAccount{APIURL: in.APIURL, UserToken: in.UserToken, UserSecretKey: in.UserSecretKey,
				StoreAlias: in.StoreAlias, Secrets: []string{in.WebhookSecret}})
		},
	},
}

// Lookup returns the adapter of provider, false when it has no pull.
func Lookup(provider string) (Adapter, bool) {
	a, ok := adapters[provider]
	return a, ok
}

// Configured reports whether in has the credentials of its provider's
// pull (Guru: the user token; Yampi: user token, secret key and alias).
func Configured(in merchant.Integration) bool {
	a, ok := Lookup(in.Provider)
	return ok && a.Configured(in)
}

// Providers are the providers that have a pull, sorted.
func Providers() []string { return slices.Sorted(maps.Keys(adapters)) }
