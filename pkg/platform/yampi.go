package platform

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/inbound"
	"github.com/convida/convida/pkg/money"
	"github.com/convida/convida/pkg/provider"
)

// yampiTimeLayout is how Yampi writes its dates, in the store's time zone
// (America/Sao_Paulo).
const yampiTimeLayout = "2006-01-02 15:04:05"

// SaoPaulo is the time zone of Yampi's and Guru's dates and of the days of
// their filters; Brazil has had no daylight saving since 2019, so a fixed
// UTC−3 stands in when the system has no zone database.
var SaoPaulo = sync.OnceValue(func() *time.Location {
	if loc, err := time.LoadLocation("America/Sao_Paulo"); err == nil {
		return loc
	}
	return time.FixedZone("-03", -3*60*60)
})

// YampiAccount is what the calls to one merchant's Yampi store need.
type YampiAccount struct {
	APIURL        string // "" means the public one (provider)
	UserToken     string
	UserSecretKey string
	StoreAlias    string
	// IdempotencyKey, when set, is sent with every request of the handle.
	IdempotencyKey string
	// Secrets are more credentials of the merchant that messages must not
	// repeat (the webhooks' secret).
	Secrets []string
}

// Yampi calls one merchant's Yampi store.
type Yampi struct {
	ep    *endpoint
	alias string // path-escaped
}

// Yampi returns the handle of a; the API URL must be http(s) without query.
func (c *Client) Yampi(a YampiAccount) (*Yampi, error) {
	alias := strings.TrimSpace(a.StoreAlias)
	switch {
	case a.UserToken == "":
		return nil, apperr.Errorf(apperr.Unprocessable, "the yampi user token is not set")
	case a.UserSecretKey == "":
		return nil, apperr.Errorf(apperr.Unprocessable, "the yampi user secret key is not set")
	case alias == "":
		return nil, apperr.Errorf(apperr.Unprocessable, "the yampi store alias is not set")
	}
	ep, err := c.endpoint(provider.Yampi, a.APIURL, defaultURL(provider.Yampi, "api_url"), append([]string{a.UserToken, a.UserSecretKey}, a.Secrets...)...)
	if err != nil {
		return nil, err
	}
	ep.header.Set("User-Token", a.UserToken)
	ep.header.Set("User-Secret-Key", a.UserSecretKey)
	if a.IdempotencyKey != "" {
		ep.header.Set("Idempotency-Key", a.IdempotencyKey)
	}
	return &Yampi{ep: ep, alias: url.PathEscape(alias)}, nil
}

func (y *Yampi) promocodes() string { return "/" + y.alias + "/pricing/promocodes" }

// StoreCredit is a single-use coupon of a fixed amount.
type StoreCredit struct {
	Code        string
	Description string
	Cents       int64
	Start, End  time.Time
}

// yampiPromocode is the body of POST pricing/promocodes for store credit.
type yampiPromocode struct {
	Active          bool            `json:"active"`
	Code            string          `json:"code"`
	Description     string          `json:"description"`
	DiscountType    string          `json:"discount_type"` // "v": a value in reais
	Value           json.RawMessage `json:"value"`
	Quantity        int             `json:"quantity"`
	OncePerCustomer bool            `json:"once_per_customer"`
	StartAt         string          `json:"start_at"`
	EndAt           string          `json:"end_at"`
}

// CreateStoreCredit creates s as a promocode usable once. Yampi answers 422
// to a code already taken: after an earlier try whose answer was lost that
// coupon is ours, so a 422 is a success when the coupon can be found with
// s's code and amount (GET pricing/promocodes?q=<code>), and a refusal
// otherwise.
func (y *Yampi) CreateStoreCredit(ctx context.Context, s StoreCredit) error {
	const step = "POST promocodes"
	body := yampiPromocode{Active: true, Code: s.Code, Description: s.Description, DiscountType: "v",
		Value: json.RawMessage(money.FormatReais(s.Cents)), Quantity: 1, OncePerCustomer: true,
		StartAt: s.Start.In(SaoPaulo()).Format(yampiTimeLayout), EndAt: s.End.In(SaoPaulo()).Format(yampiTimeLayout)}
	r, err := y.ep.send(ctx, request{step: step, method: http.MethodPost, path: y.promocodes(), payload: body})
	if err != nil {
		return err
	}
	if r.status == http.StatusUnprocessableEntity {
		found, err := y.listsCredit(ctx, s)
		if err != nil || found {
			return err
		}
	}
	return y.ep.check(step, r)
}

