package platform

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/merchant"
	"github.com/convida/convida/pkg/redemption"
)

// target is one platform request under test, the others succeeding.
type target struct {
	name     string
	settings func(apiURL string) merchant.Integration
	req      redemption.Request
	route    string            // the request whose answers a test scripts
	others   map[string]answer // the platform's other requests, succeeding
	success  answer            // a success of route
	prefix   string            // path of the API URL on the fake server
}

func targets() []target {
	guruGET, guruPUT := "GET /subscriptions/sub_1", "PUT /subscriptions/sub_1/increment-discount"
	return []target{
		{name: "guru GET subscription", settings: guruSettings, req: guruRequest("sub_1", 1050),
			route: guruGET, others: map[string]answer{guruPUT: {status: 200}},
			success: answer{status: 200, body: `{"charged_times":1}`}},
		{name: "guru PUT increment-discount", settings: guruSettings, req: guruRequest("sub_1", 1050),
			route: guruPUT, others: map[string]answer{guruGET: {status: 200, body: `{"charged_times":1}`}},
			success: answer{status: 200}},
		{name: "yampi POST promocodes", settings: yampiSettings, req: yampiRequest(1050),
			route: "POST " + promocodes, success: answer{status: 201, body: `{}`}, prefix: "/v2"},
	}
}

// serve starts a fake platform for tt whose route answers script.
func (tt target) serve(t *testing.T, script ...answer) *fakePlatform {
	routes := map[string][]answer{tt.route: script}
	for r, a := range tt.others {
		routes[r] = []answer{a}
	}
	return newFakePlatform(t, routes)
}

func (tt target) execute(ctx context.Context, e *Executor, f *fakePlatform) (redemption.Result, error) {
	return e.Execute(ctx, tt.settings(f.srv.URL+tt.prefix), tt.req)
}

func TestExecuteRefusals(t *testing.T) {
	t.Parallel()
	for _, tg := range targets() {
		for _, status := range []int{400, 401, 403, 404, 409, 422, 302} {
			t.Run(tg.name+"/"+strconv.Itoa(status), func(t *testing.T) {
				t.Parallel()
				fake := tg.serve(t, answer{status: status, header: map[string]string{"Location": "https://elsewhere.example/"},
					body: `{"message":"recusado pela plataforma"}`})
				e, rec := newTestExecutor(t, fastPolicy())
				_, err := tg.execute(context.Background(), e, fake)
				if !apperr.Is(err, apperr.Unprocessable) {
					t.Fatalf("err = %v, want unprocessable", err)
				}
				msg := apperr.MessageOf(err)
				for _, want := range []string{strconv.Itoa(status), "recusado pela plataforma", strings.Fields(tg.name)[0]} {
					if !strings.Contains(msg, want) {
						t.Errorf("message %q lacks %q", msg, want)
					}
				}
				if n := fake.count(tg.route); n != 1 {
					t.Errorf("%s sent %d times, want 1", tg.route, n)
				}
				if p := rec.recorded(); len(p) != 0 {
					t.Errorf("slept %v, want no retry", p)
				}
			})
		}
	}
}

func TestExecuteRetriesThenSucceeds(t *testing.T) {
	t.Parallel()
	for _, tg := range targets() {
		for _, status := range []int{500, 429} {
			t.Run(tg.name+"/"+strconv.Itoa(status), func(t *testing.T) {
				t.Parallel()
				fail := answer{status: status, body: `{"error":"try later"}`}
				fake := tg.serve(t, fail, fail, tg.success)
				e, rec := newTestExecutor(t, fastPolicy())
				got, err := tg.execute(context.Background(), e, fake)
				if err != nil {
					t.Fatalf("Execute: %v", err)
				}
				if got == (redemption.Result{}) {
					t.Errorf("empty result")
				}
				if n := fake.count(tg.route); n != 3 {
					t.Errorf("%s sent %d times, want 3", tg.route, n)
				}
				pauses := rec.recorded()
				if len(pauses) != 2 {
					t.Fatalf("pauses = %v, want 2", pauses)
				}
				for i, base := range fastPolicy().Delays[:2] {
					if lo, hi := base*9/10, base*11/10; pauses[i] < lo || pauses[i] > hi {
						t.Errorf("pause %d = %v, want %v ±10%%", i, pauses[i], base)
					}
				}
			})
		}
	}
}

