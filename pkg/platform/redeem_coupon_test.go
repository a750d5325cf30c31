package platform

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/merchant"
	"github.com/convida/convida/pkg/provider"
	"github.com/convida/convida/pkg/redemption"
	"github.com/convida/convida/pkg/retry"
)

// couponNow is when the coupons of these tests start: 12:00 UTC is 09:00
// in São Paulo.
var couponNow = time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)

func guruCouponSettings(url string) merchant.Integration {
	return merchant.Integration{Provider: provider.Guru, UserToken: "guru-user-token", APIURL: url}
}

func yampiCouponSettings(url string) merchant.Integration {
	return merchant.Integration{Provider: provider.Yampi, UserToken: "yt", UserSecretKey: "ysk", StoreAlias: "loja", APIURL: url}
}

// jsonOf decodes a request body for a field-by-field comparison.
func jsonOf(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("body %s: %v", b, err)
	}
	return m
}

func wantFields(t *testing.T, what string, got, want map[string]any) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s has %d fields, want %d: %v", what, len(got), len(want), got)
	}
	for k, w := range want {
		if g, ok := got[k]; !ok || g != w {
			t.Errorf("%s.%s = %#v, want %#v", what, k, g, w)
		}
	}
}

func TestProvisionCouponCreatesAtGuru(t *testing.T) {
	t.Parallel()
	f := newFakePlatform(t, map[string][]answer{"POST /coupons": {{status: 201, body: `{"id":"98231","coupon_code":"LOJ-ANA-7KQ2"}`}}})
	e, _ := newTestExecutor(t, fastPolicy())
	res, err := e.ProvisionCoupon(context.Background(), provider.Guru, guruCouponSettings(f.srv.URL),
		redemption.CouponRequest{Code: "LOJ-ANA-7KQ2", Discount: redemption.Discount{Type: "percentage", Value: 10}, IdempotencyKey: "k1", Now: couponNow})
	if err != nil || res.CouponID != "98231" || res.Adopted {
		t.Fatalf("ProvisionCoupon = %+v, %v; want coupon 98231 created", res, err)
	}
	reqs := f.requests()
	if len(reqs) != 1 {
		t.Fatalf("guru saw %d requests, want 1", len(reqs))
	}
	r := reqs[0]
	if r.Header.Get("Authorization") != "Bearer guru-user-token" || r.Header.Get("Idempotency-Key") != "k1" ||
		r.Header.Get("Content-Type") != "application/json" {
		t.Errorf("headers = %v", r.Header)
	}
	wantFields(t, "guru coupon", jsonOf(t, r.Body), map[string]any{
		"coupon_code": "LOJ-ANA-7KQ2", "date_ini": float64(couponNow.Unix()), "date_end": float64(couponNow.AddDate(5, 0, 0).Unix()),
		"incidence_field": "total", "incidence_type": "percent", "incidence_value": float64(10), "is_active": true,
		"usage_contact": float64(1), "usage_total": float64(0), "validate_by": "email",
	})
}

func TestProvisionCouponCreatesAtYampi(t *testing.T) {
	t.Parallel()
	f := newFakePlatform(t, map[string][]answer{"POST /loja/pricing/promocodes": {{status: 200, body: `{"data":{"id":4471,"code":"LOJ-ANA-7KQ2"}}`}}})
	e, _ := newTestExecutor(t, fastPolicy())
	res, err := e.ProvisionCoupon(context.Background(), provider.Yampi, yampiCouponSettings(f.srv.URL),
		redemption.CouponRequest{Code: "LOJ-ANA-7KQ2", Discount: redemption.Discount{Type: "fixed", Value: 1550}, Now: couponNow})
	if err != nil || res.CouponID != "4471" {
		t.Fatalf("ProvisionCoupon = %+v, %v; want coupon 4471", res, err)
	}
	r := f.requests()[0]
	if r.Header.Get("User-Token") != "yt" || r.Header.Get("User-Secret-Key") != "ysk" || r.Header.Get("Authorization") != "" {
		t.Errorf("headers = %v", r.Header)
	}
	wantFields(t, "yampi promocode", jsonOf(t, r.Body), map[string]any{
		"active": true, "code": "LOJ-ANA-7KQ2", "discount_type": "v", "value": 15.5, "quantity": float64(100000),
		"once_per_customer": true, "accumulate": false, "start_at": "2026-11-20 09:00:00", "end_at": "2031-11-20 09:00:00",
	})
}

