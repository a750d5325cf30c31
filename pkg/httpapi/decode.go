package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/gorilla/mux"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/ids"
)

// maxBody is the largest accepted request body (decision 9).
const maxBody = 1 << 20

// decode reads a JSON object body into v. Unknown fields are ignored;
// malformed JSON, a wrong type or a body over 1 MiB are errors naming the
// problem (400 validation_error, 413 payload_too_large).
func decode(w http.ResponseWriter, r *http.Request, v any) error {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return apperr.Errorf(apperr.PayloadTooLarge, "request body over 1 MiB")
		}
		return apperr.Errorf(apperr.Invalid, "cannot read request body")
	}
	return decodeBytes(body, v)
}

// decodeBytes is decode for a body already read.
func decodeBytes(body []byte, v any) error {
	if len(strings.TrimSpace(string(body))) == 0 {
		body = []byte("{}")
	}
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return jsonError(err)
	}
	if dec.More() {
		return apperr.Errorf(apperr.Invalid, "request body must be one JSON object")
	}
	return storable(body)
}

// maxNumberText bounds the text of a JSON number: PostgreSQL's numeric (and
// so jsonb) refuses some longer ones.
const maxNumberText = 100

// storable refuses, naming the field, what PostgreSQL cannot store and would
// otherwise fail with a 500: a string or key holding NUL (text and jsonb
// reject it) and a number outside float64's range or longer than
// maxNumberText characters (jsonb's numeric overflows). It runs on a body
// that already decoded, so type errors keep their own messages.
func storable(body []byte) error {
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return nil // decodeBytes reported it
	}
	return storableValue(doc, "")
}

func storableValue(v any, path string) error {
	field := func(key string) string {
		if path == "" {
			return key
		}
		return path + "." + key
	}
	switch v := v.(type) {
	case string:
		if strings.ContainsRune(v, 0) {
			return apperr.Errorf(apperr.Invalid, "%s: must not contain NUL characters", path)
		}
	case json.Number:
		f, err := strconv.ParseFloat(v.String(), 64)
		mantissa, _, _ := strings.Cut(strings.ToLower(v.String()), "e")
		underflow := f == 0 && strings.Trim(mantissa, "-+0.") != ""
		if err != nil || underflow || len(v) > maxNumberText {
			return apperr.Errorf(apperr.Invalid, "%s: number out of range", path)
		}
	case map[string]any:
		for k, e := range v {
			if strings.ContainsRune(k, 0) {
				return apperr.Errorf(apperr.Invalid, "%s: keys must not contain NUL characters", strings.ReplaceAll(field(k), "\x00", ""))
			}
			if err := storableValue(e, field(k)); err != nil {
				return err
			}
		}
	case []any:
		for i, e := range v {
			if err := storableValue(e, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	}
	return nil
}

// validText reports whether s can be stored as PostgreSQL text: valid UTF-8
// without NUL.
func validText(s string) bool {
	return utf8.ValidString(s) && !strings.ContainsRune(s, 0)
}

func jsonError(err error) error {
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	switch {
	case errors.As(err, &typeErr):
		if typeErr.Field == "" {
			return apperr.Errorf(apperr.Invalid, "request body must be a JSON object")
		}
		return apperr.Errorf(apperr.Invalid, "%s: must be %s", typeErr.Field, jsonKind(typeErr.Type.Kind().String()))
	case errors.As(err, &syntaxErr), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return apperr.Errorf(apperr.Invalid, "request body is not valid JSON")
	}
	var fe *fieldError
	if errors.As(err, &fe) {
		return apperr.Errorf(apperr.Invalid, "%s", fe.msg)
	}
	return apperr.Errorf(apperr.Invalid, "request body is not valid: %s", err.Error())
}

func jsonKind(k string) string {
	switch k {
	case "string":
		return "a string"
	case "bool":
		return "a boolean"
	case "map", "struct":
		return "an object"
	case "slice", "array":
		return "an array"
	case "int", "int64", "int32":
		return "an integer"
	}
	return "a " + k
}

type fieldError struct{ msg string }

func (e *fieldError) Error() string { return e.msg }

// Int is a JSON integer field that knows whether it was present and null.
type Int struct {
	Set   bool // present in the body (even as null)
	Null  bool
	Value int64
}

// UnmarshalJSON accepts an integer or null; 10.0 and 1e3 are refused, so a
// fractional amount can never be truncated.
func (i *Int) UnmarshalJSON(b []byte) error {
	i.Set = true
	s := string(b)
	if s == "null" {
		i.Null = true
		return nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		if _, ferr := strconv.ParseFloat(s, 64); ferr == nil {
			return &json.UnmarshalTypeError{Value: "number " + s, Type: intType}
		}
		return &json.UnmarshalTypeError{Value: s, Type: intType}
	}
	i.Value = n
	return nil
}

var intType = reflect.TypeOf(int64(0))

// Optional is a JSON field that knows whether it was present.
type Optional[T any] struct {
	Set   bool
	Value T
}

// UnmarshalJSON records presence and decodes the value; null counts as
// absent.
func (o *Optional[T]) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil
	}
	o.Set = true
	return json.Unmarshal(b, &o.Value)
}