func TestExecuteRetryAfter(t *testing.T) {
	t.Parallel()
	policy := redemption.RetryPolicy{Attempts: 3, Delays: []time.Duration{time.Millisecond, 30 * time.Second}}
	tests := []struct {
		name     string
		value    string
		min, max time.Duration
	}{
		{"seconds", "7", 7 * time.Second, 7 * time.Second},
		{"capped at the longest delay", "3600", 30 * time.Second, 30 * time.Second},
		{"HTTP date", time.Now().Add(20 * time.Second).UTC().Format(http.TimeFormat), 15 * time.Second, 20 * time.Second},
		{"zero keeps the schedule", "0", 900 * time.Microsecond, 1100 * time.Microsecond},
		{"garbage keeps the schedule", "soon", 900 * time.Microsecond, 1100 * time.Microsecond},
	}
	for _, tg := range targets() {
		for _, tt := range tests {
			t.Run(tg.name+"/"+tt.name, func(t *testing.T) {
				t.Parallel()
				fake := tg.serve(t, answer{status: 503, header: map[string]string{"Retry-After": tt.value}}, tg.success)
				e, rec := newTestExecutor(t, policy)
				if _, err := tg.execute(context.Background(), e, fake); err != nil {
					t.Fatalf("Execute: %v", err)
				}
				pauses := rec.recorded()
				if len(pauses) != 1 || pauses[0] < tt.min || pauses[0] > tt.max {
					t.Errorf("pauses = %v, want one within [%v, %v]", pauses, tt.min, tt.max)
				}
			})
		}
	}
}

func TestExecuteGivesUp(t *testing.T) {
	t.Parallel()
	for _, tg := range targets() {
		t.Run(tg.name, func(t *testing.T) {
			t.Parallel()
			fake := tg.serve(t, answer{status: 500, body: "upstream exploded\n"})
			e, rec := newTestExecutor(t, fastPolicy())
			_, err := tg.execute(context.Background(), e, fake)
			if !apperr.Is(err, apperr.Unavailable) {
				t.Fatalf("err = %v, want unavailable", err)
			}
			msg := apperr.MessageOf(err)
			for _, want := range []string{"500", "upstream exploded", "gave up after 5 attempts"} {
				if !strings.Contains(msg, want) {
					t.Errorf("message %q lacks %q", msg, want)
				}
			}
			if n := fake.count(tg.route); n != 5 {
				t.Errorf("%s sent %d times, want exactly 5", tg.route, n)
			}
			if p := rec.recorded(); len(p) != 4 {
				t.Errorf("pauses = %v, want 4", p)
			}
		})
	}
}

func TestExecuteNetworkErrors(t *testing.T) {
	t.Parallel()
	for _, tg := range targets() {
		t.Run(tg.name+"/hangup then success", func(t *testing.T) {
			t.Parallel()
			fake := tg.serve(t, answer{hangup: true}, tg.success)
			e, rec := newTestExecutor(t, fastPolicy())
			if _, err := tg.execute(context.Background(), e, fake); err != nil {
				t.Fatalf("Execute: %v", err)
			}
			if n := fake.count(tg.route); n != 2 {
				t.Errorf("%s sent %d times, want 2", tg.route, n)
			}
			// On a reused connection net/http itself resends a request
			// that carries an Idempotency-Key, without a pause.
			if p := rec.recorded(); len(p) > 1 {
				t.Errorf("pauses = %v, want at most 1", p)
			}
		})
		t.Run(tg.name+"/timeout then success", func(t *testing.T) {
			t.Parallel()
			fake := tg.serve(t, answer{stall: 10 * time.Second, status: 200}, tg.success)
			e, rec := newTestExecutor(t, fastPolicy())
			e.RequestTimeout = 500 * time.Millisecond
			if _, err := tg.execute(context.Background(), e, fake); err != nil {
				t.Fatalf("Execute: %v", err)
			}
			if n := fake.count(tg.route); n != 2 {
				t.Errorf("%s sent %d times, want 2", tg.route, n)
			}
			if p := rec.recorded(); len(p) != 1 {
				t.Errorf("pauses = %v, want 1", p)
			}
		})
	}

	t.Run("always timing out", func(t *testing.T) {
		t.Parallel()
		tg := targets()[2]
		fake := tg.serve(t, answer{stall: 10 * time.Second, status: 200})
		e, _ := newTestExecutor(t, redemption.RetryPolicy{Attempts: 2, Delays: []time.Duration{time.Millisecond}})
		e.RequestTimeout = 300 * time.Millisecond
		_, err := tg.execute(context.Background(), e, fake)
		if !apperr.Is(err, apperr.Unavailable) || !strings.Contains(apperr.MessageOf(err), "no answer within 300ms") {
			t.Fatalf("err = %v, want unavailable with no answer within 300ms", err)
		}
		if n := fake.count(tg.route); n != 2 {
			t.Errorf("%s sent %d times, want 2", tg.route, n)
		}
	})
}

