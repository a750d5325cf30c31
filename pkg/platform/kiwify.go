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

// kiwifyPageSize is page_size of one page.
const kiwifyPageSize = 100

// kiwifyTokenLife is how long a token is kept when the answer does not
// say (Kiwify's tokens last 96 hours).
const kiwifyTokenLife = 96 * time.Hour

// kiwifyTimeLayout is how a pull writes the ends of its window.
const kiwifyTimeLayout = "2006-01-02T15:04:05.000Z"

// KiwifyAccount is what the pulls of one merchant's Kiwify account need.
type KiwifyAccount struct {
	APIURL       string // "" means the public one (provider)
	ClientID     string
	ClientSecret string
	AccountID    string // sent as x-kiwify-account-id on every call
	// Secrets are more credentials of the merchant that messages must not
	// repeat (the webhooks' token).
	Secrets []string
}

// Kiwify calls one merchant's Kiwify account.
type Kiwify struct {
	c        *Client
	ep       *endpoint
	form     url.Values // client credentials of the token request
	tokenKey string
}

// Kiwify returns the handle of a; the API URL must be http(s) without
// query.
func (c *Client) Kiwify(a KiwifyAccount) (*Kiwify, error) {
	switch {
	case a.ClientID == "":
		return nil, apperr.Errorf(apperr.Unprocessable, "the kiwify client id is not set")
	case a.ClientSecret == "":
		return nil, apperr.Errorf(apperr.Unprocessable, "the kiwify client secret is not set")
	case strings.TrimSpace(a.AccountID) == "":
		return nil, apperr.Errorf(apperr.Unprocessable, "the kiwify account id is not set")
	}
	ep, err := c.endpoint(provider.Kiwify, a.APIURL, defaultURL(provider.Kiwify, "api_url"), append([]string{a.ClientSecret}, a.Secrets...)...)
	if err != nil {
		return nil, err
	}
	ep.header.Set("x-kiwify-account-id", strings.TrimSpace(a.AccountID))
	return &Kiwify{c: c, ep: ep,
		form:     url.Values{"client_id": {a.ClientID}, "client_secret": {a.ClientSecret}},
		tokenKey: tokenKey(provider.Kiwify, ep.base, a.ClientID, a.ClientSecret)}, nil
}

// tokens is the account's token source: POST {api_url}/oauth/token with the
// client credentials as a form.
func (k *Kiwify) tokens() tokenSource {
	return tokenSource{key: k.tokenKey, name: provider.Kiwify, fallback: kiwifyTokenLife,
		fetch: func(ctx context.Context) (oauthAnswer, error) {
			var ans oauthAnswer
			err := k.ep.getJSON(ctx, request{step: "POST oauth token", method: http.MethodPost, path: "/oauth/token",
				form: k.form, limit: maxAnswer}, &ans)
			return ans, err
		}}
}

// kiwifyPage is an answer of GET v1/sales.
type kiwifyPage struct {
	Pagination struct {
		Count      json.Number `json:"count"`
		PageNumber json.Number `json:"page_number"`
		PageSize   json.Number `json:"page_size"`
	} `json:"pagination"`
	Data []kiwifySale `json:"data"`
}

// kiwifySale is what a pull reads of a listed sale.
type kiwifySale struct {
	ID       text   `json:"id"`
	Status   string `json:"status"`
	Customer object[struct {
		Email string `json:"email"`
		Name  string `json:"name"`
		CPF   text   `json:"cpf"`
		CNPJ  text   `json:"cnpj"`
	}] `json:"customer"`
	Payment object[struct {
		ChargeAmount json.RawMessage `json:"charge_amount"`
		Currency     string          `json:"currency"`
	}] `json:"payment"`
	Tracking object[struct {
		SCK string `json:"sck"`
		Src string `json:"src"`
		S1  string `json:"s1"`
	}] `json:"tracking"`
	CreatedAt    string `json:"created_at"`
	ApprovedDate string `json:"approved_date"`
}

