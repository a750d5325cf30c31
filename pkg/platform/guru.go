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
	"github.com/convida/convida/pkg/money"
	"github.com/convida/convida/pkg/provider"
)

// GuruAccount is what the calls to one merchant's Guru account need.
type GuruAccount struct {
	APIURL    string // "" means the public one (provider)
	UserToken string // the API user token (a Bearer), not the webhooks' account token
	// IdempotencyKey, when set, is sent with every request of the handle.
	IdempotencyKey string
	// Secrets are more credentials of the merchant that messages must not
	// repeat (the webhooks' account token).
	Secrets []string
}

// Guru calls one merchant's Guru account.
type Guru struct{ ep *endpoint }

// Guru returns the handle of a; the API URL must be http(s) without query.
func (c *Client) Guru(a GuruAccount) (*Guru, error) {
	if a.UserToken == "" {
		return nil, apperr.Errorf(apperr.Unprocessable, "the guru user token is not set")
	}
	ep, err := c.endpoint(provider.Guru, a.APIURL, defaultURL(provider.Guru, "api_url"), append([]string{a.UserToken}, a.Secrets...)...)
	if err != nil {
		return nil, err
	}
	ep.header.Set("Authorization", "Bearer "+a.UserToken)
	if a.IdempotencyKey != "" {
		ep.header.Set("Idempotency-Key", a.IdempotencyKey)
	}
	return &Guru{ep: ep}, nil
}

// guruCycleFields are the fields of Guru's subscription object that give
// the cycle already billed, in the order they are trusted: charged_times
// (how many charges were made: 3 means cycles 1–3 are billed) and then
// current_cycle or cycle (the cycle in progress). Each may be a JSON integer
// or a string of digits, at the top of the answer or inside its "data"
// object; null, negative or fractional values are skipped.
var guruCycleFields = []string{"charged_times", "current_cycle", "cycle"}

// maxCycle is far beyond any real subscription; larger values are not
// trusted.
const maxCycle = 1_000_000

// guruDiscountBody is the body of PUT increment-discount.
type guruDiscountBody struct {
	StartCycle int64        `json:"start_cycle"`
	Discount   guruDiscount `json:"discount"`
}

type guruDiscount struct {
	Value  json.RawMessage `json:"value"` // reais with two decimals, a JSON number
	Cycles int             `json:"cycles"`
}

// DiscountNextCycles takes cents off the next cycles of a subscription
// not billed yet. It reads the subscription anew each time, so that a
// retry after a charge that happened meanwhile still discounts the next
// cycle; a subscription that does not state its billed cycles is refused
// rather than guessed (a discount on a cycle already charged would never
// reach the member).
func (g *Guru) DiscountNextCycles(ctx context.Context, subscriptionID string, cents int64, cycles int) error {
	path := "/subscriptions/" + url.PathEscape(subscriptionID)
	const readStep, discountStep = "GET subscription", "PUT increment-discount"
	r, err := g.ep.send(ctx, request{step: readStep, method: http.MethodGet, path: path})
	if err != nil {
		return err
	}
	if err := g.ep.check(readStep, r); err != nil {
		return err
	}
	billed, ok := billedCycles(r.body)
	if !ok {
		return apperr.Errorf(apperr.Unprocessable,
			provider.Guru+" subscription %s does not state its current cycle (charged_times, current_cycle or cycle): %s",
			Clip(subscriptionID, 60), g.ep.excerpt(r.body))
	}
	body := guruDiscountBody{StartCycle: billed + 1,
		Discount: guruDiscount{Value: json.RawMessage(money.FormatReais(cents)), Cycles: cycles}}
	r, err = g.ep.send(ctx, request{step: discountStep, method: http.MethodPut, path: path + "/increment-discount", payload: body})
	if err != nil {
		return err
	}
	return g.ep.check(discountStep, r)
}

// billedCycles finds the cycle already billed in Guru's subscription
// object (see guruCycleFields); ok is false when none is usable.
func billedCycles(body []byte) (n int64, ok bool) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil {
		return 0, false
	}
	objects := []map[string]json.RawMessage{top}
	var data map[string]json.RawMessage
	if raw, found := top["data"]; found && json.Unmarshal(raw, &data) == nil && data != nil {
		objects = append(objects, data)
	}
	for _, field := range guruCycleFields {
		for _, obj := range objects {
			if n, ok := cycleValue(obj[field]); ok {
				return n, true
			}
		}
	}
	return 0, false
}

// cycleValue reads a non-negative integer written as a JSON number or as a
// string of digits.
func cycleValue(raw json.RawMessage) (int64, bool) {
	if len(raw) == 0 {
		return 0, false
	}
	var text string
	if raw[0] == '"' {
		if json.Unmarshal(raw, &text) != nil {
			return 0, false
		}
	} else {
		text = string(raw)
	}
	n, err := strconv.ParseInt(strings.TrimSpace(text), 10, 64)
	if err != nil || n < 0 || n > maxCycle {
		return 0, false
	}
	return n, true
}