// TestExecuteServerClosed is not parallel: the port of the closed server
// is free again, and a parallel test's server could take it and answer.
func TestExecuteServerClosed(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	srv.Close()
	for _, tg := range targets() {
		e, rec := newTestExecutor(t, fastPolicy())
		_, err := e.Execute(context.Background(), tg.settings(srv.URL), tg.req)
		if !apperr.Is(err, apperr.Unavailable) {
			t.Fatalf("%s: err = %v, want unavailable", tg.name, err)
		}
		msg := apperr.MessageOf(err)
		if !strings.Contains(msg, "connection refused") || !strings.Contains(msg, "gave up after 5 attempts") {
			t.Errorf("%s: message %q, want the connection failure and the attempts", tg.name, msg)
		}
		notAddress(t, msg, srv.URL)
		if p := rec.recorded(); len(p) != 4 {
			t.Errorf("%s: pauses = %v, want 4", tg.name, p)
		}
	}
}

func TestExecuteInvalidInput(t *testing.T) {
	t.Parallel()
	fake := newFakePlatform(t, nil)
	g, y := guruSettings(fake.srv.URL), yampiSettings(fake.srv.URL)
	tests := []struct {
		name     string
		settings merchant.Integration
		req      redemption.Request
		want     string // in the message
	}{
		{"guru without user token", with(g, func(s *merchant.Integration) { s.UserToken = "" }), guruRequest("sub_1", 100), "user token"},
		{"guru without subscription id", g, guruRequest(" ", 100), "subscription id"},
		{"guru with yampi settings", y, guruRequest("sub_1", 100), "guru settings"},
		{"guru with a bad api url", with(g, func(s *merchant.Integration) { s.APIURL = "ftp://guru.example" }), guruRequest("sub_1", 100), "api url"},
		{"guru with a relative api url", with(g, func(s *merchant.Integration) { s.APIURL = "/api/v2" }), guruRequest("sub_1", 100), "api url"},
		{"yampi without user token", with(y, func(s *merchant.Integration) { s.UserToken = "" }), yampiRequest(100), "user token"},
		{"yampi without secret key", with(y, func(s *merchant.Integration) { s.UserSecretKey = "" }), yampiRequest(100), "secret key"},
		{"yampi without store alias", with(y, func(s *merchant.Integration) { s.StoreAlias = "" }), yampiRequest(100), "store alias"},
		{"yampi with guru settings", with(g, func(s *merchant.Integration) { s.UserSecretKey, s.StoreAlias = "k", "loja" }), yampiRequest(100), "yampi settings"},
		{"zero amount", y, yampiRequest(0), "amount"},
		{"negative amount", g, guruRequest("sub_1", -5), "amount"},
		{"no redemption id", y, withReq(yampiRequest(100), func(r *redemption.Request) { r.RedemptionID = uuid.Nil }), "no id"},
		{"unknown type", y, withReq(yampiRequest(100), func(r *redemption.Request) { r.Type = "cashback" }), "unknown redemption type"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, rec := newTestExecutor(t, fastPolicy())
			_, err := e.Execute(context.Background(), tt.settings, tt.req)
			if !apperr.Is(err, apperr.Unprocessable) {
				t.Fatalf("err = %v, want unprocessable", err)
			}
			if msg := apperr.MessageOf(err); !strings.Contains(msg, tt.want) {
				t.Errorf("message %q lacks %q", msg, tt.want)
			}
			if p := rec.recorded(); len(p) != 0 {
				t.Errorf("slept %v", p)
			}
		})
	}
	if reqs := fake.requests(); len(reqs) != 0 {
		t.Errorf("got %d requests, want none: %+v", len(reqs), reqs)
	}
}

