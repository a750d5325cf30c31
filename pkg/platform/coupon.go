package platform

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/bounds"
	"github.com/convida/convida/pkg/money"
)

// Coupon is a discount code to hold at a platform.
type Coupon struct {
	Code string
	// Percentage makes Value a whole percent; otherwise Value is cents.
	Percentage bool
	Value      int64
	Start, End time.Time // its validity
	// ID is the platform's id of the coupon put there before: it is
	// updated; "" creates it.
	ID string
	// Inactive switches the coupon of ID off: only the update is sent, and
	// a coupon the platform no longer has needs nothing.
	Inactive bool
}

// value is the discount as the platforms write it: a whole percent, or
// reais with two decimals.
func (c Coupon) value() json.RawMessage {
	if c.Percentage {
		return json.RawMessage(strconv.FormatInt(c.Value, 10))
	}
	return json.RawMessage(money.FormatReais(c.Value))
}

// CouponResult is the coupon the platform holds after ProvisionCoupon.
type CouponResult struct {
	ID string
	// Adopted is true when the platform already had a coupon of the code
	// (an earlier try whose answer was lost, or one the merchant typed by
	// hand) and it was taken over instead of duplicated.
	Adopted bool
}

// couponCall is one try at one platform's coupon.
type couponCall struct {
	ep         *endpoint
	collection string // the escaped path of the platform's coupons
	noun       string // how messages name them: "coupons", "promocodes"
	codeField  string // the coupon's code in the platform's objects
	search     string // the query parameter that looks a code up
	coupon     Coupon
	body       any
	carries    func(listed map[string]json.RawMessage) bool // the listed coupon gives the discount
}

// provision makes one try, without retrying:
//
//   - with an ID, the coupon is updated (PUT); if the platform no longer
//     has it (404), it is created again (unless Inactive: then nothing is
//     left to switch off);
//   - otherwise it is created (POST). A 409 or 422 answer is taken as
//     "this code exists" whatever its wording: the code is looked up and
//     the coupon found is adopted, and updated when it does not carry the
//     discount. Repeating a creation whose answer was lost therefore never
//     makes a second coupon.
//
// A transient failure is a *TransientError; a refusal an Unprocessable
// *apperr.Error.
func (c *couponCall) provision(ctx context.Context) (CouponResult, error) {
	id := strings.TrimSpace(c.coupon.ID)
	if c.coupon.Inactive && id == "" {
		return CouponResult{}, apperr.Errorf(apperr.Unprocessable, "no coupon to switch off")
	}
	if id != "" {
		r, err := c.update(ctx, id)
		if err != nil {
			return CouponResult{}, err
		}
		switch {
		case r.status != http.StatusNotFound:
			return CouponResult{ID: id}, c.ep.check("PUT "+c.noun, r)
		case c.coupon.Inactive: // deleted at the platform: nothing left to switch off
			return CouponResult{ID: id}, nil
		} // deleted at the platform: created again below
	}
	step := "POST " + c.noun
	r, err := c.ep.send(ctx, request{step: step, method: http.MethodPost, path: c.collection, payload: c.body})
	if err != nil {
		return CouponResult{}, err
	}
	if r.status == http.StatusConflict || r.status == http.StatusUnprocessableEntity {
		return c.adopt(ctx, step, r)
	}
	if err := c.ep.check(step, r); err != nil {
		return CouponResult{}, err
	}
	if id := idOf(r.body); id != "" {
		return CouponResult{ID: id}, nil
	}
	return CouponResult{}, apperr.Errorf(apperr.Unprocessable, "%s answered %d without the coupon's id: %s",
		c.ep.name+" "+step, r.status, c.ep.excerpt(r.body))
}

// update sends the coupon's body to its id.
func (c *couponCall) update(ctx context.Context, id string) (reply, error) {
	return c.ep.send(ctx, request{step: "PUT " + c.noun, method: http.MethodPut, path: c.collection + "/" + url.PathEscape(id), payload: c.body})
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
		return CouponResult{}, c.ep.check(step, refusal)
	}
	if !c.carries(listed) {
		r, err := c.update(ctx, id)
		if err != nil {
			return CouponResult{}, err
		}
		if err := c.ep.check("PUT "+c.noun, r); err != nil {
			return CouponResult{}, err
		}
	}
	return CouponResult{ID: id, Adopted: true}, nil
}

// lookup finds the coupon of the code: its id and its fields, or "" when
// the platform lists none (or refuses the search: the creation's refusal
// then stands). A transient failure is returned.
func (c *couponCall) lookup(ctx context.Context) (string, map[string]json.RawMessage, error) {
	step := "GET " + c.noun
	r, err := c.ep.send(ctx, request{step: step, method: http.MethodGet, path: c.collection, query: url.Values{c.search: {c.coupon.Code}}})
	if err != nil {
		return "", nil, err
	}
	if err := c.ep.check(step, r); err != nil {
		var t *TransientError
		if errors.As(err, &t) {
			return "", nil, err
		}
		return "", nil, nil
	}
	for _, obj := range listedObjects(r.body) {
		var code string
		if json.Unmarshal(obj[c.codeField], &code) == nil && strings.EqualFold(strings.TrimSpace(code), c.coupon.Code) {
			if id := idText(obj["id"]); id != "" {
				return id, obj, nil
			}
		}
	}
	return "", nil, nil
}

// listedObjects reads the objects of a platform's answer, whichever of the
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

// idOf is the id of a created object: "id" at the top of the answer or in
// its "data" object; "" when neither is there, or when it is longer than
// any id Convida keeps (bounds.ID).
func idOf(body []byte) string {
	id := ""
	for _, obj := range listedObjects(body) {
		if id = idText(obj["id"]); id != "" {
			break
		}
	}
	var top map[string]json.RawMessage
	if id == "" && json.Unmarshal(body, &top) == nil {
		id = idText(top["id"])
	}
	if utf8.RuneCountInString(id) > bounds.ID {
		return ""
	}
	return id
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
	got, err := reaisOf(raw)
	w, werr := money.ParseReais(string(want))
	return err == nil && werr == nil && got == w
}

// reaisOf reads reais written as a JSON number or a string of one into
// cents, through the decimal text (never a float).
func reaisOf(raw json.RawMessage) (int64, error) {
	text := strings.TrimSpace(string(raw))
	var s string
	if json.Unmarshal(raw, &s) == nil {
		text = strings.TrimSpace(s)
	}
	return money.ParseReais(text)
}

// isFalse reports whether raw is false, 0 or "0" (an inactive coupon).
func isFalse(raw json.RawMessage) bool {
	switch strings.Trim(strings.TrimSpace(string(raw)), `"`) {
	case "false", "0":
		return true
	}
	return false
}
