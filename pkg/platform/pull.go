package platform

import (
	"context"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/inbound"
	"github.com/convida/convida/pkg/merchant"
	"github.com/convida/convida/pkg/provider"
	"github.com/convida/convida/pkg/reconcile"
)

var _ reconcile.Platforms = (*Client)(nil)

// Puller opens the sales pull of in's platform (reconcile.Platforms):
// every credential of the merchant is kept out of messages.
func (c *Client) Puller(in merchant.Integration) (reconcile.Puller, error) {
	switch in.Provider {
	case provider.Guru:
		return c.Guru(GuruAccount{APIURL: in.APIURL, UserToken: in.UserToken, Secrets: []string{in.AccountToken}})
	case provider.Yampi:
		return c.Yampi(YampiAccount{APIURL: in.APIURL, UserToken: in.UserToken, UserSecretKey: in.UserSecretKey,
			StoreAlias: in.StoreAlias, Secrets: []string{in.WebhookSecret}})
	case provider.Hotmart:
		return c.Hotmart(HotmartAccount{APIURL: in.APIURL, AuthURL: in.AuthURL, ClientID: in.ClientID,
			ClientSecret: in.ClientSecret, BasicToken: in.BasicToken, Secrets: []string{in.AccountToken}})
	case provider.Kiwify:
		k, err := c.Kiwify(KiwifyAccount{APIURL: in.APIURL, ClientID: in.ClientID, ClientSecret: in.ClientSecret,
			AccountID: in.AccountID, Secrets: []string{in.WebhookSecret}})
		if err != nil {
			return nil, err
		}
		return kiwifyPull{k}, nil
	}
	return nil, apperr.Errorf(apperr.Unprocessable, "no pull reads the sales of %q", Clip(in.Provider, 40))
}

// Describe is the package's Describe (reconcile.Platforms).
func (c *Client) Describe(err error) string { return Describe(err) }

// kiwifyPull lists the sales created in the window and then those updated
// in it, so that the refund of a sale created before the window is found
// too. A sale the first list gave, in the same status, is not given again:
// a run sees each sale once.
type kiwifyPull struct{ k *Kiwify }

func (p kiwifyPull) Sales(ctx context.Context, w inbound.Window, page inbound.Page) error {
	seen := map[[2]string]bool{}
	if err := p.k.Sales(ctx, w, func(sales []inbound.Sale) error {
		for _, s := range sales {
			seen[[2]string{s.OrderID, s.Status}] = true
		}
		return page(sales)
	}); err != nil {
		return err
	}
	return p.k.SalesUpdated(ctx, w, func(sales []inbound.Sale) error {
		fresh := make([]inbound.Sale, 0, len(sales))
		for _, s := range sales {
			if key := [2]string{s.OrderID, s.Status}; !seen[key] {
				seen[key] = true
				fresh = append(fresh, s)
			}
		}
		return page(fresh) // even empty: a page was read
	})
}
