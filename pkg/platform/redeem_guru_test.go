package platform

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/merchant"
	"github.com/convida/convida/pkg/provider"
	"github.com/convida/convida/pkg/redemption"
)

const guruToken = "guru-user-token-S3CRET"

var testRedemptionID = uuid.MustParse("6f1c2d3e-4a5b-4c6d-8e7f-0123456789ab")

func guruSettings(apiURL string) merchant.Integration {
	return merchant.Integration{Provider: provider.Guru, UserToken: guruToken, APIURL: apiURL}
}

func guruRequest(subID string, cents int64) redemption.Request {
	return redemption.Request{RedemptionID: testRedemptionID, Type: redemption.TypeSubscriptionDiscount, Amount: cents, SubscriptionID: subID,
		Now: time.Date(2026, 3, 10, 15, 4, 5, 0, time.UTC)}
}

// decodeJSON decodes b keeping numbers as json.Number, so a test can tell a
// JSON number from a string.
func decodeJSON(t *testing.T, b []byte) map[string]any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		t.Fatalf("body %s: %v", b, err)
	}
	return m
}

func TestExecuteGuruSuccess(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name         string
		subID        string
		escapedPath  string
		subscription string
		cents        int64
		wantCycle    string
		wantValue    string
	}{
		{"charged_times", "sub_1", "sub_1", `{"id":"sub_1","charged_times":3,"last_status":"active"}`, 1050, "4", "10.50"},
		{"data.current_cycle", "sub_1", "sub_1", `{"data":{"id":"sub_1","current_cycle":2}}`, 1000, "3", "10.00"},
		{"cycle as a string", "sub_1", "sub_1", `{"cycle":"5"}`, 5, "6", "0.05"},
		{"never charged", "sub_1", "sub_1", `{"charged_times":0}`, 9790, "1", "97.90"},
		{"null charged_times falls back", "sub_1", "sub_1", `{"charged_times":null,"current_cycle":7}`, 100, "8", "1.00"},
		{"charged_times wins over cycle", "sub_1", "sub_1", `{"cycle":9,"charged_times":2}`, 100, "3", "1.00"},
		{"id is path-escaped", "sub/1 x", "sub%2F1%20x", `{"charged_times":1}`, 1050, "2", "10.50"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			sub := "/api/v2/subscriptions/" + tt.escapedPath
			fake := newFakePlatform(t, map[string][]answer{
				"GET " + sub:                         {{status: 200, body: tt.subscription}},
				"PUT " + sub + "/increment-discount": {{status: 200, body: `{"ok":true}`}},
			})
			e, rec := newTestExecutor(t, fastPolicy())

			got, err := e.Execute(context.Background(), guruSettings(fake.srv.URL+"/api/v2/"), guruRequest(tt.subID, tt.cents))
			if err != nil {
				t.Fatalf("Execute: %v", err)
			}
			if want := (redemption.Result{AppliedCycles: 1}); got != want {
				t.Errorf("result = %+v, want %+v", got, want)
			}
			reqs := fake.requests()
			if len(reqs) != 2 {
				t.Fatalf("got %d requests, want GET then PUT: %+v", len(reqs), reqs)
			}
			if reqs[0].Method != "GET" || reqs[0].Path != sub || len(reqs[0].Body) != 0 {
				t.Errorf("first request = %s %s (body %q), want GET %s without body", reqs[0].Method, reqs[0].Path, reqs[0].Body, sub)
			}
			if reqs[1].Method != "PUT" || reqs[1].Path != sub+"/increment-discount" {
				t.Errorf("second request = %s %s, want PUT %s/increment-discount", reqs[1].Method, reqs[1].Path, sub)
			}
			for _, r := range reqs {
				for k, want := range map[string]string{
					"Authorization":   "Bearer " + guruToken,
					"Accept":          "application/json",
					"Idempotency-Key": testRedemptionID.String(),
				} {
					if got := r.Header.Get(k); got != want {
						t.Errorf("%s %s: header %s = %q, want %q", r.Method, r.Path, k, got, want)
					}
				}
			}
			if got := reqs[1].Header.Get("Content-Type"); got != "application/json" {
				t.Errorf("PUT Content-Type = %q, want application/json", got)
			}

			body := decodeJSON(t, reqs[1].Body)
			if keys := slices.Sorted(maps.Keys(body)); !slices.Equal(keys, []string{"discount", "start_cycle"}) {
				t.Errorf("body keys = %v, want [discount start_cycle]", keys)
			}
			if got := body["start_cycle"]; got != json.Number(tt.wantCycle) {
				t.Errorf("start_cycle = %#v, want the JSON number %s", got, tt.wantCycle)
			}
			discount, _ := body["discount"].(map[string]any)
			if keys := slices.Sorted(maps.Keys(discount)); !slices.Equal(keys, []string{"cycles", "value"}) {
				t.Errorf("discount keys = %v, want [cycles value]", keys)
			}
			if got := discount["value"]; got != json.Number(tt.wantValue) {
				t.Errorf("discount.value = %#v, want the JSON number %s", got, tt.wantValue)
			}
			if got := discount["cycles"]; got != json.Number("1") {
				t.Errorf("discount.cycles = %#v, want 1", got)
			}
			if p := rec.recorded(); len(p) != 0 {
				t.Errorf("slept %v, want no pause", p)
			}
		})
	}
}

