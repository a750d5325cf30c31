package openapitest_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/convida/convida/pkg/openapi/openapitest"
)

// recorder is a testing.TB that keeps the failures it is told about instead
// of failing the test, so that the tests can assert them.
type recorder struct {
	testing.TB
	mu     sync.Mutex
	errors []string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

func (r *recorder) Error(args ...any) { r.Errorf("%s", fmt.Sprint(args...)) }

func (r *recorder) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.errors
	r.errors = nil
	return out
}

const (
	memberJSON = `{"data":{"id":"mem_0b5c3e9e2f4a4c1e9d1a7e2f0c9a1b2c","email":"ana@example.com","name":"Ana Souza",
		"external_id":"","coupon_code":"LOJ-ANA-7KQ2","campaign_id":"camp_5f1d2c3b4a5948e7b6c5d4e3f2a1b0c9",
		"status":"active","wallet":{"pending":0,"available":0,"currency":"BRL"},
		"stats":{"total_referrals":0,"total_earnings":0},"metadata":{},
		"coupon_provisioning":{"guru":{"status":"not_configured","coupon_id":null,"error":null},
		"yampi":{"status":"pending","coupon_id":null,"error":null}},"referral_links":{"kiwify":null,"eduzz":null},
		"created_at":"2026-11-20T12:00:00.000Z","updated_at":"2026-11-20T12:00:00.000Z",
		"erased_at":null}}`
	referralJSON = `{"data":{"id":"ref_7c9e6679742540de944be07fc1f90ae7","member_id":"mem_0b5c3e9e2f4a4c1e9d1a7e2f0c9a1b2c",
		"member":{"id":"mem_0b5c3e9e2f4a4c1e9d1a7e2f0c9a1b2c","name":"Ana","email":"ana@example.com"},
		"referee_email":"","referee_name":"","referee_external_id":"","order_id":"1","order_value":100,
		"reward_amount":10,"status":"%s","rejection_reason":%s,"unrecovered_amount":0,"review_required":false,"review_reasons":[],"coupon_used":"LOJ-ANA-7KQ2",
		"notes":"","warranty_expires_at":"2026-11-27T12:00:00.000Z","source":"guru",
		"created_at":"2026-11-20T12:00:00.000Z","updated_at":"2026-11-20T12:00:00.000Z"}}`
)

// answer is what the fake server answers to one request.
type answer struct {
	status      int
	contentType string
	header      map[string]string
	body        string
}