// Sales lists the sales created in w, page by page (GET v1/sales with
// start_date and end_date, page_size and page_number, until the pages
// cover pagination.count). w spans at most 90 days.
func (k *Kiwify) Sales(ctx context.Context, w inbound.Window, page inbound.Page) error {
	return k.sales(ctx, w, "start_date", "end_date", page)
}

// SalesUpdated is Sales over the sales updated in w
// (updated_at_start_date, updated_at_end_date): it finds the refunds of
// sales created before the window.
func (k *Kiwify) SalesUpdated(ctx context.Context, w inbound.Window, page inbound.Page) error {
	return k.sales(ctx, w, "updated_at_start_date", "updated_at_end_date", page)
}

func (k *Kiwify) sales(ctx context.Context, w inbound.Window, fromParam, toParam string, page inbound.Page) error {
	if err := checkWindow(w, provider.Kiwify); err != nil {
		return err
	}
	query := url.Values{
		fromParam:   {w.From.UTC().Format(kiwifyTimeLayout)},
		toParam:     {w.To.UTC().Format(kiwifyTimeLayout)},
		"page_size": {strconv.Itoa(kiwifyPageSize)},
	}
	seen := 0
	for n := 1; n <= maxPages; n++ {
		var answer kiwifyPage
		q := cloneWith(query, "page_number", strconv.Itoa(n))
		if err := k.c.getAuthed(ctx, k.tokens(), k.ep, request{step: "GET sales", path: "/sales", query: q}, &answer); err != nil {
			return err
		}
		sales := make([]inbound.Sale, 0, len(answer.Data))
		for _, it := range answer.Data {
			sales = append(sales, it.sale())
		}
		if err := page(sales); err != nil {
			return err
		}
		seen += len(answer.Data)
		if count, err := strconv.Atoi(answer.Pagination.Count.String()); len(answer.Data) == 0 ||
			(err == nil && seen >= count) || (err != nil && len(answer.Data) < kiwifyPageSize) {
			return nil
		}
	}
	return apperr.Errorf(apperr.Unprocessable, provider.Kiwify+" GET sales: more than %d pages", maxPages)
}

func (it kiwifySale) sale() inbound.Sale {
	c, t := it.Customer.V, it.Tracking.V
	doc := string(c.CPF)
	if strings.TrimSpace(doc) == "" {
		doc = string(c.CNPJ)
	}
	s := inbound.Sale{OrderID: string(it.ID), Status: it.Status, BuyerEmail: c.Email, BuyerName: c.Name, BuyerDocument: doc,
		Currency: it.Payment.V.Currency, ReferralCode: firstNonBlank(t.SCK, t.Src, t.S1)}
	var err error
	if s.Amount, err = centavos(it.Payment.V.ChargeAmount, "payment.charge_amount"); err != nil {
		return unreadable(finish(s, provider.Kiwify), err)
	}
	if s.OrderedAt, err = kiwifyTime(it.CreatedAt, "created_at"); err != nil {
		return unreadable(finish(s, provider.Kiwify), err)
	}
	if s.ConfirmedAt, err = kiwifyTime(it.ApprovedDate, "approved_date"); err != nil {
		return unreadable(finish(s, provider.Kiwify), err)
	}
	return finish(s, provider.Kiwify)
}

// kiwifyTime reads a Kiwify date: ISO 8601 with its offset, or
// "YYYY-MM-DD HH:MM[:SS]" in São Paulo as its webhooks write them.
func kiwifyTime(s, field string) (time.Time, error) {
	return localTime(s, SaoPaulo(), field, time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02 15:04")
}

// firstNonBlank is the first of values that is not blank, trimmed.
func firstNonBlank(values ...string) string {
	for _, v := range values {
		if v = strings.TrimSpace(v); v != "" {
			return v
		}
	}
	return ""
}
