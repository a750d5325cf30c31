package redemption

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/merchant"
	"github.com/convida/convida/pkg/money"
)

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

// guru adds a one-cycle discount to a Guru subscription.
type guru struct {
	p      *platform
	subID  string
	amount json.RawMessage // reais with two decimals, a JSON number
}

// guruDiscountBody is the body of PUT increment-discount.
type guruDiscountBody struct {
	StartCycle int64        `json:"start_cycle"`
	Discount   guruDiscount `json:"discount"`
}

type guruDiscount struct {
	Value  json.RawMessage `json:"value"`
	Cycles int             `json:"cycles"`
}

// guruCycles is how many cycles one redemption discounts (decision 19).
const guruCycles = 1

func (e *Executor) newGuru(settings merchant.Integration, req Request) (*guru, error) {
	switch missing := MissingSetting(TypeSubscriptionDiscount, settings); {
	case missing != "":
		return nil, apperr.Errorf(apperr.Unprocessable, "the guru %s is not set in the merchant's settings", missing)
	case strings.TrimSpace(req.SubscriptionID) == "":
		return nil, apperr.Errorf(apperr.Unprocessable, "the redemption has no guru subscription id")
	}
	p, err := e.newPlatform(merchant.ProviderGuru, settings, req)
	if err != nil {
		return nil, err
	}
	p.header.Set("Authorization", "Bearer "+settings.UserToken)
	return &guru{p: p, subID: req.SubscriptionID, amount: json.RawMessage(money.FormatReais(req.Amount))}, nil
}

func (g *guru) platformName() string { return g.p.name }

// attempt reads the subscription anew each time, so that a retry after a
// charge that happened meanwhile still discounts the next cycle.
func (g *guru) attempt(ctx context.Context) (Result, error) {
	path := "/subscriptions/" + url.PathEscape(g.subID)
	const readStep, discountStep = "GET subscription", "PUT increment-discount"
	r, err := g.p.send(ctx, readStep, http.MethodGet, path, nil, nil)
	if err != nil {
		return Result{}, err
	}
	if err := g.p.check(readStep, r); err != nil {
		return Result{}, err
	}
	billed, ok := billedCycles(r.body)
	if !ok {
		return Result{}, apperr.Errorf(apperr.Unprocessable,
			"guru subscription %s does not state its current cycle (charged_times, current_cycle or cycle): %s",
			clip(g.subID, 60), g.p.excerpt(r.body))
	}
	body := guruDiscountBody{StartCycle: billed + 1, Discount: guruDiscount{Value: g.amount, Cycles: guruCycles}}
	r, err = g.p.send(ctx, discountStep, http.MethodPut, path+"/increment-discount", nil, body)
	if err != nil {
		return Result{}, err
	}
	if err := g.p.check(discountStep, r); err != nil {
		return Result{}, err
	}
	return Result{AppliedCycles: guruCycles}, nil
}

// billedCycles finds the cycle already billed in Guru's subscription
// object (see guruCycleFields); ok is false when none is usable.
//
// Guessing cycle 1 instead would risk a discount on a cycle already
// charged, which the member would never see; failing returns the money.
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