// TestProvisionCouponAdoptsAnExistingCode: the creation is refused because
// the code exists (with the wording varying); the coupon found by the code
// is adopted, and updated only when it does not carry the discount.
func TestProvisionCouponAdoptsAnExistingCode(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		provider string
		routes   map[string][]answer
		wantID   string
		wantSeen []string
	}{
		{"guru, same discount", provider.Guru, map[string][]answer{
			"POST /coupons": {{status: 422, body: `{"message":"The given data was invalid.","errors":{"coupon_code":["The coupon code has already been taken."]}}`}},
			"GET /coupons":  {{status: 200, body: `{"data":[{"id":7,"coupon_code":"OTHER"},{"id":98231,"coupon_code":"loj-ana-7kq2","incidence_type":"percent","incidence_value":"10.00","is_active":1}]}`}},
		}, "98231", []string{"POST /coupons", "GET /coupons?coupon_code=LOJ-ANA-7KQ2"}},
		{"guru, typed by hand without the discount", provider.Guru, map[string][]answer{
			"POST /coupons":    {{status: 409, body: `{"error":"coupon exists"}`}},
			"GET /coupons":     {{status: 200, body: `[{"id":"c-1","coupon_code":"LOJ-ANA-7KQ2","incidence_type":"value","incidence_value":0}]`}},
			"PUT /coupons/c-1": {{status: 200, body: `{"id":"c-1"}`}},
		}, "c-1", []string{"POST /coupons", "GET /coupons?coupon_code=LOJ-ANA-7KQ2", "PUT /coupons/c-1"}},
		{"yampi, same discount", provider.Yampi, map[string][]answer{
			"POST /loja/pricing/promocodes": {{status: 422, body: `{"errors":{"code":["O campo code já está sendo utilizado."]}}`}},
			"GET /loja/pricing/promocodes":  {{status: 200, body: `{"data":[{"id":4471,"code":"LOJ-ANA-7KQ2","discount_type":"p","value":10,"active":true}]}`}},
		}, "4471", []string{"POST /loja/pricing/promocodes", "GET /loja/pricing/promocodes?q=LOJ-ANA-7KQ2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFakePlatform(t, tt.routes)
			e, _ := newTestExecutor(t, fastPolicy())
			settings := guruCouponSettings(f.srv.URL)
			if tt.provider == provider.Yampi {
				settings = yampiCouponSettings(f.srv.URL)
			}
			res, err := e.ProvisionCoupon(context.Background(), tt.provider, settings,
				redemption.CouponRequest{Code: "LOJ-ANA-7KQ2", Discount: redemption.Discount{Type: "percentage", Value: 10}, Now: couponNow})
			if err != nil || res.CouponID != tt.wantID || !res.Adopted {
				t.Fatalf("ProvisionCoupon = %+v, %v; want %s adopted", res, err, tt.wantID)
			}
			var seen []string
			for _, r := range f.requests() {
				line := r.Method + " " + r.Path
				if r.Query != "" {
					line += "?" + r.Query
				}
				seen = append(seen, line)
			}
			if strings.Join(seen, "\n") != strings.Join(tt.wantSeen, "\n") {
				t.Errorf("requests:\n%s\nwant:\n%s", strings.Join(seen, "\n"), strings.Join(tt.wantSeen, "\n"))
			}
		})
	}
}

