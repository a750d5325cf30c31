package httpapi_test

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/gorilla/mux"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/httpapi"
	"github.com/convida/convida/pkg/respond"
)

// TestIdempotentCreates: the same key and body replay the first answer with
// Idempotent-Replayed: true and create nothing more; another body or path
// is 422; keys are per merchant.
func TestIdempotentCreates(t *testing.T) {
	t.Parallel()
	env := mustProtectedEnv(t, protectedOpts{})
	tn := env.mustTenant(t)

	first := tn.send(t, http.MethodPost, "/api/v1/campaigns", "camp-1", campaignBody)
	wantStatus(t, first, http.StatusCreated)
	if v := first.header.Get("Idempotent-Replayed"); v != "" {
		t.Errorf("first answer: Idempotent-Replayed = %q, want none", v)
	}
	again := tn.send(t, http.MethodPost, "/api/v1/campaigns", "camp-1", campaignBody)
	wantReplay(t, first, again)
	if n := tn.count(t, "campaigns"); n != 1 {
		t.Errorf("campaigns = %d, want 1", n)
	}

	memberBody := map[string]any{"email": "bia@example.com", "name": "Bia"}
	first = tn.send(t, http.MethodPost, "/api/v1/members", "mem-1", memberBody)
	wantStatus(t, first, http.StatusCreated)
	for range 2 {
		wantReplay(t, first, tn.send(t, http.MethodPost, "/api/v1/members", "mem-1", memberBody))
	}
	if n := tn.count(t, "members"); n != 1 {
		t.Errorf("members = %d, want 1", n)
	}

	// The same key with another body, or on another path, is refused.
	r := tn.send(t, http.MethodPost, "/api/v1/members", "mem-1", map[string]any{"email": "bia@example.com", "name": "Bia Souza"})
	wantError(t, r, http.StatusUnprocessableEntity, "idempotency_key_reused", "Idempotency-Key")
	r = tn.send(t, http.MethodPost, "/api/v1/campaigns", "mem-1", memberBody)
	wantError(t, r, http.StatusUnprocessableEntity, "idempotency_key_reused", "")
	if n := tn.count(t, "members"); n != 1 {
		t.Errorf("members = %d, want 1", n)
	}

	// Without a key nothing is replayed: the database refuses the duplicate.
	r = tn.send(t, http.MethodPost, "/api/v1/members", "-", memberBody)
	wantError(t, r, http.StatusConflict, "email_exists", "")

	// The same key from another merchant is another key.
	other := env.mustTenant(t)
	other.mustCampaign(t, campaignBody)
	r = other.send(t, http.MethodPost, "/api/v1/members", "mem-1", memberBody)
	wantStatus(t, r, http.StatusCreated)
	if v := r.header.Get("Idempotent-Replayed"); v != "" {
		t.Errorf("other merchant: Idempotent-Replayed = %q, want none", v)
	}
	if str(t, r, "data.id") == str(t, first, "data.id") {
		t.Errorf("other merchant got the first merchant's member %s", str(t, r, "data.id"))
	}
}

// wantReplay checks that replay repeats first with Idempotent-Replayed.
func wantReplay(tb testing.TB, first, replay reply) {
	tb.Helper()
	if replay.status != first.status || !bytes.Equal(replay.raw, first.raw) {
		tb.Errorf("replay = %s, want %s", replay, first)
	}
	if v := replay.header.Get("Idempotent-Replayed"); v != "true" {
		tb.Errorf("replay: Idempotent-Replayed = %q, want true", v)
	}
	if a, b := replay.header.Get("Content-Type"), first.header.Get("Content-Type"); a != b {
		tb.Errorf("replay: Content-Type = %q, want %q", a, b)
	}
}

