package redemption

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/campaign"
	"github.com/convida/convida/pkg/merchant"
	"github.com/convida/convida/pkg/money"
)

// Referee coupons (issue 11, webhooks.md "Referee coupons"): a member's
// referral code becomes a real coupon at each configured platform,
// carrying the campaign's referee discount, so that the friend who uses it
// gets the discount at checkout and the sale carries the code.

// Statuses of a member's coupon at one platform.
const (
	CouponPending       = "pending"        // asked for, not carried out yet (or being retried)
	CouponProvisioned   = "provisioned"    // the platform holds the coupon with the wanted discount
	CouponFailed        = "failed"         // the platform refused, or failed on every try
	CouponNotConfigured = "not_configured" // no API credentials, or no referee discount
)

// CouponPlatforms are the platforms a member's code is provisioned at.
var CouponPlatforms = []string{merchant.ProviderGuru, merchant.ProviderYampi}

// RefereeCouponYears is how long a referee coupon is valid from its
// provisioning: campaigns have no end date, and a code lives as long as its
// member.
const RefereeCouponYears = 5

// Discount is the referee's discount a coupon carries: Type
// campaign.RewardPercentage with Value a whole percent, or
// campaign.RewardFixed with Value in cents.
type Discount struct {
	Type  string
	Value int64
}

// CouponRequest is one member's code to provision at one platform.
type CouponRequest struct {
	Code     string   // the member's referral code, the coupon's code
	Discount Discount // what the coupon gives the friend
	// CouponID is the platform's id of the coupon provisioned before: it is
	// updated (PUT); "" creates it (POST).
	CouponID string
	// IdempotencyKey is sent with the creation, for the platforms that
	// honour it; optional.
	IdempotencyKey string
	// Inactive switches the coupon of CouponID off (its campaign no longer
	// gives a discount; Discount is the one it carried): only the update is
	// sent, and a coupon the platform no longer has needs nothing.
	Inactive bool
	Now      time.Time // the start of the validity; zero means time.Now()
}

// CouponResult is the coupon the platform holds after ProvisionCoupon.
type CouponResult struct {
	CouponID string
	// Adopted is true when the platform already had a coupon of the code
	// (an earlier try whose answer was lost, or one the merchant typed by
	// hand) and it was taken over instead of duplicated.
	Adopted bool
}

// MissingCouponSetting names the first setting that provisioning a coupon
// at provider needs and settings lack, or "" when it has them all: the
// Guru user token; the Yampi user token, user secret key and store alias
// (the same as redemptions need, MissingSetting).
func MissingCouponSetting(provider string, settings merchant.Integration) string {
	switch provider {
	case merchant.ProviderGuru:
		return MissingSetting(TypeSubscriptionDiscount, settings)
	case merchant.ProviderYampi:
		return MissingSetting(TypeStoreCredit, settings)
	}
	return "provider"
}

// RetryAfter is the Retry-After a platform sent with a transient failure
// of ProvisionCoupon (zero when it sent none).
func RetryAfter(err error) time.Duration {
	var t *transientError
	if errors.As(err, &t) {
		return t.retryAfter
	}
	return 0
}

// ProvisionCoupon makes one try at putting req's coupon at provider with
// settings (decrypted; an empty APIURL means the public API):
//
//   - with a CouponID, the coupon is updated (Guru PUT /coupons/{id}, Yampi
//     PUT …/pricing/promocodes/{id}); if the platform no longer has it
//     (404), it is created again (unless req.Inactive: then nothing is
//     left to switch off);
//   - otherwise it is created (Guru POST /coupons, Yampi POST
//     …/pricing/promocodes). A 409 or 422 answer is taken as "this code
//     exists" whatever its wording: the code is looked up (Guru GET
//     /coupons?coupon_code=…, Yampi GET …/pricing/promocodes?q=…) and the
//     coupon found is adopted, and updated when it does not carry the
//     discount. Repeating a creation whose answer was lost therefore never
//     makes a second coupon.
//
// It does not retry. The error is an *apperr.Error: Unavailable for a 5xx,
// a 429 or a network error (worth another try later; see RetryAfter),
// Unprocessable for a refusal or settings that lack something (the
// message names the platform, the request and at most 200 characters of
// its answer, never a credential).
func (e *Executor) ProvisionCoupon(ctx context.Context, provider string, settings merchant.Integration, req CouponRequest) (CouponResult, error) {
	c, err := e.newCouponCall(provider, settings, req)
	if err != nil {
		return CouponResult{}, err
	}
	res, err := c.provision(ctx)
	var t *transientError
	if errors.As(err, &t) {
		return CouponResult{}, apperr.Wrap(apperr.Unavailable, t, t.msg)
	}
	return res, err
}

// couponCall is one try at one platform's coupon.
type couponCall struct {
	p          *platform
	collection string // the escaped path of the platform's coupons
	codeField  string // the coupon's code in the platform's objects
	search     string // the query parameter that looks a code up
	inactive   bool   // switch the coupon off (update only)
	code       string
	id         string
	body       any
	carries    func(listed map[string]json.RawMessage) bool // the listed coupon gives the discount
}

