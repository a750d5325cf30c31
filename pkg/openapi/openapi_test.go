package openapi_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/convida/convida/pkg/openapi"
)

func mustLoad(t *testing.T) *openapi3.T {
	t.Helper()
	doc, err := openapi.Load()
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return doc
}

func TestLoad(t *testing.T) {
	doc := mustLoad(t)
	if doc.OpenAPI != "3.1.0" || !doc.IsOpenAPI31OrLater() {
		t.Errorf("openapi = %q, want 3.1.0", doc.OpenAPI)
	}
	if doc.Info.Title != "Convida" {
		t.Errorf("info.title = %q, want Convida", doc.Info.Title)
	}
	for _, name := range []string{"ApiKeyHeader", "BearerAuth"} {
		if doc.Components.SecuritySchemes[name] == nil {
			t.Errorf("security scheme %s missing", name)
		}
	}
}

func TestDocumentIsTheYAMLAsJSON(t *testing.T) {
	b, err := openapi.Document()
	if err != nil {
		t.Fatalf("Document: %v", err)
	}
	again, _ := openapi.Document()
	if &b[0] != &again[0] {
		t.Error("Document() computed the document again")
	}
	if !json.Valid(b) {
		t.Fatal("Document() is not JSON")
	}
	loader := openapi3.NewLoader()
	fromJSON, err := loader.LoadFromData(b)
	if err != nil {
		t.Fatalf("the JSON does not load: %v", err)
	}
	if err := fromJSON.Validate(loader.Context); err != nil {
		t.Fatalf("the JSON does not validate: %v", err)
	}
	want := mustLoad(t)
	wantJSON, _ := json.Marshal(want)
	gotJSON, _ := json.Marshal(fromJSON)
	if !bytes.Equal(wantJSON, gotJSON) {
		t.Error("the JSON document differs from the YAML one once loaded")
	}
	if got, want := fromJSON.Paths.Len(), want.Paths.Len(); got != want || got == 0 {
		t.Errorf("JSON has %d paths, YAML %d", got, want)
	}
}

// operation is an operation of the document with where it is.
type operation struct {
	method, path string
	op           *openapi3.Operation
}

func operations(doc *openapi3.T) []operation {
	var out []operation
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			out = append(out, operation{method: method, path: path, op: op})
		}
	}
	slices.SortFunc(out, func(a, b operation) int { return strings.Compare(a.path+" "+a.method, b.path+" "+b.method) })
	return out
}

// authenticated reports whether the operation needs the API key (it
// inherits the document's security).
func authenticated(o operation) bool { return o.op.Security == nil || len(*o.op.Security) > 0 }

func hasParam(o operation, item *openapi3.PathItem, in, name string) bool {
	for _, p := range append(slices.Clone(item.Parameters), o.op.Parameters...) {
		if p.Value != nil && p.Value.In == in && strings.EqualFold(p.Value.Name, name) {
			return true
		}
	}
	return false
}

// TestConventions holds every operation to the rules the info section
// promises: operationId, tag, errors in the envelope with examples, the
// key's 401 and 429, rate-limit headers, Idempotency-Key on POST and PATCH.
func TestConventions(t *testing.T) {
	doc := mustLoad(t)
	seen := map[string]bool{}
	for _, o := range operations(doc) {
		name := o.method + " " + o.path
		item := doc.Paths.Value(o.path)
		if o.op.OperationID == "" || seen[o.op.OperationID] {
			t.Errorf("%s: operationId %q empty or repeated", name, o.op.OperationID)
		}
		seen[o.op.OperationID] = true
		if len(o.op.Tags) == 0 || o.op.Summary == "" {
			t.Errorf("%s: want a tag and a summary", name)
		}
		api := strings.HasPrefix(o.path, "/api/v1/")
		if authenticated(o) {
			// 400: checkQuery refuses a query parameter PostgreSQL
			// text cannot hold on every authenticated route.
			// 503: every one reads the database (the key, at least).
			for _, status := range []int{400, 401, 429, 500, 503} {
				if o.op.Responses.Status(status) == nil {
					t.Errorf("%s: an authenticated operation must document %d", name, status)
				}
			}
		}
		if api && authenticated(o) && (o.method == http.MethodPost || o.method == http.MethodPatch) {
			if !hasParam(o, item, "header", "Idempotency-Key") {
				t.Errorf("%s: want the Idempotency-Key header parameter", name)
			}
			if o.op.RequestBody == nil {
				t.Errorf("%s: want a request body", name)
			}
		}
		for code, ref := range o.op.Responses.Map() {
			resp := ref.Value
			where := name + " " + code
			switch {
			case code == "default" || strings.HasSuffix(code, "XX"):
				t.Errorf("%s: document each status; a catch-all hides drift", where)
			case code >= "400" && o.op.OperationID != "getReadyz": // its 503 is the readiness report
				checkErrorResponse(t, where, resp)
			case code == "304" || code == "204": // 204: DELETE /v1/webhooks/{id} (spec 4.3)
			default:
				if len(resp.Content) == 0 {
					t.Errorf("%s: a success response without content", where)
				}
			}
			if code == "429" || (code == "503" && o.op.OperationID != "getReadyz") {
				if h := resp.Headers["Retry-After"]; h == nil || !h.Value.Required {
					t.Errorf("%s: want the required Retry-After header", where)
				}
			}
			if authenticated(o) && code != "401" && code != "500" {
				for _, h := range []string{"RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset"} {
					if resp.Headers[h] == nil {
						t.Errorf("%s: want the %s header", where, h)
					}
				}
			}
			if api && authenticated(o) && code < "300" && (o.method == http.MethodPost || o.method == http.MethodPatch) {
				if resp.Headers["Idempotent-Replayed"] == nil {
					t.Errorf("%s: want the Idempotent-Replayed header", where)
				}
			}
		}
	}
}

