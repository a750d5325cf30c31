package inbound

import (
	"bytes"
	stdjson "encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	json "github.com/goccy/go-json"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/bounds"
	"github.com/convida/convida/pkg/money"
)

// maxReason bounds how much of a platform's value an ignore reason repeats.
const maxReason = 64

// decode decodes the single JSON value in raw into v, a typed value whose
// amounts are json.Number fields (no interface{} field: its numbers would
// be float64). Trailing data after the value is an error. It decodes with
// goccy/go-json, a drop-in for encoding/json about three times faster on
// the platforms' bodies (docs/benchmarks.md): decoding is most of a
// delivery's work in the ingest.
func decode(raw []byte, v any) error {
	// Unmarshal refuses trailing data as well, and is the fast way: the
	// stream decoder below, kept for a body that fails (for its errors),
	// costs a decoder and its buffers per body.
	if json.Unmarshal(raw, v) == nil {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		// As the standard library's, so that decodeStd, which decodes a
		// failed body again, adds the path of the fields around it.
		if te, ok := errors.AsType[*json.UnmarshalTypeError](err); ok {
			return &stdjson.UnmarshalTypeError{Value: te.Value, Type: te.Type, Offset: te.Offset, Struct: te.Struct, Field: te.Field}
		}
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("trailing data after the JSON value")
	}
	return nil
}

// decodeStd is decode with encoding/json.
func decodeStd(raw []byte, v any) error {
	dec := stdjson.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("trailing data after the JSON value")
	}
	return nil
}

// object is a JSON object whose members are decoded on demand.
type object map[string]json.RawMessage

// parseObject returns raw as an object, or Unprocessable unless raw is one
// JSON object.
func parseObject(raw []byte) (object, error) {
	var obj object
	if err := decode(raw, &obj); err != nil || obj == nil {
		return nil, &apperr.Error{Code: apperr.Unprocessable, Message: "body is not a JSON object", Err: err}
	}
	return obj, nil
}

// stringAt returns the string at the path of keys under o, or "" when any
// step is absent, null or of another type. Adapters use it to authenticate
// and route a delivery before decoding what only some events carry.
func (o object) stringAt(path ...string) string {
	last := len(path) - 1
	for _, key := range path[:last] {
		var next object
		if json.Unmarshal(o[key], &next) != nil {
			return ""
		}
		o = next
	}
	var s string
	if json.Unmarshal(o[path[last]], &s) != nil {
		return ""
	}
	return s
}

// isObject reports whether raw starts as a JSON object (a decoding into a
// struct also takes null).
func isObject(raw []byte) bool {
	trimmed := bytes.TrimLeft(raw, " \t\r\n")
	return len(trimmed) > 0 && trimmed[0] == '{'
}

// decodeBody decodes the JSON object raw into v and describes a failure as
// Unprocessable, naming the field when the decoder knows it.
func decodeBody(raw []byte, v any) error {
	err := decode(raw, v)
	if err == nil {
		return nil
	}
	// The standard library names a field by its whole path (contact.email),
	// goccy/go-json by its last key: a body that failed is decoded again,
	// the slow way, for the answer to name the field as the platform's
	// documentation does.
	if stdErr := decodeStd(raw, v); stdErr != nil {
		err = stdErr
	}
	msg := "body does not have the expected shape"
	if te, ok := errors.AsType[*stdjson.UnmarshalTypeError](err); ok && te.Field != "" {
		msg = fmt.Sprintf("field %s has the wrong type (%s)", te.Field, te.Value)
	}
	return &apperr.Error{Code: apperr.Unprocessable, Message: msg, Err: err}
}

// slug normalises a routing value (status, event, alias) for comparison.
func slug(s string) string { return strings.ToLower(strings.TrimSpace(s)) }

// ignore is the Outcome of a valid delivery this service does not act on.
// The value is cut at a character boundary: the reason is stored as text.
func ignore(format, value string) Outcome {
	if cut := bounds.Cut(value, maxReason); cut != value {
		value = cut + "..."
	}
	return Outcome{Ignored: true, Reason: fmt.Sprintf(format, value)}
}