// TestIdempotentRefusalsAreKept: a 4xx is kept and replayed like a success
// (a corrected request needs a new key), so a client that retries a refused
// request sees the same refusal.
func TestIdempotentRefusalsAreKept(t *testing.T) {
	t.Parallel()
	env := mustProtectedEnv(t, protectedOpts{})
	tn := env.mustTenant(t)
	tn.mustCampaign(t, campaignBody)

	bad := map[string]any{"name": "Caio"}
	first := tn.send(t, http.MethodPost, "/api/v1/members", "bad-1", bad)
	wantError(t, first, http.StatusBadRequest, "validation_error", "email")
	wantReplay(t, first, tn.send(t, http.MethodPost, "/api/v1/members", "bad-1", bad))

	r := tn.send(t, http.MethodPost, "/api/v1/members", "bad-1", map[string]any{"name": "Caio", "email": "caio@example.com"})
	wantError(t, r, http.StatusUnprocessableEntity, "idempotency_key_reused", "")
	r = tn.send(t, http.MethodPost, "/api/v1/members", "bad-2", map[string]any{"name": "Caio", "email": "caio@example.com"})
	wantStatus(t, r, http.StatusCreated)
}

// TestIdempotencyKeyHeader: the header is validated on POST and PATCH and
// ignored elsewhere; a body over 1 MiB is 413 before anything is kept.
func TestIdempotencyKeyHeader(t *testing.T) {
	t.Parallel()
	env := mustProtectedEnv(t, protectedOpts{})
	tn := env.mustTenant(t)

	for _, key := range []string{"", strings.Repeat("k", 256), strings.Repeat("é", 256)} {
		r := tn.send(t, http.MethodPost, "/api/v1/campaigns", key, campaignBody)
		wantError(t, r, http.StatusBadRequest, "validation_error", "Idempotency-Key")
	}
	r := tn.send(t, http.MethodPost, "/api/v1/campaigns", "a", campaignBody)
	wantStatus(t, r, http.StatusCreated)
	long := strings.Repeat("é", 255)
	wantStatus(t, tn.send(t, http.MethodPost, "/api/v1/campaigns", long, campaignBody), http.StatusCreated)
	wantReplay(t, r, tn.send(t, http.MethodPost, "/api/v1/campaigns", "a", campaignBody))

	huge := `{"name": "` + strings.Repeat("x", 1<<20) + `"}`
	tooLarge := tn.send(t, http.MethodPost, "/api/v1/campaigns", "huge", huge)
	wantError(t, tooLarge, http.StatusRequestEntityTooLarge, "payload_too_large", "")

	// A GET with the header is served as ever, never replayed.
	id := str(t, r, "data.id")
	for range 2 {
		r := tn.send(t, http.MethodGet, "/api/v1/campaigns/"+id, "get-1", nil)
		wantStatus(t, r, http.StatusOK)
		if v := r.header.Get("Idempotent-Replayed"); v != "" {
			t.Errorf("GET: Idempotent-Replayed = %q, want none", v)
		}
	}
}

// gate is a handler that holds every request until it is opened.
type gate struct {
	calls   atomic.Int32
	entered chan struct{}
	open    chan struct{}
	once    sync.Once
}

func newGate(tb testing.TB) *gate {
	g := &gate{entered: make(chan struct{}, 16), open: make(chan struct{})}
	tb.Cleanup(g.release) // a failing test must not leave the server hanging
	return g
}

func (g *gate) release() { g.once.Do(func() { close(g.open) }) }

func (g *gate) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	n := g.calls.Add(1)
	g.entered <- struct{}{}
	<-g.open
	w.Header().Set("Location", fmt.Sprintf("/test/things/%d", n))
	respond.JSON(w, http.StatusCreated, map[string]any{"data": map[string]any{"call": n}})
}

