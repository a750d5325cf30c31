package platform

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/convida/convida/pkg/netguard"
	"github.com/convida/convida/pkg/redemption"
)

// answer is one scripted answer of a fake platform.
type answer struct {
	status int
	header map[string]string
	body   string
	hangup bool          // close the connection without answering
	stall  time.Duration // wait this long (or until the client gives up) first
}

// seen is one request a fake platform received.
type seen struct {
	Method string
	Path   string // escaped
	Query  string
	Header http.Header
	Body   []byte
}

// fakePlatform is a local HTTP server playing Guru or Yampi: each route
// ("METHOD /escaped/path") answers from its script in order, repeating the
// last answer; unknown routes answer 404.
type fakePlatform struct {
	t      testing.TB
	srv    *httptest.Server
	conns  atomic.Int64 // connections accepted
	mu     sync.Mutex
	routes map[string][]answer
	served map[string]int
	seen   []seen
}

func newFakePlatform(t testing.TB, routes map[string][]answer) *fakePlatform {
	t.Helper()
	return startFakePlatform(t, routes, false)
}

// startFakePlatform starts a fake platform, over TLS (httptest's
// certificate, which no client here trusts) when tls is true.
func startFakePlatform(t testing.TB, routes map[string][]answer, tls bool) *fakePlatform {
	t.Helper()
	f := &fakePlatform{t: t, routes: routes, served: map[string]int{}}
	f.srv = httptest.NewUnstartedServer(http.HandlerFunc(f.serve))
	f.srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			f.conns.Add(1)
		}
	}
	if tls {
		f.srv.StartTLS()
	} else {
		f.srv.Start()
	}
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakePlatform) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	route := r.Method + " " + r.URL.EscapedPath()
	f.mu.Lock()
	f.seen = append(f.seen, seen{Method: r.Method, Path: r.URL.EscapedPath(), Query: r.URL.RawQuery, Header: r.Header.Clone(), Body: body})
	script := f.routes[route]
	n := f.served[route]
	f.served[route]++
	f.mu.Unlock()
	if len(script) == 0 {
		http.Error(w, `{"message":"no such route in the fake"}`, http.StatusNotFound)
		return
	}
	a := script[min(n, len(script)-1)]
	if a.stall > 0 {
		select {
		case <-time.After(a.stall):
		case <-r.Context().Done():
			return
		}
	}
	if a.hangup {
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.Close()
		}
		return
	}
	for k, v := range a.header {
		w.Header().Set(k, v)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(a.status)
	io.WriteString(w, a.body)
}

// requests returns the requests received so far.
func (f *fakePlatform) requests() []seen {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]seen(nil), f.seen...)
}

// count is how many requests reached route.
func (f *fakePlatform) count(route string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.served[route]
}

// sleepRecorder is an injected Executor.Sleep that records each pause and
// returns at once (or ctx.Err() when ctx has ended).
type sleepRecorder struct {
	mu     sync.Mutex
	pauses []time.Duration
	hook   func() // runs on each pause, e.g. to cancel a context
}

func (s *sleepRecorder) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.pauses = append(s.pauses, d)
	hook := s.hook
	s.mu.Unlock()
	if hook != nil {
		hook()
	}
	return ctx.Err()
}

func (s *sleepRecorder) recorded() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.pauses...)
}

// testCouponKey keys the test executors' Yampi coupon codes.
var testCouponKey = []byte("0123456789abcdef0123456789abcdef")

// fastPolicy retries quickly; with the injected sleep nothing waits anyway.
func fastPolicy() redemption.RetryPolicy {
	return redemption.RetryPolicy{Attempts: 5, Delays: []time.Duration{time.Millisecond, 2 * time.Millisecond, 3 * time.Millisecond, 4 * time.Millisecond}}
}

// newTestExecutor returns an Executor with policy, a recording sleep and a
// client of its own, so that no connection is shared between tests. The
// client allows private networks, explicitly: the fakes are on loopback,
// which the Executor's default client refuses.
func newTestExecutor(t testing.TB, policy redemption.RetryPolicy) (*Executor, *sleepRecorder) {
	rec := &sleepRecorder{}
	e := NewExecutor(loopbackClient(t), policy)
	e.Sleep = rec.sleep
	e.CouponKey = testCouponKey
	return e, rec
}

// loopbackClient is a netguard client that may reach the local fakes.
func loopbackClient(t testing.TB) *http.Client {
	c := netguard.NewClient(netguard.Config{AllowPrivateNetworks: true}, 0)
	t.Cleanup(c.CloseIdleConnections)
	return c
}