// fakeServer answers each "METHOD /path" with its answer.
func fakeServer(t *testing.T, answers map[string]answer) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a, ok := answers[r.Method+" "+r.URL.Path]
		if !ok {
			a = answer{status: http.StatusNotFound, contentType: "application/json",
				body: `{"error":{"code":"not_found","message":"no such route"}}`}
		}
		for k, v := range a.header {
			w.Header().Set(k, v)
		}
		if a.contentType != "" {
			w.Header().Set("Content-Type", a.contentType)
		}
		w.WriteHeader(a.status)
		_, _ = io.WriteString(w, a.body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestValidate(t *testing.T) {
	t.Parallel()
	const js, text = "application/json", "text/plain; charset=utf-8"
	const ready = `{"status":"ready","checks":{"postgres":"ok","kafka":"ok","redis":"ok"}}`
	tests := []struct {
		name    string
		method  string
		path    string
		answer  answer
		wantErr string // "" when the response matches the document
	}{
		{"healthz", "GET", "/healthz", answer{200, text, nil, "ok\n"}, ""},
		{"readyz", "GET", "/readyz", answer{200, js, nil, ready}, ""},
		{"stray field", "GET", "/readyz", answer{200, js, nil, strings.Replace(ready, `"ready"`, `"ready","uptime":3`, 1)}, "does not match"},
		{"wrong enum", "GET", "/readyz", answer{200, js, nil, strings.Replace(ready, `"ready"`, `"fine"`, 1)}, "does not match"},
		{"undocumented status", "GET", "/healthz", answer{418, js, nil, `{}`}, "status is not supported"},
		{"wrong content type", "GET", "/healthz", answer{200, "text/html", nil, `<p>ok</p>`}, "Content-Type"},
		{"not JSON", "GET", "/readyz", answer{200, js, nil, `ok`}, "does not match"},
		{"undocumented route", "GET", "/api/v1/nothing", answer{404, js, nil, `{}`}, "undocumented route"},
		{"undocumented method", "DELETE", "/healthz", answer{405, js, nil, `{}`}, "undocumented operation"},
		{"500 is always a bug", "GET", "/api/v1/members/mem_0b5c3e9e2f4a4c1e9d1a7e2f0c9a1b2c",
			answer{500, js, nil, `{"error":{"code":"internal","message":"internal error"}}`}, "500"},
		{"member", "GET", "/api/v1/members/mem_0b5c3e9e2f4a4c1e9d1a7e2f0c9a1b2c",
			answer{200, js, map[string]string{"RateLimit-Limit": "100", "RateLimit-Remaining": "99", "RateLimit-Reset": "1"}, memberJSON}, ""},
		{"malformed rate limit header", "GET", "/api/v1/members/mem_0b5c3e9e2f4a4c1e9d1a7e2f0c9a1b2c",
			answer{200, js, map[string]string{"RateLimit-Remaining": "lots"}, memberJSON}, "RateLimit-Remaining"},
		{"member id without prefix", "GET", "/api/v1/members/x",
			answer{200, js, nil, strings.Replace(memberJSON, `"id":"mem_`, `"id":"`, 1)}, "does not match"},
		{"timestamp without milliseconds", "GET", "/api/v1/members/x",
			answer{200, js, nil, strings.Replace(memberJSON, `"created_at":"2026-11-20T12:00:00.000Z"`, `"created_at":"2026-11-20T12:00:00Z"`, 1)}, "does not match"},
		{"email format", "GET", "/api/v1/members/x",
			answer{200, js, nil, strings.Replace(memberJSON, `"ana@example.com"`, `"ana at example"`, 1)}, "email"},
		{"uuid format", "POST", "/api/webhooks/yampi/6fa459ea-ee8a-4ca4-894e-db77e160355e",
			answer{200, js, nil, `{"status":"accepted","delivery_id":"2c1f7a0e5b1d4c3e9f0a8b7c6d5e4f3a"}`}, "delivery_id"},
		{"not found", "GET", "/api/v1/members/x",
			answer{404, js, nil, `{"error":{"code":"not_found","message":"member not found"}}`}, ""},
		{"member-facing code on an admin route", "GET", "/api/v1/members/x",
			answer{404, js, nil, `{"error":{"code":"NOT_FOUND","message":"member not found"}}`}, "does not match"},
		{"stray field in the envelope", "GET", "/api/v1/members/x",
			answer{404, js, nil, `{"error":{"code":"not_found","message":"m","details":[]}}`}, "does not match"},
		{"empty message", "GET", "/api/v1/members/x",
			answer{404, js, nil, `{"error":{"code":"not_found","message":""}}`}, "does not match"},
		{"429 with Retry-After", "GET", "/api/v1/members/x",
			answer{429, js, map[string]string{"Retry-After": "1"}, `{"error":{"code":"rate_limited","message":"slow down"}}`}, ""},
		{"429 without Retry-After", "GET", "/api/v1/members/x",
			answer{429, js, nil, `{"error":{"code":"rate_limited","message":"slow down"}}`}, "Retry-After"},
		{"pending referral", "GET", "/api/v1/referrals/x",
			answer{200, js, nil, fmt.Sprintf(referralJSON, "pending", "null")}, ""},
		{"rejected referral", "GET", "/api/v1/referrals/x",
			answer{200, js, nil, fmt.Sprintf(referralJSON, "rejected", `"fraud"`)}, ""},
		{"empty rejection reason instead of null", "GET", "/api/v1/referrals/x",
			answer{200, js, nil, fmt.Sprintf(referralJSON, "pending", `""`)}, "does not match"},
		{"unknown member-facing route method", "POST", "/api/v1/member/me", answer{405, js, nil, `{}`}, "undocumented operation"},
		{"member-facing 404", "GET", "/api/v1/wallet/balance",
			answer{404, js, nil, `{"error":{"code":"MEMBER_NOT_FOUND","message":"member not found"}}`}, ""},
		{"guru webhook", "POST", "/api/webhooks/guru/6fa459ea-ee8a-4ca4-894e-db77e160355e",
			answer{200, js, nil, `{"status":"ignored","delivery_id":"2c1f7a0e-5b1d-4c3e-9f0a-8b7c6d5e4f3a","reason":"not handled"}`}, ""},
		{"webhook of an unknown provider", "POST", "/api/webhooks/stripe/6fa459ea-ee8a-4ca4-894e-db77e160355e",
			answer{404, js, nil, `{"error":{"code":"not_found","message":"unknown provider or merchant"}}`}, "undocumented route"},
		{"metrics", "GET", "/metrics", answer{200, "text/plain; version=0.0.4; charset=utf-8", nil, "up 1\n"}, ""},
		{"document not modified", "GET", "/api/v1/openapi.json", answer{304, "", map[string]string{"ETag": `"ab"`}, ""}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := fakeServer(t, map[string]answer{tt.method + " " + tt.path: tt.answer})
			rec := &recorder{TB: t}
			client := openapitest.Client(rec, srv.URL)
			req, err := http.NewRequest(tt.method, srv.URL+tt.path, nil)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if string(body) != tt.answer.body {
				t.Errorf("body = %q, want it passed through unchanged: %q", body, tt.answer.body)
			}
			errs := rec.take()
			switch {
			case tt.wantErr == "" && len(errs) > 0:
				t.Errorf("got failures, want none:\n%s", strings.Join(errs, "\n"))
			case tt.wantErr != "" && len(errs) != 1:
				t.Errorf("got %d failures, want 1 naming %q:\n%s", len(errs), tt.wantErr, strings.Join(errs, "\n"))
			case tt.wantErr != "" && !strings.Contains(errs[0], tt.wantErr):
				t.Errorf("failure %q does not name %q", errs[0], tt.wantErr)
			}
		})
	}
}

