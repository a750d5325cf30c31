package platform

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"testing"
	"time"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/merchant"
	"github.com/convida/convida/pkg/provider"
	"github.com/convida/convida/pkg/redemption"
)

const (
	yampiToken  = "yampi-user-token-S3CRET"
	yampiSecret = "yampi-secret-key-S3CRET"
	promocodes  = "/v2/minha-loja/pricing/promocodes"
)

func yampiSettings(apiURL string) merchant.Integration {
	return merchant.Integration{Provider: provider.Yampi, UserToken: yampiToken, UserSecretKey: yampiSecret,
		StoreAlias: "minha-loja", APIURL: apiURL}
}

func yampiRequest(cents int64) redemption.Request {
	return redemption.Request{RedemptionID: testRedemptionID, Type: redemption.TypeStoreCredit, Amount: cents, MemberEmail: "ana@example.com",
		Now: time.Date(2026, 3, 10, 15, 4, 5, 123e6, time.UTC)}
}

func TestExecuteYampiSuccess(t *testing.T) {
	t.Parallel()
	fake := newFakePlatform(t, map[string][]answer{
		"POST " + promocodes: {{status: 201, body: `{"data":{"id":77,"code":"X"}}`}},
	})
	e, rec := newTestExecutor(t, fastPolicy())

	got, err := e.Execute(context.Background(), yampiSettings(fake.srv.URL+"/v2/"), yampiRequest(1050))
	if err != nil {
		t.Fatalf("Execute: %v", err)
	}
	code := redemption.CouponCodeFor(testCouponKey, testRedemptionID)
	want := redemption.Result{CouponCode: code, ExpiresAt: time.Date(2026, 6, 8, 15, 4, 5, 0, time.UTC)}
	if got != want {
		t.Errorf("result = %+v, want %+v", got, want)
	}
	reqs := fake.requests()
	if len(reqs) != 1 || reqs[0].Method != "POST" || reqs[0].Path != promocodes {
		t.Fatalf("requests = %+v, want one POST %s", reqs, promocodes)
	}
	for k, want := range map[string]string{
		"User-Token":      yampiToken,
		"User-Secret-Key": yampiSecret,
		"Content-Type":    "application/json",
		"Accept":          "application/json",
		"Idempotency-Key": testRedemptionID.String(),
		"Authorization":   "",
	} {
		if got := reqs[0].Header.Get(k); got != want {
			t.Errorf("header %s = %q, want %q", k, got, want)
		}
	}

	body := decodeJSON(t, reqs[0].Body)
	wantBody := map[string]any{
		"active":            true,
		"code":              code,
		"description":       "Convida red_6f1c2d3e4a5b4c6d8e7f0123456789ab ana@example.com",
		"discount_type":     "v",
		"value":             json.Number("10.50"),
		"quantity":          json.Number("1"),
		"once_per_customer": true,
		"start_at":          "2026-03-10 12:04:05",
		"end_at":            "2026-06-08 12:04:05",
	}
	for k, w := range wantBody {
		if got := body[k]; got != w {
			t.Errorf("body[%q] = %#v, want %#v", k, got, w)
		}
	}
	if len(body) != len(wantBody) {
		t.Errorf("body has %d fields, want %d: %s", len(body), len(wantBody), reqs[0].Body)
	}
	var typed struct {
		Value float64 `json:"value"`
	}
	if err := json.Unmarshal(reqs[0].Body, &typed); err != nil || typed.Value != 10.5 {
		t.Errorf("value decodes as %v (%v), want the number 10.5", typed.Value, err)
	}
	if p := rec.recorded(); len(p) != 0 {
		t.Errorf("slept %v, want no pause", p)
	}
}

func TestExecuteYampiDefaultNow(t *testing.T) {
	t.Parallel()
	fake := newFakePlatform(t, map[string][]answer{"POST " + promocodes: {{status: 200, body: `{}`}}})
	e, _ := newTestExecutor(t, fastPolicy())
	req := yampiRequest(100)
	req.Now = time.Time{}
	before := time.Now().Truncate(time.Second)
	got, err := e.Execute(context.Background(), yampiSettings(fake.srv.URL+"/v2"), req)
	if err != nil {
		t.Fatalf("Execute: %v", err)
	}
	if lo, hi := before.Add(redemption.CouponValidity), time.Now().Add(redemption.CouponValidity); got.ExpiresAt.Before(lo) || got.ExpiresAt.After(hi) {
		t.Errorf("ExpiresAt = %v, want between %v and %v", got.ExpiresAt, lo, hi)
	}
	if got.ExpiresAt.Location() != time.UTC {
		t.Errorf("ExpiresAt in %v, want UTC", got.ExpiresAt.Location())
	}
}

