package platform

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/money"
)

// DefaultYampiAPIURL is Yampi's public API.
const DefaultYampiAPIURL = "https://api.dooki.com.br/v2"

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
	APIURL        string // "" means DefaultYampiAPIURL
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
	ep, err := c.endpoint("yampi", a.APIURL, DefaultYampiAPIURL, append([]string{a.UserToken, a.UserSecretKey}, a.Secrets...)...)
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
