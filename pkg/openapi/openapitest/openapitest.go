// Package openapitest holds the code and the OpenAPI document to each other
// in tests: an HTTP client whose every response is validated against the
// document (the status is documented for the operation, the documented
// headers are present and well formed, the body matches the schema), and a
// record of which documented responses the tests exercised.
//
//	v := openapitest.New(t)
//	client := v.Client(srv.URL) // use it for every call to srv
//	...
//	v.WantExercised(t, openapitest.Exercise{Operation: "createMember", Status: 201})
//
// A mismatch fails the test with tb.Errorf naming the request, the
// operation, the status and the validation error; the response is still
// returned unchanged, so the test goes on and reports its own findings too.
package openapitest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"github.com/convida/convida/pkg/openapi"
)

// Exercise is one documented response: an operation and a status.
type Exercise struct {
	Operation string // the operationId
	Status    int
}

func (e Exercise) String() string { return e.Operation + " " + strconv.Itoa(e.Status) }

func compareExercises(a, b Exercise) int {
	if c := strings.Compare(a.Operation, b.Operation); c != 0 {
		return c
	}
	return a.Status - b.Status
}

// spec is the loaded document and its router, shared read-only by every
// Validator of the test binary: loading validates the whole document.
type spec struct {
	doc    *openapi3.T
	router routers.Router
	opts   []openapi3.SchemaValidationOption
}

var loadSpec = sync.OnceValues(func() (*spec, error) {
	doc, err := openapi.Load()
	if err != nil {
		return nil, err
	}
	// Route by path alone: the document's servers name the development
	// hosts, the tests' servers listen on random loopback ports.
	doc.Servers = nil
	for _, item := range doc.Paths.Map() {
		item.Servers = nil
	}
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		return nil, fmt.Errorf("openapitest: router: %w", err)
	}
	return &spec{doc: doc, router: router, opts: doc.GetSchemaValidationOptions()}, nil
})

// Validator validates responses against the document and records the
// documented responses it saw. It is safe for concurrent use.
type Validator struct {
	tb   testing.TB
	spec *spec

	mu   sync.Mutex
	seen map[Exercise]int
}

// New returns a Validator reporting to tb. It fails tb at once (Fatalf)
// when the document does not load.
func New(tb testing.TB) *Validator {
	tb.Helper()
	s, err := loadSpec()
	if err != nil {
		tb.Fatalf("openapitest: %v", err)
	}
	return &Validator{tb: tb, spec: s, seen: map[Exercise]int{}}
}

// Client returns a client of a new Validator reporting to tb: see
// (*Validator).Client.
func Client(tb testing.TB, base string) *http.Client {
	tb.Helper()
	return New(tb).Client(base)
}

// Client returns an HTTP client that validates every response of a request
// to base (a server's root URL, such as httptest.Server.URL) and passes
// other requests through unchecked.
func (v *Validator) Client(base string) *http.Client {
	next := http.DefaultTransport.(*http.Transport).Clone()
	v.tb.Cleanup(next.CloseIdleConnections)
	return &http.Client{Transport: v.Transport(base, next)}
}

// Transport returns a RoundTripper that sends requests through next and
// validates the responses of those to base. Use it to wrap the transport of
// httptest.Server.Client() for a TLS server.
func (v *Validator) Transport(base string, next http.RoundTripper) http.RoundTripper {
	u, err := url.Parse(strings.TrimRight(base, "/"))
	if err != nil || u.Host == "" {
		v.tb.Fatalf("openapitest: base %q is not an absolute URL", base)
	}
	return &transport{v: v, base: u, next: next}
}

type transport struct {
	v    *Validator
	base *url.URL
	next http.RoundTripper
}

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	if err != nil || !t.covers(req.URL) {
		return resp, err
	}
	body, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil {
		return nil, fmt.Errorf("openapitest: reading the response body: %w", err)
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	routed := req.Clone(context.Background())
	routed.URL.Path = strings.TrimPrefix(req.URL.Path, t.base.Path)
	routed.URL.RawPath = ""
	if err := t.v.Validate(routed, resp.StatusCode, resp.Header, body); err != nil {
		t.v.tb.Errorf("openapitest: %s %s → %d: %v\nresponse body: %s",
			req.Method, req.URL.RequestURI(), resp.StatusCode, err, abbreviate(body))
	}
	return resp, nil
}

// covers reports whether u is on the validated server.
func (t *transport) covers(u *url.URL) bool {
	return u.Scheme == t.base.Scheme && u.Host == t.base.Host && strings.HasPrefix(u.Path, t.base.Path)
}

