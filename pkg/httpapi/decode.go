package httpapi

import (
	"encoding/json"
	"errors"
	"io"
	"math"
	"net/http"
	"net/mail"
	"reflect"
	"strconv"
	"strings"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/ids"
	"github.com/google/uuid"
	"github.com/gorilla/mux"
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
	return nil
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

// validEmail reports whether s is a bare email address.
func validEmail(s string) bool {
	if len(s) > 254 {
		return false
	}
	a, err := mail.ParseAddress(s)
	return err == nil && a.Address == s && a.Name == ""
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

func required(field, value string) error {
	if strings.TrimSpace(value) == "" {
		return apperr.Errorf(apperr.Invalid, "%s: is required", field)
	}
	return nil
}
