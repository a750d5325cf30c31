package redemption

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/ids"
	"github.com/convida/convida/pkg/merchant"
	"github.com/convida/convida/pkg/money"
)

// CouponValidity is how long a Yampi coupon of a redemption is valid
// (decision 19).
const CouponValidity = 90 * 24 * time.Hour

// yampiTimeLayout is how Yampi writes start_at and end_at, in the store's
// time zone (America/Sao_Paulo).
const yampiTimeLayout = "2006-01-02 15:04:05"

// couponAlphabet is Crockford's base32: no I, L, O or U, so a code read
// aloud or typed from a screenshot is not mistaken.
const couponAlphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

// couponChars is how many base32 characters follow the prefix: 60 bits,
// so two redemptions of a store share a code with odds of about 1 in 2^30
// even after a million coupons.
const couponChars = 12

// CouponKeyInfo names, among the keys derived from SECRETS_KEY
// (secretbox.Box.DeriveKey), the key of the Yampi coupon codes
// (Executor.CouponKey).
const CouponKeyInfo = "convida yampi store-credit code v1"

// CouponCodeFor is the Yampi coupon code of a redemption: "CVD-" followed by
// 12 characters of Crockford base32 taken from HMAC-SHA256(key, id). It is
// the same on every call with one key, which is what makes creating the
// coupon safe to repeat: Yampi refuses a second coupon with the code, and
// Execute then finds the first (see Execute). The key keeps it secret: the
// redemption id is no secret (an Idempotency-Key makes it derivable), and
// a code anyone could compute from it could be spent by anyone.
//
// The key derives from SECRETS_KEY, so it changes with a rotation of
// SECRETS_KEY: a redemption whose coupon was created under the old key but
// whose answer was lost, retried after the dispatcher restarted with the
// new key, creates a second coupon (under the new code, the one reported
// to the member). The first one, whose code nobody was told and nobody
// can derive, is left unused in the store. That window is the retries of
// one redemption (REDEMPTION_RETRY_DELAYS) across the restart; a key kept
// apart from SECRETS_KEY would close it at the cost of one more secret to
// keep and rotate.
func CouponCodeFor(key []byte, redemptionID uuid.UUID) string {
	mac := hmac.New(sha256.New, key)
	mac.Write(redemptionID[:])
	sum := mac.Sum(nil)
	var bits uint64
	for _, b := range sum[:8] {
		bits = bits<<8 | uint64(b)
	}
	code := make([]byte, couponChars)
	for i := range code {
		code[i] = couponAlphabet[bits>>59] // the top 5 bits
		bits <<= 5
	}
	return "CVD-" + string(code)
}

// saoPaulo is the time zone of Yampi's dates; Brazil has had no daylight
// saving since 2019, so a fixed UTC−3 stands in when the system has no
// zone database.
var saoPaulo = sync.OnceValue(func() *time.Location {
	if loc, err := time.LoadLocation("America/Sao_Paulo"); err == nil {
		return loc
	}
	return time.FixedZone("-03", -3*60*60)
})

// yampiPromocode is the body of POST pricing/promocodes.
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

// yampi creates a single-use coupon in a Yampi store.
type yampi struct {
	p       *platform
	alias   string
	cents   int64
	body    yampiPromocode
	expires time.Time
}

func (e *Executor) newYampi(settings merchant.Integration, req Request) (*yampi, error) {
	if missing := MissingSetting(TypeStoreCredit, settings); missing != "" {
		return nil, apperr.Errorf(apperr.Unprocessable, "the yampi %s is not set in the merchant's settings", missing)
	}
	if len(e.CouponKey) == 0 {
		return nil, errors.New("redemption: the executor has no coupon key (Executor.CouponKey)")
	}
	p, err := e.newPlatform(merchant.ProviderYampi, settings, req)
	if err != nil {
		return nil, err
	}
	p.header.Set("User-Token", settings.UserToken)
	p.header.Set("User-Secret-Key", settings.UserSecretKey)

	now := req.Now
	if now.IsZero() {
		now = time.Now()
	}
	start := now.Truncate(time.Second).In(saoPaulo())
	end := start.Add(CouponValidity)
	desc := "Convida " + ids.Format(ids.Redemption, req.RedemptionID)
	if req.MemberEmail != "" {
		desc += " " + req.MemberEmail
	}
	y := &yampi{
		p:     p,
		alias: strings.TrimSpace(settings.StoreAlias),
		cents: req.Amount,
		body: yampiPromocode{
			Active: true, Code: CouponCodeFor(e.CouponKey, req.RedemptionID), Description: desc,
			DiscountType: "v", Value: json.RawMessage(money.FormatReais(req.Amount)),
			Quantity: 1, OncePerCustomer: true,
			StartAt: start.Format(yampiTimeLayout), EndAt: end.Format(yampiTimeLayout),
		},
		expires: end.UTC(),
	}
	return y, nil
}