// TestProvisionCouponUpdates: a coupon provisioned before is updated in
// place; one deleted at the platform meanwhile (404) is created again.
func TestProvisionCouponUpdates(t *testing.T) {
	t.Parallel()
	f := newFakePlatform(t, map[string][]answer{
		"PUT /coupons/98231": {{status: 200, body: `{"id":"98231"}`}},
		"PUT /coupons/gone":  {{status: 404, body: `{"message":"not found"}`}},
		"POST /coupons":      {{status: 201, body: `{"id":"98300"}`}},
	})
	e, _ := newTestExecutor(t, fastPolicy())
	req := redemption.CouponRequest{Code: "LOJ-ANA-7KQ2", Discount: redemption.Discount{Type: "fixed", Value: 2000}, CouponID: "98231", Now: couponNow}
	res, err := e.ProvisionCoupon(context.Background(), provider.Guru, guruCouponSettings(f.srv.URL), req)
	if err != nil || res.CouponID != "98231" {
		t.Fatalf("update = %+v, %v", res, err)
	}
	body := jsonOf(t, f.requests()[0].Body)
	if body["incidence_type"] != "value" || body["incidence_value"] != float64(20) || body["coupon_code"] != "LOJ-ANA-7KQ2" {
		t.Errorf("PUT body = %v", body)
	}
	req.CouponID = "gone"
	if res, err = e.ProvisionCoupon(context.Background(), provider.Guru, guruCouponSettings(f.srv.URL), req); err != nil || res.CouponID != "98300" {
		t.Fatalf("update of a deleted coupon = %+v, %v; want it created again", res, err)
	}
	// Switched off: the update only, is_active false; a coupon already
	// gone needs nothing.
	req.Inactive, req.CouponID = true, "98231"
	if _, err = e.ProvisionCoupon(context.Background(), provider.Guru, guruCouponSettings(f.srv.URL), req); err != nil {
		t.Fatal(err)
	}
	reqs := f.requests()
	if last := reqs[len(reqs)-1]; last.Method != "PUT" || jsonOf(t, last.Body)["is_active"] != false {
		t.Errorf("switching off sent %s %s", last.Method, last.Body)
	}
	req.CouponID = "gone"
	if _, err = e.ProvisionCoupon(context.Background(), provider.Guru, guruCouponSettings(f.srv.URL), req); err != nil {
		t.Errorf("switching off a deleted coupon: %v", err)
	}
	if n := f.count("POST /coupons"); n != 1 {
		t.Errorf("%d creations, want only the one after the 404 of an update", n)
	}
}

// TestProvisionCouponFailures: transient failures are Unavailable (with the
// platform's Retry-After), refusals Unprocessable with its answer and no
// credential; settings that lack a credential send nothing.
func TestProvisionCouponFailures(t *testing.T) {
	t.Parallel()
	f := newFakePlatform(t, map[string][]answer{
		"POST /coupons": {
			{status: 503, header: map[string]string{"Retry-After": "7"}, body: `{"message":"down for guru-user-token"}`},
			{status: 400, body: `{"message":"incidence_value must be below 100"}`},
			{status: 422, body: `{"errors":{"incidence_value":["invalid"]}}`},
		},
		"GET /coupons": {{status: 200, body: `{"data":[]}`}},
	})
	e, _ := newTestExecutor(t, fastPolicy())
	req := redemption.CouponRequest{Code: "LOJ-ANA-7KQ2", Discount: redemption.Discount{Type: "percentage", Value: 10}, Now: couponNow}
	settings := guruCouponSettings(f.srv.URL)

	_, err := e.ProvisionCoupon(context.Background(), provider.Guru, settings, req)
	if !apperr.Is(err, apperr.Unavailable) || retry.RetryAfter(err) != 7*time.Second || strings.Contains(err.Error(), "guru-user-token") {
		t.Errorf("503: err = %v (retry after %s), want Unavailable with Retry-After 7s, token redacted", err, retry.RetryAfter(err))
	}
	_, err = e.ProvisionCoupon(context.Background(), provider.Guru, settings, req)
	if !apperr.Is(err, apperr.Unprocessable) || !strings.Contains(err.Error(), "incidence_value must be below 100") {
		t.Errorf("400: err = %v, want Unprocessable with the platform's message", err)
	}
	// A 422 that is not about the code: the lookup finds nothing and the
	// refusal stands.
	_, err = e.ProvisionCoupon(context.Background(), provider.Guru, settings, req)
	if !apperr.Is(err, apperr.Unprocessable) || !strings.Contains(err.Error(), "answered 422") {
		t.Errorf("422: err = %v, want Unprocessable naming the 422", err)
	}
	before := len(f.requests())
	_, err = e.ProvisionCoupon(context.Background(), provider.Yampi, merchant.Integration{UserToken: "yt", APIURL: f.srv.URL}, req)
	if !apperr.Is(err, apperr.Unprocessable) || !strings.Contains(err.Error(), "user secret key") || len(f.requests()) != before {
		t.Errorf("no secret key: err = %v, %d requests sent; want Unprocessable and none", err, len(f.requests())-before)
	}
}