// Validate checks one response to req (whose URL path is the path of the
// document, e.g. /api/v1/members) and records it as exercised. It returns
// an error naming the operation when the route or the method is not
// documented, the status is not documented for the operation, the status is
// 500 (decision 9: no input may produce one), a documented header is
// missing or malformed, or the body does not match the schema (or is
// present where none is documented). Use it directly on the answers of an
// httptest.ResponseRecorder.
func (v *Validator) Validate(req *http.Request, status int, header http.Header, body []byte) error {
	route, params, err := v.spec.router.FindRoute(req)
	switch {
	case errors.Is(err, routers.ErrMethodNotAllowed):
		return fmt.Errorf("undocumented operation: the document has path %s but not method %s", req.URL.Path, req.Method)
	case errors.Is(err, routers.ErrPathNotFound):
		return fmt.Errorf("undocumented route: no path of the document matches %s %s", req.Method, req.URL.Path)
	case err != nil:
		return fmt.Errorf("routing %s %s: %w", req.Method, req.URL.Path, err)
	}
	op := route.Operation.OperationID
	v.record(Exercise{Operation: op, Status: status})
	if status == http.StatusInternalServerError {
		return fmt.Errorf("%s answered 500, which no request may cause", op)
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route},
		Status:                 status,
		Header:                 header,
		Options: &openapi3filter.Options{
			IncludeResponseStatus:   true,
			MultiError:              true,
			SchemaValidationOptions: v.spec.opts,
		},
	}
	in.SetBodyBytes(body)
	if err := openapi3filter.ValidateResponse(context.Background(), in); err != nil {
		return fmt.Errorf("%s %d does not match the document: %w", op, status, err)
	}
	if ref := route.Operation.Responses.Status(status); ref != nil && ref.Value != nil &&
		len(ref.Value.Content) == 0 && len(bytes.TrimSpace(body)) > 0 {
		return fmt.Errorf("%s %d has a body where the document has none", op, status)
	}
	return nil
}

func (v *Validator) record(e Exercise) {
	v.mu.Lock()
	v.seen[e]++
	v.mu.Unlock()
	shareExercise(e)
}

// Exercised returns the documented operations and statuses this Validator
// saw, sorted.
func (v *Validator) Exercised() []Exercise {
	v.mu.Lock()
	defer v.mu.Unlock()
	out := make([]Exercise, 0, len(v.seen))
	for e := range v.seen {
		out = append(out, e)
	}
	slices.SortFunc(out, compareExercises)
	return out
}

// Missing returns the documented responses of the operations named (every
// operation when none is named) that this Validator has not seen, sorted.
func (v *Validator) Missing(operations ...string) []Exercise {
	v.mu.Lock()
	defer v.mu.Unlock()
	var out []Exercise
	for _, e := range Responses(v.tb) {
		if (len(operations) == 0 || slices.Contains(operations, e.Operation)) && v.seen[e] == 0 {
			out = append(out, e)
		}
	}
	return out
}

// WantExercised fails tb (Errorf) for each of want this Validator has not
// seen, and for each of want the document does not have.
func (v *Validator) WantExercised(tb testing.TB, want ...Exercise) {
	tb.Helper()
	documented := Responses(tb)
	v.mu.Lock()
	defer v.mu.Unlock()
	for _, e := range want {
		if !slices.Contains(documented, e) {
			tb.Errorf("openapitest: %s is not a documented response", e)
			continue
		}
		if v.seen[e] == 0 {
			tb.Errorf("openapitest: %s was not exercised; exercised: %v", e, v.exercisedLocked())
		}
	}
}

func (v *Validator) exercisedLocked() []Exercise {
	out := make([]Exercise, 0, len(v.seen))
	for e := range v.seen {
		out = append(out, e)
	}
	slices.SortFunc(out, compareExercises)
	return out
}

// Responses returns every documented response of the document (each
// operation with each of its statuses), sorted.
func Responses(tb testing.TB) []Exercise {
	tb.Helper()
	s, err := loadSpec()
	if err != nil {
		tb.Fatalf("openapitest: %v", err)
	}
	var out []Exercise
	for _, item := range s.doc.Paths.Map() {
		for _, op := range item.Operations() {
			for code := range op.Responses.Map() {
				status, err := strconv.Atoi(code)
				if err != nil {
					continue // "default" or a range such as "5XX": the document has none
				}
				out = append(out, Exercise{Operation: op.OperationID, Status: status})
			}
		}
	}
	slices.SortFunc(out, compareExercises)
	return out
}

// Operation is one operation of the document.
type Operation struct {
	ID     string // the operationId
	Method string // upper case
	Path   string // the document's path template, e.g. /api/v1/members/{id}
}

// Operations returns every operation of the document, sorted by path and
// method.
func Operations(tb testing.TB) []Operation {
	tb.Helper()
	s, err := loadSpec()
	if err != nil {
		tb.Fatalf("openapitest: %v", err)
	}
	var out []Operation
	for path, item := range s.doc.Paths.Map() {
		for method, op := range item.Operations() {
			out = append(out, Operation{ID: op.OperationID, Method: strings.ToUpper(method), Path: path})
		}
	}
	slices.SortFunc(out, func(a, b Operation) int {
		if c := strings.Compare(a.Path, b.Path); c != 0 {
			return c
		}
		return strings.Compare(a.Method, b.Method)
	})
	return out
}

// abbreviate keeps error messages readable when a body is large (the
// document itself, a long list).
func abbreviate(body []byte) string {
	const limit = 2048
	b := bytes.TrimSpace(body)
	if len(b) <= limit {
		return string(b)
	}
	return string(b[:limit]) + fmt.Sprintf("… (%d bytes)", len(b))
}