func (y *yampi) platformName() string { return y.p.name }

func (y *yampi) result() Result {
	return Result{CouponCode: y.body.Code, ExpiresAt: y.expires}
}

func (y *yampi) path() string { return "/" + url.PathEscape(y.alias) + "/pricing/promocodes" }

// attempt creates the coupon. Yampi answers 422 to a code already taken:
// after an earlier attempt (or an earlier Execute) whose answer was lost,
// that coupon is ours, so a 422 is a success when the coupon can be found
// with our code and amount, and a refusal otherwise.
func (y *yampi) attempt(ctx context.Context) (Result, error) {
	const step = "POST promocodes"
	r, err := y.p.send(ctx, step, http.MethodPost, y.path(), nil, y.body)
	if err != nil {
		return Result{}, err
	}
	if r.status == http.StatusUnprocessableEntity {
		found, err := y.exists(ctx)
		if err != nil {
			return Result{}, err
		}
		if found {
			return y.result(), nil
		}
	}
	if err := y.p.check(step, r); err != nil {
		return Result{}, err
	}
	return y.result(), nil
}

// exists looks for the coupon with GET pricing/promocodes?q=<code>. It is
// false, with no error, when the search does not show a coupon of that code
// and amount, or refuses (a 4xx): the POST's refusal then stands. A
// transient failure is returned, so the attempt is retried.
func (y *yampi) exists(ctx context.Context) (bool, error) {
	const step = "GET promocodes"
	r, err := y.p.send(ctx, step, http.MethodGet, y.path(), url.Values{"q": {y.body.Code}}, nil)
	if err != nil {
		return false, err
	}
	if err := y.p.check(step, r); err != nil {
		var transient *transientError
		if errors.As(err, &transient) {
			return false, err
		}
		return false, nil
	}
	return y.listed(r.body), nil
}

// yampiListedCoupon is what exists reads of a coupon in Yampi's answer.
type yampiListedCoupon struct {
	Code  string          `json:"code"`
	Value json.RawMessage `json:"value"`
}

// listed reports whether body ({"data": [coupons]} or {"data": coupon})
// holds our code with our amount. A value Yampi writes as a number or a
// string of reais must match; an absent value is accepted, since the code
// alone derives from this redemption.
func (y *yampi) listed(body []byte) bool {
	var answer struct {
		Data json.RawMessage `json:"data"`
	}
	if json.Unmarshal(body, &answer) != nil || len(answer.Data) == 0 {
		return false
	}
	var coupons []yampiListedCoupon
	if json.Unmarshal(answer.Data, &coupons) != nil {
		var one yampiListedCoupon
		if json.Unmarshal(answer.Data, &one) != nil {
			return false
		}
		coupons = []yampiListedCoupon{one}
	}
	for _, c := range coupons {
		if strings.EqualFold(c.Code, y.body.Code) && y.sameValue(c.Value) {
			return true
		}
	}
	return false
}

func (y *yampi) sameValue(raw json.RawMessage) bool {
	if len(raw) == 0 || string(raw) == "null" {
		return true
	}
	text := string(raw)
	if raw[0] == '"' && json.Unmarshal(raw, &text) != nil {
		return false
	}
	cents, err := money.ParseReais(strings.TrimSpace(text))
	return err == nil && cents == y.cents
}