// checkErrorResponse wants the error envelope, narrowed to the codes of the
// response, and an example.
func checkErrorResponse(t *testing.T, where string, resp *openapi3.Response) {
	t.Helper()
	mt := resp.Content.Get("application/json")
	if mt == nil || mt.Schema == nil {
		t.Errorf("%s: want an application/json error body", where)
		return
	}
	s := mt.Schema.Value
	if len(s.AllOf) != 2 || s.AllOf[0].Ref != "#/components/schemas/Error" {
		t.Errorf("%s: want allOf [Error, the codes of this response]", where)
	} else if code := s.AllOf[1].Value.Properties["error"]; code == nil || code.Value.Properties["code"] == nil || len(code.Value.Properties["code"].Value.Enum) == 0 {
		t.Errorf("%s: want the codes of this response as an enum of error.code", where)
	}
	if mt.Example == nil && len(mt.Examples) == 0 {
		t.Errorf("%s: want an example", where)
	}
}

// optional are the fields of response objects that may be absent; every
// other property of a response object is required.
var optional = map[string]bool{
	"IngestAnswer.reason":                 true, // omitted when accepted
	"RedemptionMetadata.applied_cycles":   true, // completed Guru redemptions only
	"RedemptionMetadata.failure_reason":   true, // failed redemptions only
	"getOpenAPIDocument 200 body.openapi": true, // not ours to close
}

// TestResponseObjectsAreClosed wants every object of a response body to
// list its properties, require them, and refuse others, so that a stray or
// missing field of the code fails the contract tests.
func TestResponseObjectsAreClosed(t *testing.T) {
	doc := mustLoad(t)
	visited := map[*openapi3.Schema]bool{}
	var walk func(where string, ref *openapi3.SchemaRef)
	walk = func(where string, ref *openapi3.SchemaRef) {
		if ref == nil || ref.Value == nil {
			return
		}
		if ref.Ref != "" {
			where = strings.TrimPrefix(ref.Ref, "#/components/schemas/")
		}
		s := ref.Value
		if visited[s] {
			return
		}
		visited[s] = true
		for _, sub := range slices.Concat(s.AllOf, s.OneOf, s.AnyOf) {
			walk(where, sub)
		}
		if s.Items != nil {
			walk(where+"[]", s.Items)
		}
		// Untyped schemas only narrow another (the codes of an error
		// response): the object they narrow is checked on its own.
		if len(s.Properties) == 0 || !s.Type.Is("object") {
			return
		}
		closed := s.AdditionalProperties.Has != nil && !*s.AdditionalProperties.Has
		if !closed && where != "getOpenAPIDocument 200 body" {
			t.Errorf("%s: a response object must have additionalProperties: false", where)
		}
		for name, p := range s.Properties {
			if !slices.Contains(s.Required, name) && !optional[where+"."+name] {
				t.Errorf("%s.%s: a response field must be required (or listed as optional in this test)", where, name)
			}
			walk(where+"."+name, p)
		}
	}
	for _, o := range operations(doc) {
		for code, ref := range o.op.Responses.Map() {
			for _, mt := range ref.Value.Content {
				walk(o.op.OperationID+" "+code+" body", mt.Schema)
			}
		}
	}
}