// TestExecuteYampiExistingCode covers a 422 on the create: success only
// when Yampi's search shows our code with our amount.
func TestExecuteYampiExistingCode(t *testing.T) {
	t.Parallel()
	code := redemption.CouponCodeFor(testCouponKey, testRedemptionID)
	taken := answer{status: 422, body: `{"errors":{"code":["O código já está em uso."]}}`}
	tests := []struct {
		name       string
		post       []answer
		search     []answer
		wantErr    apperr.Code
		wantPosts  int
		wantSearch int
	}{
		{"answer lost, then code taken: found", []answer{{hangup: true}, taken},
			[]answer{{status: 200, body: `{"data":[{"id":1,"code":"` + code + `","value":10.5}]}`}}, "", 2, 1},
		{"found with value as text", []answer{taken},
			[]answer{{status: 200, body: `{"data":[{"code":"OTHER","value":"1.00"},{"code":"` + code + `","value":"10.50"}]}`}}, "", 1, 1},
		{"found as a single object", []answer{taken},
			[]answer{{status: 200, body: `{"data":{"code":"` + code + `"}}`}}, "", 1, 1},
		{"not found", []answer{taken}, []answer{{status: 200, body: `{"data":[]}`}}, apperr.Unprocessable, 1, 1},
		{"other amount", []answer{taken},
			[]answer{{status: 200, body: `{"data":[{"code":"` + code + `","value":20}]}`}}, apperr.Unprocessable, 1, 1},
		{"search refused", []answer{taken}, []answer{{status: 403, body: `{}`}}, apperr.Unprocessable, 1, 1},
		{"search fails transiently, then found", []answer{taken},
			[]answer{{status: 502}, {status: 200, body: `{"data":[{"code":"` + code + `"}]}`}}, "", 2, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fake := newFakePlatform(t, map[string][]answer{"POST " + promocodes: tt.post, "GET " + promocodes: tt.search})
			e, _ := newTestExecutor(t, fastPolicy())
			got, err := e.Execute(context.Background(), yampiSettings(fake.srv.URL+"/v2"), yampiRequest(1050))
			if apperr.CodeOf(err) != tt.wantErr {
				t.Fatalf("err = %v, want code %q", err, tt.wantErr)
			}
			if err == nil && got.CouponCode != code {
				t.Errorf("coupon = %q, want %q", got.CouponCode, code)
			}
			if err != nil && got != (redemption.Result{}) {
				t.Errorf("result = %+v on error, want zero", got)
			}
			if n := fake.count("POST " + promocodes); n != tt.wantPosts {
				t.Errorf("POSTs = %d, want %d", n, tt.wantPosts)
			}
			if n := fake.count("GET " + promocodes); n != tt.wantSearch {
				t.Errorf("searches = %d, want %d", n, tt.wantSearch)
			}
			for _, r := range fake.requests() {
				if r.Method != "GET" {
					continue
				}
				q, _ := url.ParseQuery(r.Query)
				if q.Get("q") != code || r.Header.Get("User-Token") != yampiToken || r.Header.Get("User-Secret-Key") != yampiSecret {
					t.Errorf("search query %q headers %v, want q=%s and the credentials", r.Query, r.Header, code)
				}
			}
		})
	}
}

// TestExecuteYampiCodeIsKeyed: the coupon Execute creates carries the code
// of the executor's key, never the unkeyed one; without a key no request
// is sent.
func TestExecuteYampiCodeIsKeyed(t *testing.T) {
	t.Parallel()
	fake := newFakePlatform(t, map[string][]answer{
		"POST " + promocodes: {{status: 201, body: `{"data":{"id":77}}`}, {status: 201, body: `{"data":{"id":78}}`}},
	})
	codes := map[string]bool{}
	for _, key := range [][]byte{testCouponKey, []byte("the key after a SECRETS_KEY rotation")} {
		e, _ := newTestExecutor(t, fastPolicy())
		e.CouponKey = key
		got, err := e.Execute(context.Background(), yampiSettings(fake.srv.URL+"/v2/"), yampiRequest(1050))
		if err != nil {
			t.Fatalf("Execute: %v", err)
		}
		if got.CouponCode != redemption.CouponCodeFor(key, testRedemptionID) {
			t.Errorf("coupon code %q, want redemption.CouponCodeFor(key, id) %q", got.CouponCode, redemption.CouponCodeFor(key, testRedemptionID))
		}
		codes[got.CouponCode] = true
	}
	if len(codes) != 2 {
		t.Errorf("codes under two keys: %v, want two", codes)
	}
	for i, r := range fake.requests() {
		if body := decodeJSON(t, r.Body); !codes[fmt.Sprint(body["code"])] {
			t.Errorf("request %d sent the code %v, not a keyed one", i, body["code"])
		}
	}

	e, _ := newTestExecutor(t, fastPolicy())
	e.CouponKey = nil
	if _, err := e.Execute(context.Background(), yampiSettings(fake.srv.URL+"/v2/"), yampiRequest(1050)); err == nil {
		t.Error("an executor without a coupon key created a coupon")
	}
	if n := len(fake.requests()); n != 2 {
		t.Errorf("requests = %d, want the 2 of the keyed executors", n)
	}
}
