package platform

import (
	"encoding/json"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/bounds"
	"github.com/convida/convida/pkg/inbound"
	"github.com/convida/convida/pkg/provider"
)

// maxPages bounds one pull, so that a platform that always says "more"
// cannot keep it going forever.
const maxPages = 10_000

// finish trims and bounds the texts of s, and fills its platform and
// default currency.
func finish(s inbound.Sale, platform string) inbound.Sale {
	cut := func(v string, n int) string { return bounds.Cut(strings.TrimSpace(v), n) }
	s.Platform = platform
	s.OrderID = cut(s.OrderID, bounds.ID)
	s.Status = cut(s.Status, bounds.ID)
	s.BuyerEmail = cut(s.BuyerEmail, bounds.Email)
	s.BuyerName = cut(s.BuyerName, bounds.Name)
	s.BuyerDocument = cut(s.BuyerDocument, bounds.ID)
	s.Currency = strings.ToUpper(cut(s.Currency, bounds.ID))
	if s.Currency == "" {
		s.Currency = "BRL"
	}
	s.CouponCode = cut(s.CouponCode, bounds.ID)
	s.ReferralCode = cut(s.ReferralCode, bounds.ID)
	s.PromocodeID = cut(s.PromocodeID, bounds.ID)
	s.SubscriptionID = cut(s.SubscriptionID, bounds.ID)
	return s
}

// text is an identifier sent as a JSON string or number, kept as text.
type text string

func (t *text) UnmarshalJSON(b []byte) error {
	*t = text(idText(b))
	return nil
}

// object is T when the JSON is an object, and the zero T for anything
// else (null, [], a string): the platforms write "nothing" many ways.
type object[T any] struct{ V T }

func (o *object[T]) UnmarshalJSON(b []byte) error {
	if len(b) == 0 || b[0] != '{' {
		return nil
	}
	return json.Unmarshal(b, &o.V)
}

// flag is a boolean written as true/false, 1/0 or a string of either.
type flag bool

func (f *flag) UnmarshalJSON(b []byte) error {
	switch strings.Trim(strings.TrimSpace(string(b)), `"`) {
	case "true", "1":
		*f = true
	default:
		*f = false
	}
	return nil
}

// reais reads an amount in reais written as a JSON number or a string of
// one, through its decimal text (never a float: 97.9 is 9790 cents).
func reais(raw json.RawMessage, field string) (int64, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return 0, apperr.Errorf(apperr.Unprocessable, "%s is missing", field)
	}
	c, err := reaisOf(raw)
	if err != nil {
		return 0, apperr.Wrap(apperr.Unprocessable, err, field+": "+apperr.MessageOf(err))
	}
	return c, nil
}

// centavos reads an integer amount of cents, a JSON number or a string.
func centavos(raw json.RawMessage, field string) (int64, error) {
	n, err := strconv.ParseInt(strings.Trim(strings.TrimSpace(string(raw)), `"`), 10, 64)
	if err != nil || n < 0 {
		return 0, apperr.Errorf(apperr.Unprocessable, "%s is not a whole number of cents", field)
	}
	return n, nil
}

// epoch reads a date written as Unix time in unit (time.Second or
// time.Millisecond), as a JSON number or a string of digits; an RFC 3339
// string is accepted too. null or absent is the zero time.
func epoch(raw json.RawMessage, unit time.Duration, field string) (time.Time, error) {
	s := strings.TrimSpace(string(raw))
	if s == "" || s == "null" || s == `""` {
		return time.Time{}, nil
	}
	s = strings.Trim(s, `"`)
	if n, err := strconv.ParseInt(s, 10, 64); err == nil && n > 0 {
		if unit == time.Millisecond {
			return time.UnixMilli(n).UTC(), nil
		}
		return time.Unix(n, 0).UTC(), nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t.UTC(), nil
	}
	return time.Time{}, apperr.Errorf(apperr.Unprocessable, "%s is not a date: %s", field, Clip(s, 40))
}

// localTime reads a date written in one of layouts, in loc when the text
// has no offset; "" is the zero time.
func localTime(s string, loc *time.Location, field string, layouts ...string) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, nil
	}
	for _, l := range layouts {
		if t, err := time.ParseInLocation(l, s, loc); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, apperr.Errorf(apperr.Unprocessable, "%s is not a date: %s", field, Clip(s, 40))
}

// unreadable is s with the problem err, for an item of a page that could
// not be read whole.
func unreadable(s inbound.Sale, err error) inbound.Sale {
	s.Problem = apperr.MessageOf(err)
	return s
}

// cloneWith is q with key set to value, q itself unchanged.
func cloneWith(q url.Values, key, value string) url.Values {
	c := make(url.Values, len(q)+1)
	for k, v := range q {
		c[k] = v
	}
	c.Set(key, value)
	return c
}

// morePages reports whether a numbered list has a page after page n,
// which held got items of a full page's size: by the total of pages the
// answer states, or, when it states none, by whether the page was full.
func morePages(totalPages json.Number, n, got, size int) bool {
	if got == 0 {
		return false
	}
	if total, err := strconv.Atoi(totalPages.String()); err == nil {
		return n < total
	}
	return got >= size
}

// checkWindow refuses a window the platform's pull cannot take at once
// (provider.Descriptor.PullWindow).
func checkWindow(w inbound.Window, platform string) error {
	d, _ := provider.Lookup(platform)
	return w.Check(platform, d.PullWindow)
}

// defaultURL is the platform's public URL of the setting named setting.
func defaultURL(platform, setting string) string {
	d, _ := provider.Lookup(platform)
	s, _ := d.Setting(setting)
	return s.Default
}
