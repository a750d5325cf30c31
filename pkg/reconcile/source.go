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
// integration has the credentials of a pull, and how to open it.
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
	merchant.ProviderHotmart: {
		Configured: pullComplete,
		Open: func(c *platform.Client, in merchant.Integration) (Puller, error) {
			return c.Hotmart(platform.HotmartAccount{APIURL: in.APIURL, AuthURL: in.AuthURL, ClientID: in.ClientID,
				ClientSecret: in.ClientSecret, BasicToken: in.BasicToken, Secrets: []string{in.AccountToken}})
		},
	},
	merchant.ProviderKiwify: {
		Configured: pullComplete,
		Open: func(c *platform.Client, in merchant.Integration) (Puller, error) {
			k, err := c.Kiwify(platform.KiwifyAccount{APIURL: in.APIURL, ClientID: in.ClientID, ClientSecret: in.ClientSecret,
				AccountID: in.AccountID, Secrets: []string{in.WebhookSecret}})
			if err != nil {
				return nil, err
			}
			return kiwifyPull{k}, nil
		},
	},
}

// pullComplete reports whether in has every field its provider's pull
// reads (Hotmart: client id, client secret, basic token; Kiwify: client
// id, client secret, account id).
func pullComplete(in merchant.Integration) bool { return len(in.PullMissing()) == 0 }

// kiwifyPull lists the sales created in the window and then those updated
// in it, so that the refund of a sale created before the window is found
// too. A sale the first list gave, in the same status, is not given again:
// a run sees each sale once.
type kiwifyPull struct{ k *platform.Kiwify }

func (p kiwifyPull) Sales(ctx context.Context, w platform.Window, page platform.Page) error {
	seen := map[[2]string]bool{}
	if err := p.k.Sales(ctx, w, func(sales []platform.Sale) error {
		for _, s := range sales {
			seen[[2]string{s.OrderID, s.Status}] = true
		}
		return page(sales)
	}); err != nil {
		return err
	}
	return p.k.SalesUpdated(ctx, w, func(sales []platform.Sale) error {
		fresh := make([]platform.Sale, 0, len(sales))
		for _, s := range sales {
			if key := [2]string{s.OrderID, s.Status}; !seen[key] {
				seen[key] = true
				fresh = append(fresh, s)
			}
		}
		return page(fresh) // even empty: a page was read
	})
}

// Lookup returns the adapter of provider, false when it has no pull.
func Lookup(provider string) (Adapter, bool) {
	a, ok := adapters[provider]
	return a, ok
}

// Configured reports whether in has the credentials of its provider's
// pull (Guru: the user token; Yampi: user token, secret key and alias;
// Hotmart and Kiwify: merchant.Integration.PullMissing is empty).
func Configured(in merchant.Integration) bool {
	a, ok := Lookup(in.Provider)
	return ok && a.Configured(in)
}

// Providers are the providers that have a pull, sorted.
func Providers() []string { return slices.Sorted(maps.Keys(adapters)) }
