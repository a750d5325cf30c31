package e2e

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/convida/convida/pkg/openapi/openapitest"
)

// probe is one request: path from the server's root, query included.
type probe struct {
	method, path string
	body         []byte
	header       map[string]string
}

// reply is what a probe got back.
type reply struct {
	status int
	header http.Header
	body   map[string]any
}

func (r reply) code() string {
	e, _ := r.body["error"].(map[string]any)
	c, _ := e["code"].(string)
	return c
}

func (r reply) data() map[string]any {
	d, _ := r.body["data"].(map[string]any)
	return d
}

// checker sends probes to one server through a validating client.
type checker struct {
	v      *openapitest.Validator
	client *http.Client
	base   string
}

func newChecker(t *testing.T, base string) *checker {
	v := openapitest.New(t)
	return &checker{v: v, client: v.Client(base), base: base}
}

// send is safe to call from any goroutine: a transport error is reported
// with Errorf and answered as status 0.
func (c *checker) send(t *testing.T, p probe) reply {
	t.Helper()
	var body io.Reader
	if p.body != nil {
		body = bytes.NewReader(p.body)
	}
	req, err := http.NewRequest(p.method, c.base+p.path, body)
	if err != nil {
		t.Errorf("%s %s: %v", p.method, p.path, err)
		return reply{}
	}
	if p.body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range p.header {
		req.Header.Set(k, v)
	}
	res, err := c.client.Do(req)
	if err != nil {
		t.Errorf("%s %s: %v", p.method, p.path, err)
		return reply{}
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	out := reply{status: res.StatusCode, header: res.Header}
	_ = json.Unmarshal(raw, &out.body)
	return out
}

// expect sends p and checks the status and, unless empty, the error code.
func (c *checker) expect(t *testing.T, p probe, status int, code string) reply {
	t.Helper()
	r := c.send(t, p)
	if r.status != status {
		t.Errorf("%s %s = %d %v, want %d %s", p.method, shorten(p.path), r.status, r.body, status, code)
		return r
	}
	if code != "" && r.code() != code {
		t.Errorf("%s %s = %d %v, want code %s", p.method, shorten(p.path), r.status, r.body, code)
	}
	return r
}

func shorten(s string) string {
	if len(s) > 120 {
		return s[:120] + "…"
	}
	return s
}

// keyed returns a probe's headers with an API key (X-API-Key) and more.
func keyed(key string, more ...string) map[string]string {
	h := map[string]string{"X-API-Key": key}
	for i := 0; i+1 < len(more); i += 2 {
		h[more[i]] = more[i+1]
	}
	return h
}

func jsonBody(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// hugeBody is a JSON object just over the 1 MiB limit.
func hugeBody() []byte {
	return append(append([]byte(`{"pad":"`), bytes.Repeat([]byte("a"), 1<<20)...), `"}`...)
}

// memberFacing reports whether a path is of the member-facing or
// creator-facing interface, whose error codes are upper case.
func memberFacing(path string) bool {
	return strings.HasPrefix(path, "/api/v1/member/") || strings.HasPrefix(path, "/api/v1/wallet/") || creatorFacing(path)
}

// creatorFacing reports whether a path is a creator operation, whose
// credential is the token in its path rather than an API key.
func creatorFacing(path string) bool { return strings.HasPrefix(path, "/api/v1/creators/") }

// styled spells an admin error code in the style of the path's interface.
func styled(path, code string) string {
	if memberFacing(path) {
		return strings.ToUpper(code)
	}
	return code
}

// keyedAPI reports whether a document path is an operation that takes an
// API key (member-facing, administrative and webhook management).
func keyedAPI(path string) bool {
	return (strings.HasPrefix(path, "/api/v1/") && path != "/api/v1/openapi.json" && !creatorFacing(path)) || strings.HasPrefix(path, "/v1/webhooks")
}

// documented returns the operations of the document that list status,
// among those keep accepts.
func documented(t *testing.T, status int, keep func(openapitest.Operation) bool) []openapitest.Operation {
	t.Helper()
	has := map[string]bool{}
	for _, e := range openapitest.Responses(t) {
		if e.Status == status {
			has[e.Operation] = true
		}
	}
	var out []openapitest.Operation
	for _, op := range openapitest.Operations(t) {
		if has[op.ID] && keep(op) {
			out = append(out, op)
		}
	}
	if len(out) == 0 {
		t.Fatalf("the document lists no operation answering %d", status)
	}
	return out
}

// fill replaces the path parameters of a document path.
func fill(path string, params map[string]string) string {
	for k, v := range params {
		path = strings.ReplaceAll(path, "{"+k+"}", v)
	}
	return path
}