func (e *Executor) newCouponCall(provider string, settings merchant.Integration, req CouponRequest) (*couponCall, error) {
	if missing := MissingCouponSetting(provider, settings); missing != "" {
		return nil, apperr.Errorf(apperr.Unprocessable, "the %s %s is not set in the merchant's settings", provider, missing)
	}
	if strings.TrimSpace(req.Code) == "" {
		return nil, apperr.Errorf(apperr.Unprocessable, "the member has no referral code")
	}
	if err := (campaign.Rules{RefereeDiscountType: req.Discount.Type, RefereeDiscountValue: req.Discount.Value}).Validate(); err != nil || req.Discount.Type == "" {
		return nil, apperr.Errorf(apperr.Unprocessable, "the referee discount is not a valid percentage or fixed amount")
	}
	p, err := e.platformOf(provider, settings)
	if err != nil {
		return nil, err
	}
	if req.IdempotencyKey != "" {
		p.header.Set("Idempotency-Key", req.IdempotencyKey)
	}
	now := req.Now
	if now.IsZero() {
		now = time.Now()
	}
	start := now.Truncate(time.Second)
	end := start.AddDate(RefereeCouponYears, 0, 0)
	c := &couponCall{p: p, code: req.Code, id: strings.TrimSpace(req.CouponID), inactive: req.Inactive}
	if c.inactive && c.id == "" {
		return nil, apperr.Errorf(apperr.Unprocessable, "no coupon to switch off")
	}
	value := discountValue(req.Discount)
	if provider == merchant.ProviderGuru {
		p.header.Set("Authorization", "Bearer "+settings.UserToken)
		typ := map[string]string{campaign.RewardPercentage: "percent", campaign.RewardFixed: "value"}[req.Discount.Type]
		c.collection, c.codeField, c.search = "/coupons", "coupon_code", "coupon_code"
		c.body = guruCouponBody{CouponCode: req.Code, DateIni: start.Unix(), DateEnd: end.Unix(), IncidenceField: "total",
			IncidenceType: typ, IncidenceValue: value, IsActive: !req.Inactive, UsageContact: 1, UsageTotal: 0, ValidateBy: "email"}
		c.carries = func(l map[string]json.RawMessage) bool {
			return sameText(l["incidence_type"], typ) && sameAmount(l["incidence_value"], value) && !isFalse(l["is_active"])
		}
		return c, nil
	}
	p.header.Set("User-Token", settings.UserToken)
	p.header.Set("User-Secret-Key", settings.UserSecretKey)
	typ := map[string]string{campaign.RewardPercentage: "p", campaign.RewardFixed: "v"}[req.Discount.Type]
	c.collection, c.codeField, c.search = "/"+url.PathEscape(strings.TrimSpace(settings.StoreAlias))+"/pricing/promocodes", "code", "q"
	c.body = yampiCouponBody{Active: !req.Inactive, Code: req.Code, DiscountType: typ, Value: value, Quantity: yampiCouponQuantity,
		OncePerCustomer: true, Accumulate: false,
		StartAt: start.In(saoPaulo()).Format(yampiTimeLayout), EndAt: end.In(saoPaulo()).Format(yampiTimeLayout)}
	c.carries = func(l map[string]json.RawMessage) bool {
		return sameText(l["discount_type"], typ) && sameAmount(l["value"], value) && !isFalse(l["active"])
	}
	return c, nil
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

// yampiCouponBody is the body of Yampi's POST and PUT pricing/promocodes.
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

// yampiCouponQuantity is how many times a referee coupon may be used in
// all: Yampi wants a number, and a member's code has no overall limit.
const yampiCouponQuantity = 100000

// discountValue is the discount as the platforms write it: a whole
// percent, or reais with two decimals.
func discountValue(d Discount) json.RawMessage {
	if d.Type == campaign.RewardFixed {
		return json.RawMessage(money.FormatReais(d.Value))
	}
	return json.RawMessage(strconv.FormatInt(d.Value, 10))
}

func (c *couponCall) provision(ctx context.Context) (CouponResult, error) {
	if c.id != "" {
		r, err := c.update(ctx)
		if err != nil {
			return CouponResult{}, err
		}
		switch {
		case r.status != http.StatusNotFound:
			return CouponResult{CouponID: c.id}, c.p.check("PUT "+c.stepName(), r)
		case c.inactive: // deleted at the platform: nothing left to switch off
			return CouponResult{CouponID: c.id}, nil
		} // deleted at the platform: created again below
	}
	step := "POST " + c.stepName()
	r, err := c.p.send(ctx, step, http.MethodPost, c.collection, nil, c.body)
	if err != nil {
		return CouponResult{}, err
	}
	if r.status == http.StatusConflict || r.status == http.StatusUnprocessableEntity {
		return c.adopt(ctx, step, r)
	}
	if err := c.p.check(step, r); err != nil {
		return CouponResult{}, err
	}
	if id := idOf(r.body); id != "" {
		return CouponResult{CouponID: id}, nil
	}
	return CouponResult{}, apperr.Errorf(apperr.Unprocessable, "%s answered %d without the coupon's id: %s",
		c.p.name+" "+step, r.status, c.p.excerpt(r.body))
}

// update sends the coupon's body to its id.
func (c *couponCall) update(ctx context.Context) (reply, error) {
	return c.p.send(ctx, "PUT "+c.stepName(), http.MethodPut, c.collection+"/"+url.PathEscape(c.id), nil, c.body)
}

func (c *couponCall) stepName() string {
	if c.codeField == "code" {
		return "promocodes"
	}
	return "coupons"
}

// adopt looks the code up after the creation was refused with refusal: the
// coupon found is ours from now on, updated when it does not carry the
// discount. When the code is not found the refusal stands.
func (c *couponCall) adopt(ctx context.Context, step string, refusal reply) (CouponResult, error) {
	id, listed, err := c.lookup(ctx)
	if err != nil {
		return CouponResult{}, err
	}
	if id == "" {
		return CouponResult{}, c.p.check(step, refusal)
	}
	if !c.carries(listed) {
		c.id = id
		r, err := c.update(ctx)
		if err != nil {
			return CouponResult{}, err
		}
		if err := c.p.check("PUT "+c.stepName(), r); err != nil {
			return CouponResult{}, err
		}
	}
	return CouponResult{CouponID: id, Adopted: true}, nil
}

// lookup finds the coupon of the code: its id and its fields, or "" when
// the platform lists none (or refuses the search: the creation's refusal
// then stands). A transient failure is returned.
func (c *couponCall) lookup(ctx context.Context) (string, map[string]json.RawMessage, error) {
	step := "GET " + c.stepName()
	r, err := c.p.send(ctx, step, http.MethodGet, c.collection, url.Values{c.search: {c.code}}, nil)
	if err != nil {
		return "", nil, err
	}
	if err := c.p.check(step, r); err != nil {
		var t *transientError
		if errors.As(err, &t) {
			return "", nil, err
		}
		return "", nil, nil
	}
	for _, obj := range listedObjects(r.body) {
		var code string
		if json.Unmarshal(obj[c.codeField], &code) == nil && strings.EqualFold(strings.TrimSpace(code), c.code) {
			if id := idText(obj["id"]); id != "" {
				return id, obj, nil
			}
		}
	}
	return "", nil, nil
}

// listedObjects reads the coupons of a platform's answer, whichever of the
// shapes it takes: {"data": [..]}, {"data": {..}}, [..] or one object.
func listedObjects(body []byte) []map[string]json.RawMessage {
	var top json.RawMessage = body
	var wrapped struct {
		Data json.RawMessage `json:"data"`
	}
	if json.Unmarshal(body, &wrapped) == nil && len(wrapped.Data) > 0 && string(wrapped.Data) != "null" {
		top = wrapped.Data
	}
	var list []map[string]json.RawMessage
	if json.Unmarshal(top, &list) == nil {
		return list
	}
	var one map[string]json.RawMessage
	if json.Unmarshal(top, &one) == nil && one != nil {
		return []map[string]json.RawMessage{one}
	}
	return nil
}

// idOf is the id of a created coupon: "id" at the top of the answer or in
// its "data" object; "" when neither is there.
func idOf(body []byte) string {
	for _, obj := range listedObjects(body) {
		if id := idText(obj["id"]); id != "" {
			return id
		}
	}
	var top map[string]json.RawMessage
	if json.Unmarshal(body, &top) == nil {
		return idText(top["id"])
	}
	return ""
}

// idText is an id written as a JSON string or number; "" otherwise.
func idText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return strings.TrimSpace(s)
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		return n.String()
	}
	return ""
}

// sameText reports whether raw is the JSON string want (case-insensitive).
func sameText(raw json.RawMessage, want string) bool {
	var s string
	return json.Unmarshal(raw, &s) == nil && strings.EqualFold(strings.TrimSpace(s), want)
}

// sameAmount reports whether raw, a JSON number or a string of one, is
// the decimal want (10 = "10.00"; compared in hundredths, never floats).
func sameAmount(raw json.RawMessage, want json.RawMessage) bool {
	text := strings.TrimSpace(string(raw))
	var s string
	if json.Unmarshal(raw, &s) == nil {
		text = strings.TrimSpace(s)
	}
	got, err := money.ParseReais(text)
	w, werr := money.ParseReais(string(want))
	return err == nil && werr == nil && got == w
}

// isFalse reports whether raw is false, 0 or "0" (an inactive coupon).
func isFalse(raw json.RawMessage) bool {
	switch strings.Trim(strings.TrimSpace(string(raw)), `"`) {
	case "false", "0":
		return true
	}
	return false
}