// guruCouponBody is the body of Guru's POST and PUT /coupons.
type guruCouponBody struct {
	CouponCode     string          `json:"coupon_code"`
	DateIni        int64           `json:"date_ini"` // unix seconds
	DateEnd        int64           `json:"date_end"`
	IncidenceField string          `json:"incidence_field"` // "total"
	IncidenceType  string          `json:"incidence_type"`  // "percent" or "value"
	IncidenceValue json.RawMessage `json:"incidence_value"` // percent, or reais
	IsActive       bool            `json:"is_active"`
	UsageContact   int             `json:"usage_contact"` // 1: once per buyer
	UsageTotal     int             `json:"usage_total"`   // 0: no overall limit
	ValidateBy     string          `json:"validate_by"`   // "email"
}

// ProvisionCoupon puts c at Guru (POST or PUT /coupons, GET
// /coupons?coupon_code=… to adopt a code that exists): see
// couponCall.provision.
func (g *Guru) ProvisionCoupon(ctx context.Context, c Coupon) (CouponResult, error) {
	typ := "value"
	if c.Percentage {
		typ = "percent"
	}
	value := c.value()
	call := &couponCall{ep: g.ep, collection: "/coupons", noun: "coupons", codeField: "coupon_code", search: "coupon_code",
		coupon: c,
		body: guruCouponBody{CouponCode: c.Code, DateIni: c.Start.Unix(), DateEnd: c.End.Unix(), IncidenceField: "total",
			IncidenceType: typ, IncidenceValue: value, IsActive: !c.Inactive, UsageContact: 1, UsageTotal: 0, ValidateBy: "email"},
		carries: func(l map[string]json.RawMessage) bool {
			return sameText(l["incidence_type"], typ) && sameAmount(l["incidence_value"], value) && !isFalse(l["is_active"])
		}}
	return call.provision(ctx)
}

// guruPage is an answer of GET /transactions.
type guruPage struct {
	Data         []guruTransaction `json:"data"`
	HasMorePages flag              `json:"has_more_pages"`
	NextCursor   text              `json:"next_cursor"`
}

// guruTransaction is what a pull reads of a listed transaction: the
// webhook's fields, except that its dates are Unix seconds.
type guruTransaction struct {
	ID      text   `json:"id"`
	Status  string `json:"status"`
	Contact object[struct {
		Name  string `json:"name"`
		Email string `json:"email"`
		Doc   text   `json:"doc"`
	}] `json:"contact"`
	Payment object[struct {
		Total    json.RawMessage `json:"total"`
		Currency string          `json:"currency"`
		// The API's coupon shape is not documented: its coupon_code when
		// it is an object that has one, no coupon otherwise.
		Coupon object[struct {
			Code text `json:"coupon_code"`
		}] `json:"coupon"`
	}] `json:"payment"`
	Subscription object[struct {
		ID text `json:"id"`
	}] `json:"subscription"`
	Dates object[struct {
		OrderedAt   json.RawMessage `json:"ordered_at"`
		ConfirmedAt json.RawMessage `json:"confirmed_at"`
	}] `json:"dates"`
}

// Sales lists the transactions confirmed in w, page by page (GET
// /transactions with confirmed_at_ini and confirmed_at_end, the São Paulo
// days of w's ends, then the same filters and the cursor of the previous
// page while has_more_pages says so). w spans at most 180 days.
func (g *Guru) Sales(ctx context.Context, w inbound.Window, page inbound.Page) error {
	if err := checkWindow(w, provider.Guru); err != nil {
		return err
	}
	const day = "2006-01-02"
	query := url.Values{
		"confirmed_at_ini": {w.From.In(SaoPaulo()).Format(day)},
		"confirmed_at_end": {w.To.In(SaoPaulo()).Format(day)},
	}
	for n := 0; n < maxPages; n++ {
		var answer guruPage
		if err := g.ep.getJSON(ctx, request{step: "GET transactions", path: "/transactions", query: query}, &answer); err != nil {
			return err
		}
		sales := make([]inbound.Sale, 0, len(answer.Data))
		for _, t := range answer.Data {
			sales = append(sales, t.sale())
		}
		if err := page(sales); err != nil {
			return err
		}
		if !answer.HasMorePages || answer.NextCursor == "" {
			return nil
		}
		query = cloneWith(query, "cursor", string(answer.NextCursor))
	}
	return apperr.Errorf(apperr.Unprocessable, provider.Guru+" GET transactions: more than %d pages", maxPages)
}

func (t guruTransaction) sale() inbound.Sale {
	p, c, d := t.Payment.V, t.Contact.V, t.Dates.V
	s := inbound.Sale{OrderID: string(t.ID), Status: t.Status, BuyerEmail: c.Email, BuyerName: c.Name, BuyerDocument: string(c.Doc),
		Currency: p.Currency, CouponCode: string(p.Coupon.V.Code), SubscriptionID: string(t.Subscription.V.ID)}
	var err error
	if s.Amount, err = reais(p.Total, "payment.total"); err != nil {
		return unreadable(finish(s, provider.Guru), err)
	}
	if s.OrderedAt, err = epoch(d.OrderedAt, time.Second, "dates.ordered_at"); err != nil {
		return unreadable(finish(s, provider.Guru), err)
	}
	if s.ConfirmedAt, err = epoch(d.ConfirmedAt, time.Second, "dates.confirmed_at"); err != nil {
		return unreadable(finish(s, provider.Guru), err)
	}
	return finish(s, provider.Guru)
}