// listsCredit reports whether Yampi's search shows s's code with its
// amount. It is false, with no error, when the search refuses (a 4xx):
// the creation's refusal then stands. A transient failure is returned.
func (y *Yampi) listsCredit(ctx context.Context, s StoreCredit) (bool, error) {
	const step = "GET promocodes"
	r, err := y.ep.send(ctx, request{step: step, method: http.MethodGet, path: y.promocodes(), query: url.Values{"q": {s.Code}}})
	if err != nil {
		return false, err
	}
	if err := y.ep.check(step, r); err != nil {
		var t *TransientError
		if errors.As(err, &t) {
			return false, err
		}
		return false, nil
	}
	for _, c := range listedObjects(r.body) {
		var code string
		if json.Unmarshal(c["code"], &code) == nil && strings.EqualFold(code, s.Code) && sameCents(c["value"], s.Cents) {
			return true, nil
		}
	}
	return false, nil
}

// sameCents reports whether raw, reais as a number or a string, is cents;
// an absent value is accepted, since the code alone identifies the coupon.
func sameCents(raw json.RawMessage, cents int64) bool {
	if len(raw) == 0 || string(raw) == "null" {
		return true
	}
	got, err := reaisOf(raw)
	return err == nil && got == cents
}

// yampiCouponBody is the body of Yampi's POST and PUT pricing/promocodes
// for a member's referral code.
type yampiCouponBody struct {
	Active          bool            `json:"active"`
	Code            string          `json:"code"`
	DiscountType    string          `json:"discount_type"` // "p" percent, "v" reais
	Value           json.RawMessage `json:"value"`
	Quantity        int             `json:"quantity"`
	OncePerCustomer bool            `json:"once_per_customer"`
	Accumulate      bool            `json:"accumulate"`
	StartAt         string          `json:"start_at"` // America/Sao_Paulo, yampiTimeLayout
	EndAt           string          `json:"end_at"`
}

// yampiCouponQuantity is how many times a referral coupon may be used in
// all: Yampi wants a number, and a member's code has no overall limit.
const yampiCouponQuantity = 100000

// ProvisionCoupon puts c at Yampi (POST or PUT pricing/promocodes, GET
// pricing/promocodes?q=… to adopt a code that exists): see
// couponCall.provision. The id returned is Yampi's promocode id, which its
// orders carry as promocode_id.
func (y *Yampi) ProvisionCoupon(ctx context.Context, c Coupon) (CouponResult, error) {
	typ := "v"
	if c.Percentage {
		typ = "p"
	}
	value := c.value()
	call := &couponCall{ep: y.ep, collection: y.promocodes(), noun: "promocodes", codeField: "code", search: "q", coupon: c,
		body: yampiCouponBody{Active: !c.Inactive, Code: c.Code, DiscountType: typ, Value: value, Quantity: yampiCouponQuantity,
			OncePerCustomer: true, StartAt: c.Start.In(SaoPaulo()).Format(yampiTimeLayout),
			EndAt: c.End.In(SaoPaulo()).Format(yampiTimeLayout)},
		carries: func(l map[string]json.RawMessage) bool {
			return sameText(l["discount_type"], typ) && sameAmount(l["value"], value) && !isFalse(l["active"])
		}}
	return call.provision(ctx)
}

// yampiPageSize is the limit of one page of orders.
const yampiPageSize = 50

// yampiInclude brings the nested objects an order's webhook carries.
// Whether the list honours it for the promocode is not established:
// promocode_id, always top-level, is what a pull relies on.
const yampiInclude = "promocode,customer,status"

// yampiOrders is an answer of GET {alias}/orders.
type yampiOrders struct {
	Data []yampiOrder `json:"data"`
	Meta struct {
		Pagination struct {
			CurrentPage json.Number `json:"current_page"`
			TotalPages  json.Number `json:"total_pages"`
		} `json:"pagination"`
	} `json:"meta"`
}

// yampiOrder is what a pull reads of an order.
type yampiOrder struct {
	ID     text `json:"id"`
	Status object[struct {
		Data object[struct {
			Alias string `json:"alias"`
		}] `json:"data"`
	}] `json:"status"`
	ValueTotal  json.RawMessage `json:"value_total"`
	PromocodeID text            `json:"promocode_id"`
	Promocode   object[struct {
		Data object[struct {
			Code string `json:"code"`
		}] `json:"data"`
	}] `json:"promocode"`
	Customer object[struct {
		Data object[struct {
			Name  string `json:"name"`
			Email string `json:"email"`
			CPF   text   `json:"cpf"`
			CNPJ  text   `json:"cnpj"`
		}] `json:"data"`
	}] `json:"customer"`
	CreatedAt yampiDate `json:"created_at"`
}

