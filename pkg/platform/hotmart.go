package platform

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/inbound"
	"github.com/convida/convida/pkg/provider"
)

// hotmartPageSize is max_results of one page.
const hotmartPageSize = 50

// hotmartTokenLife is how long a token is kept when the answer does not
// say (expires_in).
const hotmartTokenLife = time.Hour

// HotmartStatuses are the transaction_status values a pull asks for, one
// query each: "" (without the filter Hotmart lists APPROVED and COMPLETE
// only), then the reversals a webhook would have brought.
var HotmartStatuses = []string{"", "REFUNDED", "CHARGEBACK", "CANCELLED"}

// HotmartAccount is what the pulls of one merchant's Hotmart account need:
// the client credentials Hotmart's developer page issues.
type HotmartAccount struct {
	APIURL       string // "" means the public one (provider)
	AuthURL      string // "" means the public one (provider)
	ClientID     string
	ClientSecret string
	BasicToken   string // "Basic …" as Hotmart shows it; the word Basic is optional
	// Secrets are more credentials of the merchant that messages must not
	// repeat (the webhooks' hottok).
	Secrets []string
}

// Hotmart calls one merchant's Hotmart account.
type Hotmart struct {
	c        *Client
	api      *endpoint
	auth     *endpoint
	query    url.Values // client credentials of the token request
	tokenKey string
}

// Hotmart returns the handle of a; both URLs must be http(s) without query.
func (c *Client) Hotmart(a HotmartAccount) (*Hotmart, error) {
	basic := strings.TrimSpace(a.BasicToken)
	if len(basic) > 6 && strings.EqualFold(basic[:6], "basic ") {
		basic = strings.TrimSpace(basic[6:])
	}
	switch {
	case a.ClientID == "":
		return nil, apperr.Errorf(apperr.Unprocessable, "the hotmart client id is not set")
	case a.ClientSecret == "":
		return nil, apperr.Errorf(apperr.Unprocessable, "the hotmart client secret is not set")
	case basic == "":
		return nil, apperr.Errorf(apperr.Unprocessable, "the hotmart basic token is not set")
	}
	secrets := append([]string{a.ClientSecret, basic}, a.Secrets...)
	api, err := c.endpoint(provider.Hotmart, a.APIURL, defaultURL(provider.Hotmart, "api_url"), secrets...)
	if err != nil {
		return nil, err
	}
	auth, err := c.endpoint(provider.Hotmart, a.AuthURL, defaultURL(provider.Hotmart, "auth_url"), secrets...)
	if err != nil {
		return nil, apperr.Errorf(apperr.Unprocessable, "the hotmart auth url is not an http(s) URL without query")
	}
	auth.header.Set("Authorization", "Basic "+basic)
	return &Hotmart{c: c, api: api, auth: auth,
		query:    url.Values{"grant_type": {"client_credentials"}, "client_id": {a.ClientID}, "client_secret": {a.ClientSecret}},
		tokenKey: tokenKey(provider.Hotmart, auth.base, a.ClientID, a.ClientSecret, basic)}, nil
}

// tokens is the account's token source: POST to the token endpoint
// (AuthURL, the whole URL) with the client credentials in the query and
// the basic token.
func (h *Hotmart) tokens() tokenSource {
	return tokenSource{key: h.tokenKey, name: provider.Hotmart, fallback: hotmartTokenLife,
		fetch: func(ctx context.Context) (oauthAnswer, error) {
			var ans oauthAnswer
			err := h.auth.getJSON(ctx, request{step: "POST oauth token", method: http.MethodPost,
				path: "", query: h.query, limit: maxAnswer}, &ans)
			return ans, err
		}}
}

// hotmartPage is an answer of sales/history or sales/price/details.
type hotmartPage[T any] struct {
	Items    []T `json:"items"`
	PageInfo struct {
		NextPageToken string `json:"next_page_token"`
	} `json:"page_info"`
}

// hotmartSale is what a pull reads of a sales/history item.
type hotmartSale struct {
	Buyer object[struct {
		Name     string `json:"name"`
		Email    string `json:"email"`
		Document text   `json:"document"`
	}] `json:"buyer"`
	Purchase object[struct {
		Transaction  string          `json:"transaction"`
		Status       string          `json:"status"`
		OrderDate    json.RawMessage `json:"order_date"`
		ApprovedDate json.RawMessage `json:"approved_date"`
		Price        object[struct {
			Value         json.RawMessage `json:"value"`
			CurrencyCode  string          `json:"currency_code"`
			CurrencyValue string          `json:"currency_value"`
		}] `json:"price"`
		Offer object[struct {
			CouponCode string `json:"coupon_code"`
		}] `json:"offer"`
	}] `json:"purchase"`
}

