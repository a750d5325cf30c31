package platform

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/convida/convida/pkg/inbound"
	"github.com/convida/convida/pkg/netguard"
)

// fakeAPI is a local server playing a platform's API: routes
// ("METHOD /path") answer with their handler; each request is recorded.
// throttleOnce makes the first request of a route answer 429 with
// Retry-After: 1, as the platforms do when a limit is reached.
type fakeAPI struct {
	t        testing.TB
	srv      *httptest.Server
	mu       sync.Mutex
	routes   map[string]http.HandlerFunc
	throttle map[string]bool // routes still to answer 429 once
	seen     []seenRequest
}

type seenRequest struct {
	Method, Path string
	Query        url.Values
	Header       http.Header
	Body         string
}

func newFakeAPI(t testing.TB, routes map[string]http.HandlerFunc) *fakeAPI {
	t.Helper()
	f := &fakeAPI{t: t, routes: routes, throttle: map[string]bool{}}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeAPI) throttleOnce(route string) *fakeAPI {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.throttle[route] = true
	return f
}

func (f *fakeAPI) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	route := r.Method + " " + r.URL.Path
	f.mu.Lock()
	f.seen = append(f.seen, seenRequest{Method: r.Method, Path: r.URL.Path, Query: r.URL.Query(), Header: r.Header.Clone(), Body: string(body)})
	h, throttled := f.routes[route], f.throttle[route]
	delete(f.throttle, route)
	f.mu.Unlock()
	switch {
	case throttled:
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(http.StatusTooManyRequests)
		io.WriteString(w, `{"message":"Too Many Attempts."}`)
	case h == nil:
		http.Error(w, `{"message":"no such route in the fake"}`, http.StatusNotFound)
	default:
		r.Body = io.NopCloser(bytes.NewReader(body))
		h(w, r)
	}
}

// requests returns the requests of route received so far.
func (f *fakeAPI) requests(route string) []seenRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []seenRequest
	for _, s := range f.seen {
		if s.Method+" "+s.Path == route {
			out = append(out, s)
		}
	}
	return out
}

// writeJSON answers v as JSON.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// rawJSON is JSON written as is (a number like 97.9 stays that text).
type rawJSON = json.RawMessage

// pauses records the client's pauses without waiting.
type pauses struct {
	mu sync.Mutex
	d  []time.Duration
}

func (p *pauses) sleep(ctx context.Context, d time.Duration) error {
	p.mu.Lock()
	p.d = append(p.d, d)
	p.mu.Unlock()
	return ctx.Err()
}

func (p *pauses) all() []time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]time.Duration(nil), p.d...)
}

// testClient is a Client that may reach the local fakes (loopback, plain
// http, explicitly allowed) and records its pauses.
func testClient(t testing.TB) (*Client, *pauses) {
	hc := netguard.NewClient(netguard.Config{AllowPrivateNetworks: true}, 0)
	t.Cleanup(hc.CloseIdleConnections)
	p := &pauses{}
	return &Client{HTTP: hc, Sleep: p.sleep}, p
}

// collect runs a pull and returns every sale of every page.
func collect(t *testing.T, pull func(ctx context.Context, w inbound.Window, page inbound.Page) error, w inbound.Window) []inbound.Sale {
	t.Helper()
	var all []inbound.Sale
	if err := pull(context.Background(), w, func(s []inbound.Sale) error { all = append(all, s...); return nil }); err != nil {
		t.Fatalf("pull: %v", err)
	}
	return all
}

// window is 25–27 Nov 2026 in São Paulo.
var window = inbound.Window{
	From: time.Date(2026, 11, 25, 3, 0, 0, 0, time.UTC),
	To:   time.Date(2026, 11, 28, 2, 59, 59, 0, time.UTC),
}

// wantOnePause checks that the pull waited once, the second the fake's
// Retry-After asked.
func wantOnePause(t *testing.T, p *pauses) {
	t.Helper()
	if got := p.all(); len(got) != 1 || got[0] != time.Second {
		t.Errorf("pauses = %v, want one of 1s (the 429's Retry-After)", got)
	}
}

// bySale indexes sales by order id, failing on a duplicate.
func bySale(t *testing.T, sales []inbound.Sale) map[string]inbound.Sale {
	t.Helper()
	m := map[string]inbound.Sale{}
	for _, s := range sales {
		if _, dup := m[s.OrderID]; dup {
			t.Errorf("order %s listed twice", s.OrderID)
		}
		m[s.OrderID] = s
	}
	return m
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
