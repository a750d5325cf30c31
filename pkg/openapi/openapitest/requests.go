package openapitest

import (
	"fmt"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// MaxJSONBytesExtension bounds a free-form object of a request (a member's
// metadata) by the size of its JSON encoding, in bytes: its values cannot
// each carry a maxLength.
const MaxJSONBytesExtension = "x-max-json-bytes"

// RequestValue is a value a client sends that the document describes: a
// string, or a free-form object (one without declared properties), found
// in an operation's request body at any depth or in a query parameter.
type RequestValue struct {
	Operation string // the operationId
	Method    string // upper case
	Path      string // the document's path template
	// In is "body" or "query".
	In string
	// Field names the value as the API's error messages do: a query
	// parameter by its name, a body value by its path ("name",
	// "tiers[0].name", "events[0]", "resource.customer.data.name").
	Field string
	// Steps lead to the value in the body: object keys, and 0 for the first
	// item of an array. Empty for a query parameter.
	Steps []any
	// Object is true for a free-form object, false for a string.
	Object bool
	// Schema is the value's schema: for a string, the branch of a oneOf or
	// anyOf that is the string.
	Schema *openapi3.Schema
}

func (v RequestValue) String() string {
	return fmt.Sprintf("%s (%s %s) %s %s", v.Operation, v.Method, v.Path, v.In, v.Field)
}

// MaxLength returns the string's maxLength; ok is false when it has none.
func (v RequestValue) MaxLength() (n int, ok bool) {
	if v.Schema.MaxLength == nil {
		return 0, false
	}
	return int(*v.Schema.MaxLength), true
}

// RequestValues walks every operation of doc: its request body's schema
// (resolving $ref, allOf, oneOf and anyOf, into nested objects and array
// items) and its query parameters, and returns every string and free-form
// object found, sorted by operation, place and field. The body itself is
// not reported when it is a free-form object: it is bounded by the size of
// a request, and such bodies have no fields the API reads.
func RequestValues(doc *openapi3.T) []RequestValue {
	var out []RequestValue
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			base := RequestValue{Operation: op.OperationID, Method: strings.ToUpper(method), Path: path}
			w := &requestWalk{base: base, out: &out, seen: map[*openapi3.Schema]int{}}
			if op.RequestBody != nil && op.RequestBody.Value != nil {
				for _, mt := range op.RequestBody.Value.Content {
					w.walk("body", nil, mt.Schema)
				}
			}
			for _, p := range slices.Concat(item.Parameters, op.Parameters) {
				if p.Value != nil && p.Value.In == openapi3.ParameterInQuery {
					w.walkQuery(p.Value.Name, p.Value.Schema)
				}
			}
		}
	}
	slices.SortFunc(out, func(a, b RequestValue) int {
		return strings.Compare(a.Operation+" "+a.In+" "+a.Field, b.Operation+" "+b.In+" "+b.Field)
	})
	return slices.CompactFunc(out, func(a, b RequestValue) bool {
		return a.Operation == b.Operation && a.In == b.In && a.Field == b.Field && a.Schema == b.Schema
	})
}

type requestWalk struct {
	base RequestValue
	out  *[]RequestValue
	// seen counts the schemas on the path being walked, so that a schema
	// that contains itself is not walked forever.
	seen map[*openapi3.Schema]int
}

func (w *requestWalk) walkQuery(name string, ref *openapi3.SchemaRef) {
	v := w.base
	v.In, v.Field = "query", name
	w.value(v, ref)
}

// value reports the strings of a query parameter's schema.
func (w *requestWalk) value(v RequestValue, ref *openapi3.SchemaRef) {
	if ref == nil || ref.Value == nil {
		return
	}
	s := ref.Value
	for _, sub := range slices.Concat(s.AllOf, s.OneOf, s.AnyOf) {
		w.value(v, sub)
	}
	if s.Type.Includes(openapi3.TypeString) {
		v.Schema = s
		*w.out = append(*w.out, v)
	}
}

func (w *requestWalk) walk(in string, steps []any, ref *openapi3.SchemaRef) {
	if ref == nil || ref.Value == nil {
		return
	}
	s := ref.Value
	if w.seen[s] > 0 {
		return
	}
	w.seen[s]++
	defer func() { w.seen[s]-- }()
	for _, sub := range slices.Concat(s.AllOf, s.OneOf, s.AnyOf) {
		w.walk(in, steps, sub)
	}
	emit := func(object bool) {
		v := w.base
		v.In, v.Field, v.Steps, v.Object, v.Schema = in, fieldName(steps), slices.Clone(steps), object, s
		*w.out = append(*w.out, v)
	}
	if s.Type.Includes(openapi3.TypeString) {
		emit(false)
	}
	if s.Type.Includes(openapi3.TypeArray) && s.Items != nil {
		w.walk(in, append(slices.Clone(steps), 0), s.Items)
	}
	if !s.Type.Includes(openapi3.TypeObject) && len(s.Properties) == 0 {
		return
	}
	names := make([]string, 0, len(s.Properties))
	for name := range s.Properties {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		w.walk(in, append(slices.Clone(steps), name), s.Properties[name])
	}
	closed := s.AdditionalProperties.Has != nil && !*s.AdditionalProperties.Has
	if len(s.Properties) == 0 && !closed && len(steps) > 0 && s.Type.Includes(openapi3.TypeObject) {
		emit(true)
	}
	if s.AdditionalProperties.Schema != nil {
		w.walk(in, append(slices.Clone(steps), "*"), s.AdditionalProperties.Schema)
	}
}

// fieldName writes steps as the API's messages name a field.
func fieldName(steps []any) string {
	var b strings.Builder
	for _, st := range steps {
		switch st := st.(type) {
		case int:
			fmt.Fprintf(&b, "[%d]", st)
		case string:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(st)
		}
	}
	return b.String()
}
