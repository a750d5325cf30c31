package httpapi_test

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

// The fuzz targets send arbitrary bodies to the create and update routes
// of members and campaigns. Whatever the body, the answer is never a 5xx
// (env.call fails on one) and is either the error envelope or the resource.
// Their seed corpora run in every go test; fuzz one with
//
//	go test ./pkg/httpapi -run '^$' -fuzz '^FuzzPatchMember$' -fuzztime 30s

var reWireCode = regexp.MustCompile(`^[a-z_]+$`)

// wantResourceOrError checks that r is 2xx {"data": {"id": <matching>, …}}
// or 4xx {"error": {"code", "message"}} with a lowercase code.
func wantResourceOrError(t *testing.T, r reply, reID *regexp.Regexp) {
	t.Helper()
	switch {
	case r.status >= 200 && r.status < 300:
		wantKeys(t, r, "", "data")
		wantFields(t, r, map[string]any{"data.id": reID})
	case r.status >= 400 && r.status < 500:
		wantKeys(t, r, "", "error")
		wantKeys(t, r, "error", "code", "message")
		wantFields(t, r, map[string]any{"error.code": reWireCode, "error.message": reNonEmpty})
	default:
		t.Fatalf("status %d is neither a resource nor an error; body %s", r.status, r.raw)
	}
}

// bodySeeds are bodies every target starts from: malformed, wrong-typed,
// unstorable and oversized input.
var bodySeeds = []string{
	``, ` `, `{}`, `[]`, `null`, `true`, `0`, `"x"`, `{`, `}`, `{} {}`, `{"a":1}x`, "\xff\xfe", `{"\u0000": 1}`,
	`{"name": "\u0000"}`, `{"name": "\ud800"}`, `{"name": "` + "\xff" + `"}`, `{"name": 1e1000000}`,
	`{"metadata": {"n": 1e-1000000}}`, `{"metadata": {"n": ` + strings.Repeat("9", 200) + `}}`,
	strings.Repeat("[", 20000) + strings.Repeat("]", 20000),
	`{"metadata": ` + strings.Repeat(`{"a":`, 5000) + `1` + strings.Repeat(`}`, 5000) + `}`,
	`{"name": "` + strings.Repeat("x", 1<<20) + `"}`,
}

func FuzzCreateMember(f *testing.F) {
	env := mustCatalogEnv(f)
	tn := env.mustTenant(f)
	camp := tn.mustCampaign(f, map[string]any{"name": "Padrão", "reward_type": "fixed", "reward_value": 1000})
	for _, s := range append([]string{
		`{"email": "ana@example.com", "name": "Ana"}`,
		`{"email": "bia@example.com", "name": "Bia", "external_id": "c1", "campaign_id": "` + camp + `", "metadata": {"a": [1, {"b": null}]}}`,
		`{"email": "ANA@example.com", "name": "Outra"}`,
		`{"email": "x@", "name": "X"}`,
		`{"email": "c@example.com", "name": "  "}`,
		`{"email": "c@example.com", "name": "C", "campaign_id": "camp_00000000000000000000000000000000"}`,
		`{"email": "c@example.com", "name": "C", "external_id": "` + strings.Repeat("e", 300) + `"}`,
		`{"email": ["c@example.com"], "name": {"first": "C"}}`,
		`{"email": "d@example.com", "name": "D", "metadata": []}`,
	}, bodySeeds...) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		wantResourceOrError(t, tn.do(t, http.MethodPost, "/api/v1/members", body), reMemberID)
	})
}

func FuzzPatchMember(f *testing.F) {
	env := mustCatalogEnv(f)
	tn := env.mustTenant(f)
	tn.mustCampaign(f, map[string]any{"name": "Padrão", "reward_type": "fixed", "reward_value": 1000})
	vip := tn.mustCampaign(f, map[string]any{"name": "VIP", "reward_type": "percentage", "reward_value": 10})
	m := tn.mustMember(f, "ana@example.com", "Ana")
	for _, s := range append([]string{
		`{"name": "Ana Maria"}`,
		`{"external_id": "cus_1", "status": "blocked", "campaign_id": "` + vip + `"}`,
		`{"metadata": {"plan": "pro", "n": 12345678901234567890}}`,
		`{"metadata": null, "name": null}`,
		`{"email": "new@example.com"}`,
		`{"status": "gone"}`,
		`{"campaign_id": "nope"}`,
		`{"metadata": [1]}`,
		`{"name": ""}`,
		`{"external_id": "` + strings.Repeat("e", 300) + `"}`,
	}, bodySeeds...) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		wantResourceOrError(t, tn.do(t, http.MethodPatch, "/api/v1/members/"+m.prefID, body), reMemberID)
	})
}