func TestOtherHostsAreNotValidated(t *testing.T) {
	t.Parallel()
	checked := fakeServer(t, nil)
	other := fakeServer(t, map[string]answer{"GET /anything": {200, "text/plain", nil, "hi"}})
	rec := &recorder{TB: t}
	client := openapitest.Client(rec, checked.URL)
	resp, err := client.Get(other.URL + "/anything")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if errs := rec.take(); len(errs) > 0 {
		t.Errorf("a request to another server was validated: %v", errs)
	}
}

func TestCoverage(t *testing.T) {
	t.Parallel()
	srv := fakeServer(t, map[string]answer{
		"GET /healthz": {200, "text/plain; charset=utf-8", nil, "ok\n"},
		"GET /readyz":  {503, "application/json", nil, `{"status":"unavailable","checks":{"postgres":"unavailable","kafka":"ok","redis":"ok"}}`},
	})
	v := openapitest.New(t)
	client := v.Client(srv.URL)
	for _, p := range []string{"/healthz", "/healthz", "/readyz"} {
		resp, err := client.Get(srv.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	want := []openapitest.Exercise{{Operation: "getHealthz", Status: 200}, {Operation: "getReadyz", Status: 503}}
	if got := v.Exercised(); !slices.Equal(got, want) {
		t.Errorf("Exercised() = %v, want %v", got, want)
	}
	if got, want := v.Missing("getReadyz", "getHealthz"), []openapitest.Exercise{{Operation: "getReadyz", Status: 200}}; !slices.Equal(got, want) {
		t.Errorf("Missing() = %v, want %v", got, want)
	}
	v.WantExercised(t, want...)

	rec := &recorder{TB: t}
	v.WantExercised(rec, openapitest.Exercise{Operation: "getReadyz", Status: 200}, openapitest.Exercise{Operation: "getHealthz", Status: 201})
	if errs := rec.take(); len(errs) != 2 || !strings.Contains(errs[0], "not exercised") || !strings.Contains(errs[1], "not a documented response") {
		t.Errorf("WantExercised failures = %q, want one unexercised and one undocumented", errs)
	}
}

func TestResponsesAndOperations(t *testing.T) {
	t.Parallel()
	ops := openapitest.Operations(t)
	ids := map[string]bool{}
	for _, op := range ops {
		if op.ID == "" || ids[op.ID] {
			t.Errorf("operation %s %s: operationId %q is empty or repeated", op.Method, op.Path, op.ID)
		}
		ids[op.ID] = true
	}
	if !ids["createMember"] || !ids["receiveYampiWebhook"] || !ids["getOpenAPIDocument"] {
		t.Errorf("Operations() = %v, want createMember, receiveYampiWebhook and getOpenAPIDocument among them", ops)
	}
	responses := openapitest.Responses(t)
	if !slices.Contains(responses, openapitest.Exercise{Operation: "redeemWallet", Status: 202}) {
		t.Errorf("Responses() lacks redeemWallet 202: %v", responses)
	}
}