// TestIdempotencyConcurrentDuplicate: of two requests with the same key at
// once, one runs and the other is 409 while it does; afterwards the answer
// (with its Location) is replayed.
func TestIdempotencyConcurrentDuplicate(t *testing.T) {
	t.Parallel()
	var current atomic.Pointer[gate]
	held := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { current.Load().ServeHTTP(w, r) })
	env := mustProtectedEnv(t, protectedOpts{routes: func(s *httpapi.Server, r *mux.Router) {
		r.Handle("/test/things", s.Protected(respond.Admin, held)).Methods(http.MethodPost, http.MethodPatch)
		r.Handle("/test/member-things", s.Protected(respond.Member, held)).Methods(http.MethodPost)
	}})
	tn := env.mustTenant(t)

	for _, tc := range []struct {
		method, path, inUse string
	}{
		{http.MethodPost, "/test/things", "idempotency_key_in_use"},
		{http.MethodPatch, "/test/things", "idempotency_key_in_use"},
		{http.MethodPost, "/test/member-things", "IDEMPOTENCY_KEY_IN_USE"},
	} {
		key := "same-" + tc.method + tc.path
		g := newGate(t)
		current.Store(g)
		body := map[string]any{"n": 1}
		replies := make(chan reply, 2)
		for range 2 {
			go func() {
				r, err := env.try(request{method: tc.method, path: tc.path, body: body,
					header: map[string]string{"X-API-Key": tn.key, "Idempotency-Key": key}})
				if err != nil {
					t.Errorf("%s %s: %v", tc.method, tc.path, err)
				}
				replies <- r
			}()
		}
		// One request holds the key inside the handler, so the only answer
		// that can come before the handler is released is the other's.
		conflict := <-replies
		wantError(t, conflict, http.StatusConflict, tc.inUse, "")
		select {
		case <-g.entered:
		case r := <-replies:
			t.Fatalf("%s %s: both answered (%s) and none is in the handler", tc.method, tc.path, r)
		}
		g.release()
		done := <-replies
		wantStatus(t, done, http.StatusCreated)
		if got := g.calls.Load(); got != 1 {
			t.Errorf("%s %s: handler ran %d times, want 1", tc.method, tc.path, got)
		}
		replay := tn.send(t, tc.method, tc.path, key, body)
		wantReplay(t, done, replay)
		if loc := replay.header.Get("Location"); loc != "/test/things/1" {
			t.Errorf("%s %s: replayed Location = %q, want /test/things/1", tc.method, tc.path, loc)
		}
		// Another body with the same key is refused, in the route's style.
		r := tn.send(t, tc.method, tc.path, key, map[string]any{"n": 2})
		reused := strings.NewReplacer("in_use", "reused", "IN_USE", "REUSED").Replace(tc.inUse)
		wantError(t, r, http.StatusUnprocessableEntity, reused, "")
	}
	// The same key with another method is another request: refused.
	r := tn.send(t, http.MethodPost, "/test/things", "same-"+http.MethodPatch+"/test/things", map[string]any{"n": 1})
	wantError(t, r, http.StatusUnprocessableEntity, "idempotency_key_reused", "")
	if got := current.Load().calls.Load(); got != 1 {
		t.Errorf("handler ran %d times for the last key, want 1", got)
	}
}

// TestIdempotencyServerErrorsAreNotKept: after a 5xx or a panic the key is
// released, so a retry with it runs again.
func TestIdempotencyServerErrorsAreNotKept(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	flaky := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		switch calls.Add(1) {
		case 1:
			respond.Error(w, nil, respond.Admin, apperr.Errorf(apperr.Unavailable, "database unavailable"))
		case 2:
			panic("handler bug")
		default:
			respond.JSON(w, http.StatusCreated, map[string]any{"data": map[string]any{"ok": true}})
		}
	})
	env := mustProtectedEnv(t, protectedOpts{routes: func(s *httpapi.Server, r *mux.Router) {
		r.Handle("/test/flaky", s.Protected(respond.Admin, flaky)).Methods(http.MethodPost)
	}})
	tn := env.mustTenant(t)
	req := request{method: http.MethodPost, path: "/test/flaky", body: map[string]any{"x": 1},
		header: map[string]string{"X-API-Key": tn.key, "Idempotency-Key": "flaky"}}
	for _, want := range []int{http.StatusServiceUnavailable, http.StatusInternalServerError} {
		r, _ := env.try(req) // a 5xx is what this test provokes
		if r.status != want {
			t.Fatalf("got %s, want %d", r, want)
		}
	}
	first := env.call(t, req)
	wantStatus(t, first, http.StatusCreated)
	if v := first.header.Get("Idempotent-Replayed"); v != "" {
		t.Errorf("third attempt: Idempotent-Replayed = %q, want none (it ran)", v)
	}
	wantReplay(t, first, env.call(t, req))
	if got := calls.Load(); got != 3 {
		t.Errorf("handler ran %d times, want 3", got)
	}
}