func FuzzCreateCampaign(f *testing.F) {
	env := mustCatalogEnv(f)
	tn := env.mustTenant(f)
	for _, s := range append([]string{
		`{"name": "Padrão", "reward_type": "fixed", "reward_value": 1000}`,
		`{"name": "VIP", "reward_type": "percentage", "reward_value": 10, "warranty_days": 30, "min_redemption": 500, "is_active": false, "auto_register": true, "is_default": true}`,
		`{"name": "X", "reward_type": "percentage", "reward_value": 101}`,
		`{"name": "X", "reward_type": "fixed", "reward_value": 9223372036854775807}`,
		`{"name": "X", "reward_type": "fixed", "reward_value": -9223372036854775808}`,
		`{"name": "X", "reward_type": "fixed", "reward_value": 1, "warranty_days": 2147483648}`,
		`{"name": "X", "reward_type": "fixed", "reward_value": 1.0}`,
		`{"name": "X", "reward_type": "points", "reward_value": 1}`,
		`{"name": "X", "reward_type": "fixed", "reward_value": null}`,
	}, bodySeeds...) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		wantResourceOrError(t, tn.do(t, http.MethodPost, "/api/v1/campaigns", body), reCampID)
	})
}

func FuzzPatchCampaign(f *testing.F) {
	env := mustCatalogEnv(f)
	tn := env.mustTenant(f)
	tn.mustCampaign(f, map[string]any{"name": "Padrão", "reward_type": "fixed", "reward_value": 1000})
	pct := tn.mustCampaign(f, map[string]any{"name": "VIP", "reward_type": "percentage", "reward_value": 10})
	for _, s := range append([]string{
		`{"name": "VIP 2", "reward_value": 50, "warranty_days": 0, "min_redemption": 100}`,
		`{"is_default": true}`,
		`{"is_default": false}`,
		`{"is_active": false, "auto_register": true}`,
		`{"reward_type": "fixed"}`,
		`{"reward_value": 101}`,
		`{"reward_value": 9223372036854775807}`,
		`{"warranty_days": -1}`,
		`{"warranty_days": 9223372036854775807}`,
		`{"min_redemption": 1000000001}`,
		`{"reward_value": null, "name": null}`,
		`{"referee_discount_type": "percentage", "referee_discount_value": 15}`,
		`{"referee_discount_type": "fixed", "referee_discount_value": 1550}`,
		`{"referee_discount_type": null}`,
		`{"referee_discount_value": 101}`,
	}, bodySeeds...) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		wantResourceOrError(t, tn.do(t, http.MethodPatch, "/api/v1/campaigns/"+pct, body), reCampID)
	})
}

// FuzzProvisionCoupon sends arbitrary member ids and bodies to POST
// /members/{id}/provision-coupon: never a 5xx, always the member or the
// error envelope.
func FuzzProvisionCoupon(f *testing.F) {
	env := mustCatalogEnv(f)
	tn := env.mustTenant(f)
	tn.mustCampaign(f, map[string]any{"name": "Padrão", "reward_type": "fixed", "reward_value": 1000,
		"referee_discount_type": "percentage", "referee_discount_value": 10})
	m := tn.mustMember(f, "ana@example.com", "Ana")
	for _, id := range []string{m.prefID, m.id.String(), "mem_00000000000000000000000000000000", "mem_x", "camp_" + strings.Repeat("0", 32),
		"%00", "..", strings.Repeat("9", 300)} {
		for _, body := range []string{``, `{}`, `{"x":1}`, `[`, "\xff"} {
			f.Add(id, body)
		}
	}
	f.Fuzz(func(t *testing.T, id, body string) {
		wantResourceOrError(t, tn.do(t, http.MethodPost, "/api/v1/members/"+url.PathEscape(id)+"/provision-coupon", body), reMemberID)
	})
}

// FuzzListQuery sends arbitrary query strings to the three lists: never a
// 5xx, always a list or the error envelope.
func FuzzListQuery(f *testing.F) {
	env := mustCatalogEnv(f)
	tn := env.mustTenant(f)
	tn.mustCampaign(f, map[string]any{"name": "Padrão", "reward_type": "fixed", "reward_value": 1000})
	tn.mustMember(f, "ana@example.com", "Ana")
	for _, s := range []string{
		"", "page=2&per_page=1", "status=active&search=an", "search=%25_%5C", "campaign_id=camp_x",
		"member_id=mem_00000000000000000000000000000000&status=pending", "created_after=2026-11-20&created_before=2026-11-21T00:00:00+03:00",
		"created_after=0000-01-01T00:00:00Z", "created_before=9999-12-31T23:59:59.999999999-23:59", "page=%00", "search=%ff",
		"per_page=100&page=2147483647", "search=" + strings.Repeat("%25", 255),
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, query string) {
		// A space, a control character or '#' cannot travel in a request
		// line: net/http refuses or cuts such a URL before the API sees it.
		if strings.ContainsFunc(query, func(r rune) bool { return r <= ' ' || r == 0x7f || r == '#' }) {
			t.Skip("not sendable in a request line")
		}
		for _, p := range []string{"/api/v1/members", "/api/v1/campaigns", "/api/v1/referrals"} {
			if _, err := http.NewRequest(http.MethodGet, env.url+p+"?"+query, nil); err != nil {
				t.Skip("not a request URL")
			}
			r := tn.get(t, p+"?"+query)
			switch {
			case r.status == http.StatusOK:
				wantKeys(t, r, "", "data", "pagination")
			case r.status >= 400 && r.status < 500:
				wantKeys(t, r, "", "error")
				wantFields(t, r, map[string]any{"error.code": reWireCode})
			default:
				t.Fatalf("%s?%s: %s", p, query, fmt.Sprint(r))
			}
		}
	})
}