// hotmartPrice is what a pull reads of a sales/price/details item: the
// coupon of a transaction, which sales/history does not carry.
type hotmartPrice struct {
	Transaction string `json:"transaction"`
	Coupon      object[struct {
		Code string `json:"code"`
	}] `json:"coupon"`
}

// Sales lists the sales ordered in w, page by page: for each of
// HotmartStatuses, the coupons of GET sales/price/details and then the
// pages of GET sales/history (start_date and end_date in milliseconds,
// max_results, page_token), each sale given the coupon of its transaction.
// Each page of price details is handed over empty (it holds no sale): page
// is called once per page read, of either list.
// The access token comes from the token service and is kept for its
// expires_in.
func (h *Hotmart) Sales(ctx context.Context, w inbound.Window, page inbound.Page) error {
	if err := checkWindow(w, provider.Hotmart); err != nil {
		return err
	}
	for _, status := range HotmartStatuses {
		query := url.Values{
			"start_date":  {strconv.FormatInt(w.From.UnixMilli(), 10)},
			"end_date":    {strconv.FormatInt(w.To.UnixMilli(), 10)},
			"max_results": {strconv.Itoa(hotmartPageSize)},
		}
		if status != "" {
			query.Set("transaction_status", status)
		}
		coupons := map[string]string{}
		err := hotmartPages(ctx, h, "GET sales price details", "/sales/price/details", query,
			func(items []hotmartPrice) error {
				for _, it := range items {
					if code := strings.TrimSpace(it.Coupon.V.Code); code != "" && it.Transaction != "" {
						coupons[it.Transaction] = code
					}
				}
				return page(nil) // a page read: the caller sees the pull move on
			})
		if err != nil {
			return err
		}
		err = hotmartPages(ctx, h, "GET sales history", "/sales/history", query, func(items []hotmartSale) error {
			sales := make([]inbound.Sale, 0, len(items))
			for _, it := range items {
				sales = append(sales, it.sale(coupons))
			}
			return page(sales)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// hotmartPages reads every page of one Hotmart list, following
// next_page_token.
func hotmartPages[T any](ctx context.Context, h *Hotmart, step, path string, query url.Values, each func([]T) error) error {
	q := query
	for n := 0; n < maxPages; n++ {
		var answer hotmartPage[T]
		if err := h.c.getAuthed(ctx, h.tokens(), h.api, request{step: step, path: path, query: q}, &answer); err != nil {
			return err
		}
		if err := each(answer.Items); err != nil {
			return err
		}
		next := strings.TrimSpace(answer.PageInfo.NextPageToken)
		if next == "" || len(answer.Items) == 0 {
			return nil
		}
		q = cloneWith(query, "page_token", next)
	}
	return apperr.Errorf(apperr.Unprocessable, provider.Hotmart+" %s: more than %d pages", step, maxPages)
}

func (it hotmartSale) sale(coupons map[string]string) inbound.Sale {
	p, b := it.Purchase.V, it.Buyer.V
	s := inbound.Sale{OrderID: p.Transaction, Status: p.Status, BuyerEmail: b.Email, BuyerName: b.Name, BuyerDocument: string(b.Document),
		Currency: p.Price.V.CurrencyCode, CouponCode: coupons[p.Transaction]}
	if s.Currency == "" {
		s.Currency = p.Price.V.CurrencyValue
	}
	if s.CouponCode == "" {
		s.CouponCode = p.Offer.V.CouponCode
	}
	var err error
	if s.Amount, err = reais(p.Price.V.Value, "purchase.price.value"); err != nil {
		return unreadable(finish(s, provider.Hotmart), err)
	}
	if s.OrderedAt, err = epoch(p.OrderDate, time.Millisecond, "purchase.order_date"); err != nil {
		return unreadable(finish(s, provider.Hotmart), err)
	}
	if s.ConfirmedAt, err = epoch(p.ApprovedDate, time.Millisecond, "purchase.approved_date"); err != nil {
		return unreadable(finish(s, provider.Hotmart), err)
	}
	return finish(s, provider.Hotmart)
}