// yampiDate is a Yampi date: {"date": "2026-11-20 08:55:00.000000",
// "timezone": "America/Sao_Paulo"} or the text alone, in São Paulo.
type yampiDate struct{ text, zone string }

func (d *yampiDate) UnmarshalJSON(b []byte) error {
	var obj struct {
		Date     string `json:"date"`
		Timezone string `json:"timezone"`
	}
	if json.Unmarshal(b, &obj) == nil {
		d.text, d.zone = obj.Date, obj.Timezone
		return nil
	}
	var s string
	if json.Unmarshal(b, &s) == nil {
		d.text = s
	}
	return nil
}

func (d yampiDate) time(field string) (time.Time, error) {
	loc := SaoPaulo()
	if d.zone != "" && d.zone != "America/Sao_Paulo" {
		if l, err := time.LoadLocation(d.zone); err == nil {
			loc = l
		}
	}
	return localTime(d.text, loc, field, "2006-01-02 15:04:05.000000", yampiTimeLayout, time.RFC3339)
}

// Sales lists the orders created in w, page by page: GET {alias}/orders
// with date=created_at:<day>|<day> (São Paulo days), page and limit, the
// nested objects included, and skipCache=true — Yampi's edge otherwise
// answers a GET from a cache up to half an hour old.
func (y *Yampi) Sales(ctx context.Context, w inbound.Window, page inbound.Page) error {
	if err := checkWindow(w, provider.Yampi); err != nil {
		return err
	}
	const day = "2006-01-02"
	query := url.Values{
		"date":      {"created_at:" + w.From.In(SaoPaulo()).Format(day) + "|" + w.To.In(SaoPaulo()).Format(day)},
		"limit":     {strconv.Itoa(yampiPageSize)},
		"include":   {yampiInclude},
		"skipCache": {"true"},
	}
	for n := 1; n <= maxPages; n++ {
		var answer yampiOrders
		q := cloneWith(query, "page", strconv.Itoa(n))
		if err := y.ep.getJSON(ctx, request{step: "GET orders", path: "/" + y.alias + "/orders", query: q}, &answer); err != nil {
			return err
		}
		sales := make([]inbound.Sale, 0, len(answer.Data))
		for _, o := range answer.Data {
			sales = append(sales, o.sale())
		}
		if err := page(sales); err != nil {
			return err
		}
		if !morePages(answer.Meta.Pagination.TotalPages, n, len(answer.Data), yampiPageSize) {
			return nil
		}
	}
	return apperr.Errorf(apperr.Unprocessable, provider.Yampi+" GET orders: more than %d pages", maxPages)
}

// Order reads one order with its promocode and customer (GET
// {alias}/orders/{id}): for a listed order whose promocode_id matches no
// coupon Convida created, to read the code itself.
func (y *Yampi) Order(ctx context.Context, id string) (inbound.Sale, error) {
	var answer struct {
		Data yampiOrder `json:"data"`
	}
	q := url.Values{"include": {yampiInclude}, "skipCache": {"true"}}
	path := "/" + y.alias + "/orders/" + url.PathEscape(id)
	if err := y.ep.getJSON(ctx, request{step: "GET order", path: path, query: q}, &answer); err != nil {
		return inbound.Sale{}, err
	}
	return answer.Data.sale(), nil
}

func (o yampiOrder) sale() inbound.Sale {
	c := o.Customer.V.Data.V
	doc := string(c.CPF)
	if strings.TrimSpace(doc) == "" {
		doc = string(c.CNPJ) // a company buyer
	}
	s := inbound.Sale{OrderID: string(o.ID), Status: o.Status.V.Data.V.Alias, BuyerEmail: c.Email, BuyerName: c.Name, BuyerDocument: doc,
		CouponCode: o.Promocode.V.Data.V.Code, PromocodeID: string(o.PromocodeID)}
	if s.PromocodeID == "0" { // no promocode
		s.PromocodeID = ""
	}
	var err error
	if s.Amount, err = reais(o.ValueTotal, "value_total"); err != nil {
		return unreadable(finish(s, provider.Yampi), err)
	}
	if s.OrderedAt, err = o.CreatedAt.time("created_at"); err != nil {
		return unreadable(finish(s, provider.Yampi), err)
	}
	return finish(s, provider.Yampi)
}