// pathID parses the {id} of the route with the admin prefix; a malformed id
// is 404 (decision 5).
func pathID(r *http.Request, prefix, what string) (uuid.UUID, error) {
	id, ok := ids.Parse(prefix, mux.Vars(r)["id"])
	if !ok {
		return uuid.Nil, apperr.Errorf(apperr.NotFound, "%s not found", what)
	}
	return id, nil
}

// page reads page and per_page (decision 11): page ≥ 1 (default 1),
// per_page 1–100 (default 20).
func page(r *http.Request) (pageNum, perPage int, err error) {
	if pageNum, err = intQuery(r, "page", 1, 1, math.MaxInt32); err != nil {
		return 0, 0, err
	}
	if perPage, err = intQuery(r, "per_page", 20, 1, 100); err != nil {
		return 0, 0, err
	}
	return pageNum, perPage, nil
}

func intQuery(r *http.Request, name string, def, lo, hi int) (int, error) {
	s := r.URL.Query().Get(name)
	if s == "" {
		return def, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < lo || n > hi {
		return 0, apperr.Errorf(apperr.Invalid, "%s: must be an integer from %d to %d", name, lo, hi)
	}
	return n, nil
}

// Pagination is the pagination object of admin lists.
type Pagination struct {
	Page       int `json:"page"`
	PerPage    int `json:"per_page"`
	Total      int `json:"total"`
	TotalPages int `json:"total_pages"`
}

func pagination(pageNum, perPage, total int) Pagination {
	return Pagination{Page: pageNum, PerPage: perPage, Total: total, TotalPages: (total + perPage - 1) / perPage}
}

// List is the envelope of admin lists.
type List[T any] struct {
	Data       []T        `json:"data"`
	Pagination Pagination `json:"pagination"`
}

// listOf is the page of items, each shown by view, in the admin lists'
// envelope.
func listOf[T, V any](items []T, view func(*T) V, pageNum, perPage, total int) List[V] {
	out := List[V]{Data: make([]V, len(items)), Pagination: pagination(pageNum, perPage, total)}
	for i := range items {
		out.Data[i] = view(&items[i])
	}
	return out
}

// Data is the envelope of single resources.
type Data[T any] struct {
	Data T `json:"data"`
}

func boolQuery(r *http.Request, name string) (bool, error) {
	switch strings.ToLower(r.URL.Query().Get(name)) {
	case "", "false", "0":
		return false, nil
	case "true", "1":
		return true, nil
	}
	return false, apperr.Errorf(apperr.Invalid, "%s: must be true or false", name)
}

// objectField decodes a raw JSON object field, keeping integers exact. ok
// is false when the field is absent or null.
func objectField(field string, raw json.RawMessage) (obj map[string]any, ok bool, err error) {
	if raw == nil || string(raw) == "null" {
		return nil, false, nil
	}
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.UseNumber()
	if err := dec.Decode(&obj); err != nil || obj == nil {
		return nil, false, apperr.Errorf(apperr.Invalid, "%s: must be an object", field)
	}
	return obj, true, nil
}

// intField returns the value of a present, non-null integer field.
// NullableString is a string field where null means "clear it" (Value ""),
// unlike Optional, where null counts as absent.
type NullableString struct {
	Set   bool
	Value string
}

// UnmarshalJSON records presence; null is the empty string.
func (n *NullableString) UnmarshalJSON(b []byte) error {
	n.Set = true
	if string(b) == "null" {
		return nil
	}
	return json.Unmarshal(b, &n.Value)
}

func nilIfEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func intField(i Int) (int64, bool) { return i.Value, i.Set && !i.Null }

func ptr[T any](v T) *T { return &v }