// cents converts a reais amount to cents. A missing amount, a negative one
// or one with more than two decimals is Unprocessable, naming field.
func cents(n json.Number, field string) (int64, error) {
	if n == "" {
		return 0, apperr.Errorf(apperr.Unprocessable, "%s is required", field)
	}
	c, err := money.ParseReais(n.String())
	if err != nil {
		return 0, &apperr.Error{Code: apperr.Unprocessable, Message: field + ": " + apperr.MessageOf(err), Err: err}
	}
	return c, nil
}

// parseTime parses value with layout, in loc when the layout has no offset.
// An empty value is the zero time: the platform sent no time and the caller
// uses the receipt time. Anything else that does not parse is Unprocessable.
func parseTime(field, value, layout string, loc *time.Location) (time.Time, error) {
	value = strings.TrimSpace(value)
	if value == "" {
		return time.Time{}, nil
	}
	t, err := time.ParseInLocation(layout, value, loc)
	if err != nil {
		return time.Time{}, &apperr.Error{Code: apperr.Unprocessable, Message: field + " is not a time in the format " + layout, Err: err}
	}
	return t.UTC(), nil
}

// complete normalises ev the same way for every provider: text is trimmed
// and cut to its bound (platformText), the currency defaults to BRL, the
// order id (named idField in errors) is required and refused over bounds.ID
// characters, and the dedupe key is derived.
//
// The order id is the one value refused rather than cut: it is the dedupe
// key, and cutting two long ids that share their first 255 characters would
// make two orders one. No platform sends such an id (Guru's are UUIDs,
// Yampi's integers), so refusing it (422) loses no real sale.
func complete(ev *OrderEvent, idField string) (*OrderEvent, error) {
	ev.OrderID = strings.TrimSpace(ev.OrderID)
	if ev.OrderID == "" {
		return nil, apperr.Errorf(apperr.Unprocessable, "%s is required", idField)
	}
	if utf8.RuneCountInString(ev.OrderID) > bounds.ID {
		return nil, apperr.Errorf(apperr.Unprocessable, "%s: must be at most %d characters (it is the order's identity)", idField, bounds.ID)
	}
	ev.Currency = strings.ToUpper(platformText(ev.Currency, bounds.ID))
	if ev.Currency == "" {
		ev.Currency = "BRL"
	}
	ev.CouponCode = platformText(ev.CouponCode, bounds.ID)
	ev.ReferralCode = platformText(ev.ReferralCode, bounds.ID)
	ev.CouponID = platformText(ev.CouponID, bounds.ID)
	ev.SubscriptionID = platformText(ev.SubscriptionID, bounds.ID)
	ev.Customer = Customer{
		Name:     platformText(ev.Customer.Name, bounds.Name),
		Email:    platformText(ev.Customer.Email, bounds.Email),
		Document: platformText(ev.Customer.Document, bounds.ID),
	}
	ev.DedupeKey = CommandID(ev.Provider, ev.OrderID, ev.Kind)
	return ev, nil
}

// platformText is a value copied from a platform's webhook, trimmed and cut
// to max characters: it is never refused for its length (a platform cannot
// fix its payload), and never carried on longer than the API would accept
// it, so the referral stored and the events published stay small. A cut
// coupon code matches no member (member codes are far shorter).
func platformText(s string, max int) string {
	return strings.TrimSpace(bounds.Cut(strings.TrimSpace(s), max))
}

// maybe is an optional JSON object. null, absence and an empty array (how
// PHP platforms encode an empty map, e.g. Yampi's "promocode": {"data": []})
// all leave V zero; a non-empty array or a scalar is an error.
type maybe[T any] struct{ V T }

func (m *maybe[T]) UnmarshalJSON(b []byte) error {
	switch {
	case string(b) == "null":
		return nil
	case len(b) > 0 && b[0] == '[':
		var items []json.RawMessage
		if err := json.Unmarshal(b, &items); err != nil {
			return err
		}
		if len(items) > 0 {
			return errors.New("expected an object or an empty array, got a non-empty array")
		}
		return nil
	}
	return decode(b, &m.V)
}

// text is an identifier or document sent as a JSON string or as a
// non-negative JSON integer (kept as its decimal text, so 42 and "42" are the
// same id). null leaves it empty; any other value is an error.
type text string

func (t *text) UnmarshalJSON(b []byte) error {
	switch {
	case string(b) == "null":
		return nil
	case len(b) > 0 && b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*t = text(s)
		return nil
	case !isDigits(b):
		return errors.New("expected a string or a non-negative integer")
	}
	*t = text(b)
	return nil
}

func isDigits(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