func TestExecuteGuruValueIsANumber(t *testing.T) {
	t.Parallel()
	fake := newFakePlatform(t, map[string][]answer{
		"GET /subscriptions/sub_1":                    {{status: 200, body: `{"charged_times":1}`}},
		"PUT /subscriptions/sub_1/increment-discount": {{status: 204}},
	})
	e, _ := newTestExecutor(t, fastPolicy())
	if _, err := e.Execute(context.Background(), guruSettings(fake.srv.URL), guruRequest("sub_1", 1050)); err != nil {
		t.Fatalf("Execute: %v", err)
	}
	var body struct {
		StartCycle int `json:"start_cycle"`
		Discount   struct {
			Value  float64 `json:"value"`
			Cycles int     `json:"cycles"`
		} `json:"discount"`
	}
	raw := fake.requests()[1].Body
	if err := json.Unmarshal(raw, &body); err != nil {
		t.Fatalf("body %s: %v", raw, err)
	}
	if body.StartCycle != 2 || body.Discount.Value != 10.5 || body.Discount.Cycles != 1 {
		t.Errorf("body = %+v, want start_cycle 2, value 10.5, cycles 1", body)
	}
}

func TestExecuteGuruWithoutCycle(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, subscription string }{
		{"no cycle fields", `{"id":"sub_1","last_status":"active"}`},
		{"all null", `{"charged_times":null,"current_cycle":null,"cycle":null}`},
		{"negative and fractional", `{"charged_times":-1,"cycle":2.5}`},
		{"not JSON", `<html>maintenance</html>`},
		{"an array", `[{"charged_times":1}]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fake := newFakePlatform(t, map[string][]answer{
				"GET /subscriptions/sub_1":                    {{status: 200, body: tt.subscription}},
				"PUT /subscriptions/sub_1/increment-discount": {{status: 200}},
			})
			e, rec := newTestExecutor(t, fastPolicy())
			_, err := e.Execute(context.Background(), guruSettings(fake.srv.URL), guruRequest("sub_1", 1050))
			if !apperr.Is(err, apperr.Unprocessable) {
				t.Fatalf("err = %v, want unprocessable", err)
			}
			if n := fake.count("PUT /subscriptions/sub_1/increment-discount"); n != 0 {
				t.Errorf("PUT sent %d times, want none", n)
			}
			if n := fake.count("GET /subscriptions/sub_1"); n != 1 {
				t.Errorf("GET sent %d times, want 1", n)
			}
			if p := rec.recorded(); len(p) != 0 {
				t.Errorf("slept %v, want no retry", p)
			}
		})
	}
}
