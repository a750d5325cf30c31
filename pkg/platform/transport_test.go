package platform

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/retry"
)

// TestIdenticalRequestsShareOneExchange: while a request of an account is
// in flight, the same request of the same account waits for its answer
// instead of being sent again (Guru refuses such twins with 429); another
// account's, or another request, goes out.
func TestIdenticalRequestsShareOneExchange(t *testing.T) {
	t.Parallel()
	var served atomic.Int64
	entered, release := make(chan struct{}, 16), make(chan struct{})
	f := newFakeAPI(t, map[string]http.HandlerFunc{"GET /subscriptions/sub_1": func(w http.ResponseWriter, r *http.Request) {
		served.Add(1)
		entered <- struct{}{}
		<-release
		writeJSON(w, 200, map[string]any{"charged_times": 2})
	}})
	c, _ := testClient(t)
	endpointOf := func(token string) *endpoint {
		g, err := c.Guru(GuruAccount{APIURL: f.srv.URL, UserToken: token})
		if err != nil {
			t.Fatal(err)
		}
		return g.ep
	}
	same, other := endpointOf("token-of-merchant-a"), endpointOf("token-of-merchant-b")
	get := request{step: "GET subscription", method: http.MethodGet, path: "/subscriptions/sub_1"}

	var wg sync.WaitGroup
	answers := make([]reply, 5)
	for i := range answers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := same.send(context.Background(), get)
			if err != nil {
				t.Errorf("send %d: %v", i, err)
			}
			answers[i] = r
		}()
	}
	<-entered
	// A caller that gives up does not end the exchange of the others.
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(50 * time.Millisecond); cancel() }()
	if _, err := same.send(ctx, get); err == nil || !strings.Contains(err.Error(), "interrupted") {
		t.Errorf("a cancelled caller got %v, want interrupted", err)
	}
	time.Sleep(100 * time.Millisecond) // the five have joined the one in flight
	wg.Add(1)
	go func() { // another account's identical request is its own
		defer wg.Done()
		if _, err := other.send(context.Background(), get); err != nil {
			t.Errorf("other account: %v", err)
		}
	}()
	<-entered
	close(release)
	wg.Wait()
	if n := served.Load(); n != 2 {
		t.Errorf("the platform served %d requests, want 2 (one per account)", n)
	}
	for i, r := range answers {
		if r.status != 200 || !strings.Contains(string(r.body), "charged_times") {
			t.Errorf("caller %d got %d %s, want the shared answer", i, r.status, r.body)
		}
	}
	// Once answered, the same request goes out again.
	if _, err := same.send(context.Background(), get); err != nil || served.Load() != 3 {
		t.Errorf("a later request: %v, served %d, want a new exchange", err, served.Load())
	}
}

// TestLastCallerEndsTheExchange: a request whose every caller has gone is
// not left hanging until its timeout: the platform sees it end.
func TestLastCallerEndsTheExchange(t *testing.T) {
	t.Parallel()
	ended := make(chan struct{})
	entered := make(chan struct{})
	f := newFakeAPI(t, map[string]http.HandlerFunc{"POST /coupons": func(w http.ResponseWriter, r *http.Request) {
		close(entered)
		<-r.Context().Done()
		close(ended)
	}})
	c, _ := testClient(t)
	c.Timeout = time.Minute
	g, err := c.Guru(GuruAccount{APIURL: f.srv.URL, UserToken: "guru-user-token"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-entered; cancel() }()
	_, err = g.ProvisionCoupon(ctx, Coupon{Code: "LOJ-ANA-7KQ2", Percentage: true, Value: 10, Start: window.From, End: window.To})
	var tr *TransientError
	if !errors.As(err, &tr) || !strings.Contains(tr.Msg, "interrupted") {
		t.Errorf("err = %v, want a transient interruption", err)
	}
	select {
	case <-ended:
	case <-time.After(5 * time.Second):
		t.Fatal("the platform still holds the request of a caller that left")
	}
}

// TestFetchWaitsAsAsked: a pull's read waits as long as Retry-After asks,
// up to MaxWait, and gives up after Attempts with the platform's words.
func TestFetchWaitsAsAsked(t *testing.T) {
	t.Parallel()
	var n atomic.Int64
	f := newFakeAPI(t, map[string]http.HandlerFunc{
		"GET /busy": func(w http.ResponseWriter, r *http.Request) {
			if n.Add(1) <= 2 {
				w.Header().Set("Retry-After", "3600")
				writeJSON(w, 503, map[string]string{"message": "maintenance"})
				return
			}
			writeJSON(w, 200, map[string]any{"data": []any{}})
		},
		"GET /down": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", "7")
			writeJSON(w, 429, map[string]string{"message": "Too Many Attempts."})
		},
		"GET /echo": func(w http.ResponseWriter, r *http.Request) {
			writeJSON(w, 422, map[string]string{"got": r.Header.Get("Authorization")})
		},
	})
	c, p := testClient(t)
	c.MaxWait, c.Attempts = 5*time.Second, 3
	ep, err := c.endpoint("guru", f.srv.URL, "", "the-user-token")
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := ep.getJSON(t.Context(), request{step: "GET busy", path: "/busy"}, &v); err != nil {
		t.Fatalf("busy: %v", err)
	}
	if got := p.all(); len(got) != 2 || got[0] != 5*time.Second || got[1] != 5*time.Second {
		t.Errorf("pauses = %v, want two of 5s (an hour asked, MaxWait 5s)", got)
	}

	err = ep.getJSON(t.Context(), request{step: "GET down", path: "/down"}, &v)
	if !apperr.Is(err, apperr.Unavailable) || retry.RetryAfter(err) != 7*time.Second ||
		!strings.Contains(apperr.MessageOf(err), "guru GET down answered 429") || !strings.Contains(apperr.MessageOf(err), "gave up after 3 attempts") {
		t.Errorf("down: err = %v (retry after %v), want unavailable after 3 attempts with Retry-After 7s", err, retry.RetryAfter(err))
	}

	err = ep.withBearer("short-lived-access").getJSON(t.Context(), request{step: "GET echo", path: "/echo"}, &v)
	if !apperr.Is(err, apperr.Unprocessable) || strings.Contains(err.Error(), "short-lived-access") || strings.Contains(err.Error(), "the-user-token") {
		t.Errorf("echo: err = %v, want a refusal that repeats no credential", err)
	}
}