func with(s merchant.Integration, f func(*merchant.Integration)) merchant.Integration {
	f(&s)
	return s
}

func withReq(r redemption.Request, f func(*redemption.Request)) redemption.Request {
	f(&r)
	return r
}

func TestExecuteContextEnds(t *testing.T) {
	t.Parallel()
	tg := targets()[1]

	t.Run("cancelled before", func(t *testing.T) {
		t.Parallel()
		fake := tg.serve(t, tg.success)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		e, _ := newTestExecutor(t, fastPolicy())
		_, err := tg.execute(ctx, e, fake)
		if !apperr.Is(err, apperr.Unavailable) || !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want unavailable wrapping context.Canceled", err)
		}
		if reqs := fake.requests(); len(reqs) != 0 {
			t.Errorf("got %d requests, want none", len(reqs))
		}
	})

	t.Run("cancelled while pausing", func(t *testing.T) {
		t.Parallel()
		fake := tg.serve(t, answer{status: 500, body: "down"})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		e, rec := newTestExecutor(t, fastPolicy())
		rec.hook = cancel
		_, err := tg.execute(ctx, e, fake)
		if !apperr.Is(err, apperr.Unavailable) || !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want unavailable wrapping context.Canceled", err)
		}
		if msg := apperr.MessageOf(err); !strings.Contains(msg, "stopped") || !strings.Contains(msg, "500") {
			t.Errorf("message %q, want it stopped and the last answer", msg)
		}
		if n := fake.count(tg.route); n != 1 {
			t.Errorf("%s sent %d times, want 1", tg.route, n)
		}
	})

	t.Run("deadline during the real sleep", func(t *testing.T) {
		t.Parallel()
		fake := tg.serve(t, answer{status: 503})
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		e := NewExecutor(loopbackClient(t), redemption.RetryPolicy{Attempts: 5, Delays: []time.Duration{time.Hour}})
		e.CouponKey = testCouponKey
		start := time.Now()
		_, err := tg.execute(ctx, e, fake)
		if !errors.Is(err, context.DeadlineExceeded) || !apperr.Is(err, apperr.Unavailable) {
			t.Fatalf("err = %v, want unavailable wrapping context.DeadlineExceeded", err)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("took %v, want it to stop at the deadline", d)
		}
		if n := fake.count(tg.route); n != 1 {
			t.Errorf("%s sent %d times, want 1", tg.route, n)
		}
	})
}

func TestExecuteErrorMessageExcerpt(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 500)
	for _, tg := range targets() {
		t.Run(tg.name, func(t *testing.T) {
			t.Parallel()
			body := "token " + guruToken + " key " + yampiSecret + " user " + yampiToken + "\n\t\x00 " + long
			fake := tg.serve(t, answer{status: 422, body: body})
			e, _ := newTestExecutor(t, fastPolicy())
			_, err := tg.execute(context.Background(), e, fake)
			msg := apperr.MessageOf(err)
			settings := tg.settings("")
			for _, secret := range []string{settings.UserToken, settings.UserSecretKey} {
				if secret == "" {
					continue
				}
				if strings.Contains(msg, secret) || strings.Contains(err.Error(), secret) {
					t.Errorf("message repeats a credential: %q", msg)
				}
			}
			if strings.ContainsAny(msg, "\n\t\x00") {
				t.Errorf("message %q has control characters", msg)
			}
			_, ex, _ := strings.Cut(msg, "answered 422: ")
			if n := len([]rune(ex)); n == 0 || n > 200 {
				t.Errorf("excerpt has %d characters, want 1–200: %q", n, ex)
			}
			if !strings.HasSuffix(ex, "…") {
				t.Errorf("excerpt %q does not show it was cut", ex)
			}
		})
	}
}
