package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/campaign"
	"github.com/convida/convida/pkg/ids"
	"github.com/convida/convida/pkg/merchant"
	"github.com/convida/convida/pkg/openapi/openapitest"
	"github.com/convida/convida/pkg/program"
	"github.com/convida/convida/pkg/redemption"
	"github.com/convida/convida/pkg/testenv"
)

// couponShop plays the coupons API of Guru or Yampi behind a platform, as
// webhooks.md "Referee coupons" settles it: it keeps coupons by code,
// refuses a second coupon of a code with 422 naming the code's field,
// finds coupons by code, and updates them by id.
type couponShop struct {
	guru bool
	// hold, when set, runs after a creation is kept and before it is
	// answered: a test blocks there to lose the answer.
	hold func(r *http.Request)

	mu      sync.Mutex
	coupons map[string]map[string]any // by upper-case code
	nextID  int
}

// newCouponShop returns a platform playing Guru's (guru true) or Yampi's
// coupons.
func newCouponShop(t *testing.T, guru bool) (*platform, *couponShop) {
	p, shop := newPlatform(t), &couponShop{guru: guru, coupons: map[string]map[string]any{}, nextID: 100}
	p.respond = shop.respond
	return p, shop
}

func (c *couponShop) codeField() string {
	if c.guru {
		return "coupon_code"
	}
	return "code"
}

func (c *couponShop) collection() string {
	if c.guru {
		return "/coupons"
	}
	return "/loja/pricing/promocodes"
}

// seed keeps a coupon made outside Convida (typed by hand) and returns it.
func (c *couponShop) seed(id string, fields map[string]any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	fields["id"] = id
	c.coupons[strings.ToUpper(fields[c.codeField()].(string))] = fields
}

// all returns the coupons kept, by code.
func (c *couponShop) all() map[string]map[string]any {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]map[string]any{}
	for k, v := range c.coupons {
		out[k] = v
	}
	return out
}

func (c *couponShop) wrap(obj any) string {
	var b []byte
	if c.guru {
		b, _ = json.Marshal(obj)
	} else {
		b, _ = json.Marshal(map[string]any{"data": obj})
	}
	return string(b)
}

func (c *couponShop) respond(r *http.Request, body []byte) (int, string) {
	var fields map[string]any
	_ = json.Unmarshal(body, &fields)
	switch {
	case r.Method == http.MethodPost && r.URL.Path == c.collection():
		code, _ := fields[c.codeField()].(string)
		c.mu.Lock()
		if _, taken := c.coupons[strings.ToUpper(code)]; taken {
			c.mu.Unlock()
			return http.StatusUnprocessableEntity, fmt.Sprintf(`{"message":"The given data was invalid.","errors":{%q:["The %s has already been taken."]}}`,
				c.codeField(), c.codeField())
		}
		c.nextID++
		fields["id"] = strconv.Itoa(c.nextID)
		c.coupons[strings.ToUpper(code)] = fields
		c.mu.Unlock()
		if c.hold != nil {
			c.hold(r)
		}
		return http.StatusCreated, c.wrap(fields)
	case r.Method == http.MethodGet && r.URL.Path == c.collection():
		code := r.URL.Query().Get("coupon_code")
		if !c.guru {
			code = r.URL.Query().Get("q")
		}
		found := []any{}
		if coupon, ok := c.all()[strings.ToUpper(code)]; ok {
			found = append(found, coupon)
		}
		b, _ := json.Marshal(map[string]any{"data": found})
		return http.StatusOK, string(b)
	case r.Method == http.MethodPut && strings.HasPrefix(r.URL.Path, c.collection()+"/"):
		id := strings.TrimPrefix(r.URL.Path, c.collection()+"/")
		c.mu.Lock()
		defer c.mu.Unlock()
		for code, coupon := range c.coupons {
			if coupon["id"] == id {
				fields["id"] = id
				c.coupons[code] = fields
				return http.StatusOK, c.wrap(fields)
			}
		}
		return http.StatusNotFound, `{"message":"coupon not found"}`
	}
	return http.StatusNotFound, `{"message":"no such route in the shop"}`
}

// couponEnv is the configuration of a stack that provisions coupons
// quickly: retries 50 ms apart, polls every 50 ms.
var couponEnv = map[string]string{"COUPON_RETRY_DELAYS": "50ms,50ms,50ms,50ms", "COUPON_POLL_INTERVAL": "50ms"}

// discounted is an active campaign whose members' friends get discount.
func discounted(typ string, value int64) campaign.Campaign {
	c := testenv.FixedCampaign(1000, 7)
	c.RefereeDiscountType, c.RefereeDiscountValue = typ, value
	return c
}

// couponTenant is a tenant of campaign c whose Guru and Yampi API calls go
// to guru and yampi (set before any member exists). The API credentials
// are sent again with the new api_url: without them it would drop the
// stored ones (merchant.Integration.Merge).
func (s *stack) couponTenant(t *testing.T, c campaign.Campaign, guru, yampi *platform) *tenant {
	tn := s.newTenant(c)
	for provider, body := range map[string]string{
		"guru":  `{"user_token": "guru-user-token", "api_url": "` + guru.srv.URL + `"}`,
		"yampi": `{"user_token": "yt", "user_secret_key": "ys", "api_url": "` + yampi.srv.URL + `"}`,
	} {
		if status, res := s.api(tn, http.MethodPut, "/integrations/"+provider, []byte(body)); status != 200 {
			t.Fatalf("PUT integration %s = %d %v", provider, status, res)
		}
	}
	return tn
}

// couponStates reads the member's coupon_provisioning through the API.
func (s *stack) couponStates(tn *tenant, memberID string) map[string]map[string]any {
	s.t.Helper()
	status, body := s.api(tn, http.MethodGet, "/members/"+memberID, nil)
	if status != 200 {
		s.t.Fatalf("GET member = %d %v", status, body)
	}
	out := map[string]map[string]any{}
	for p, v := range body["data"].(map[string]any)["coupon_provisioning"].(map[string]any) {
		out[p] = v.(map[string]any)
	}
	return out
}

// waitCoupons waits until the member's coupons have the statuses want
// (platform → status) and returns them.
func (s *stack) waitCoupons(tn *tenant, memberID string, want map[string]string) map[string]map[string]any {
	s.t.Helper()
	var got map[string]map[string]any
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		got = s.couponStates(tn, memberID)
		if got["guru"]["status"] == want["guru"] && got["yampi"]["status"] == want["yampi"] {
			return got
		}
		time.Sleep(25 * time.Millisecond)
	}
	s.t.Fatalf("coupon_provisioning of %s = %v, want %v", memberID, got, want)
	return nil
}

var provisioned = map[string]string{"guru": redemption.CouponProvisioned, "yampi": redemption.CouponProvisioned}

// requestLines returns the requests a platform received, "METHOD path" each,
// in order.
func requestLines(p *platform) []string {
	var out []string
	for _, line := range p.seen() {
		f := strings.SplitN(line, " ", 3)
		out = append(out, f[0]+" "+f[1])
	}
	return out
}

// wantCoupon checks the one creation of the member's coupon a platform
// received, field by field, with its credentials: a discount of value
// percent, or reais when fixed.
func wantCoupon(t *testing.T, p *platform, guru bool, code string, fixed bool, value any) {
	t.Helper()
	var posts []string
	for _, line := range p.seen() {
		if strings.HasPrefix(line, "POST ") && strings.Contains(line, `"`+code+`"`) {
			posts = append(posts, line)
		}
	}
	if len(posts) != 1 {
		t.Fatalf("%d creations of %s, want 1: %q", len(posts), code, p.seen())
	}
	// "POST path auth body", the auth perhaps with a space (Bearer).
	f := strings.SplitN(posts[0], " ", 3)
	i := strings.Index(f[2], "{")
	f = append(f[:2], strings.TrimSpace(f[2][:i]), f[2][i:])
	var body map[string]any
	if err := json.Unmarshal([]byte(f[3]), &body); err != nil {
		t.Fatalf("body %s: %v", f[3], err)
	}
	var want map[string]any
	if guru {
		if f[1] != "/coupons" || f[2] != "Bearer guru-user-token/" {
			t.Errorf("guru creation %s %s, want /coupons with the bearer token", f[1], f[2])
		}
		start, _ := body["date_ini"].(float64)
		if d := time.Since(time.Unix(int64(start), 0)); d < 0 || d > time.Minute {
			t.Errorf("date_ini %v is not now", body["date_ini"])
		}
		want = map[string]any{"coupon_code": code, "date_ini": start, "date_end": float64(time.Unix(int64(start), 0).AddDate(5, 0, 0).Unix()),
			"incidence_field": "total", "incidence_type": map[bool]string{false: "percent", true: "value"}[fixed], "incidence_value": value, "is_active": true,
			"usage_contact": float64(1), "usage_total": float64(0), "validate_by": "email"}
	} else {
		if f[1] != "/loja/pricing/promocodes" || f[2] != "yt/ys" {
			t.Errorf("yampi creation %s %s, want /loja/pricing/promocodes with User-Token and User-Secret-Key", f[1], f[2])
		}
		start, err := time.ParseInLocation("2006-01-02 15:04:05", fmt.Sprint(body["start_at"]), time.FixedZone("-03", -3*3600))
		if d := time.Since(start); err != nil || d < 0 || d > time.Minute {
			t.Errorf("start_at %v is not now in São Paulo", body["start_at"])
		}
		want = map[string]any{"active": true, "code": code, "discount_type": map[bool]string{false: "p", true: "v"}[fixed], "value": value, "quantity": float64(100000),
			"once_per_customer": true, "accumulate": false, "start_at": body["start_at"],
			"end_at": start.AddDate(5, 0, 0).Format("2006-01-02 15:04:05")}
	}
	if len(body) != len(want) {
		t.Errorf("coupon body has %d fields, want %d: %v", len(body), len(want), body)
	}
	for k, w := range want {
		if body[k] != w {
			t.Errorf("coupon body %s = %#v, want %#v", k, body[k], w)
		}
	}
}

// TestCouponProvisioning runs the dispatcher against local Guru and Yampi
// coupon shops: a member created through the API or /member/me gets its
// code as a coupon at both, once; a 500 is retried; a change of the
// campaign's discount updates every member's coupons; an unconfigured
// platform or a campaign without a discount sends nothing; a platform that
// is down never stops the member's creation, and provision-coupon tries
// again.
func TestCouponProvisioning(t *testing.T) {
	t.Parallel()
	s := startStack(t, stackOptions{dispatcher: true, env: couponEnv})
	v := openapitest.New(t)

	t.Run("created once at each platform, updated when the discount changes", func(t *testing.T) {
		guru, guruShop := newCouponShop(t, true)
		yampi, yampiShop := newCouponShop(t, false)
		tn := s.couponTenant(t, discounted(campaign.RewardPercentage, 10), guru, yampi)
		c := s.validated(t, v, tn)
		out := c.want("POST", "/members", map[string]any{"email": "ana@example.com", "name": "Ana Souza"}, 201, "")
		ana := out["data"].(map[string]any)
		for _, p := range []string{"guru", "yampi"} {
			st := ana["coupon_provisioning"].(map[string]any)[p].(map[string]any)
			if st["status"] != "pending" || st["coupon_id"] != nil || st["error"] != nil {
				t.Errorf("new member's %s coupon = %v, want pending", p, st)
			}
		}
		anaCode := ana["coupon_code"].(string)
		// The member-facing auto-creation provisions too.
		if status, body := s.api(tn, http.MethodGet, "/member/me?autoCreate=true&email=bia@example.com&name=Bia+Lima", nil); status != 200 {
			t.Fatalf("GET /member/me = %d %v", status, body)
		}
		var biaID uuid.UUID
		var biaCode string
		_ = s.deps.Pool.QueryRow(t.Context(), `SELECT id, coupon_code FROM members WHERE merchant_id = $1 AND email = 'bia@example.com'`,
			tn.merchant.ID).Scan(&biaID, &biaCode)
		bia := ids.Format(ids.Member, biaID)

		states := s.waitCoupons(tn, ana["id"].(string), provisioned)
		s.waitCoupons(tn, bia, provisioned)
		wantCoupon(t, guru, true, anaCode, false, float64(10))
		wantCoupon(t, yampi, false, anaCode, false, float64(10))
		wantCoupon(t, guru, true, biaCode, false, float64(10))
		wantCoupon(t, yampi, false, biaCode, false, float64(10))
		if got := states["guru"]["coupon_id"]; got != guruShop.all()[anaCode]["id"] || got == nil || states["guru"]["error"] != nil {
			t.Errorf("guru coupon = %v, want the id the platform gave (%v)", states["guru"], guruShop.all()[anaCode]["id"])
		}
		if got := states["yampi"]["coupon_id"]; got != yampiShop.all()[anaCode]["id"] || got == nil {
			t.Errorf("yampi coupon = %v, want the id the platform gave (%v)", states["yampi"], yampiShop.all()[anaCode]["id"])
		}
		if n := len(guru.seen()) + len(yampi.seen()); n != 4 {
			t.Errorf("the platforms saw %d requests, want 4 creations: %q %q", n, guru.seen(), yampi.seen())
		}
		// A GET of the list shows the same states.
		list := c.want("GET", "/members", nil, 200, "")
		for _, item := range list["data"].([]any) {
			cp := item.(map[string]any)["coupon_provisioning"].(map[string]any)
			if cp["guru"].(map[string]any)["status"] != "provisioned" || cp["yampi"].(map[string]any)["status"] != "provisioned" {
				t.Errorf("listed member's coupons = %v", cp)
			}
		}

		// The discount changes: every member's coupon is updated, once.
		c.want("PATCH", "/campaigns/"+ids.Format(ids.Campaign, tn.campaign.ID), map[string]any{"referee_discount_value": 15}, 200, "")
		testenv.Eventually(t, 30*time.Second, "the coupons updated at both platforms", func() bool {
			return len(guru.seen()) == 4 && len(yampi.seen()) == 4
		})
		s.waitCoupons(tn, ana["id"].(string), provisioned)
		s.waitCoupons(tn, bia, provisioned)
		for code, shop := range map[string]*couponShop{anaCode: guruShop, biaCode: guruShop} {
			if got := shop.all()[code]["incidence_value"]; got != float64(15) {
				t.Errorf("guru coupon %s gives %v, want 15", code, got)
			}
		}
		for _, code := range []string{anaCode, biaCode} {
			if got := yampiShop.all()[code]["value"]; got != float64(15) {
				t.Errorf("yampi coupon %s gives %v, want 15", code, got)
			}
		}
		puts := append(requestLines(guru)[2:], requestLines(yampi)[2:]...)
		want := []string{"PUT /coupons/" + fmt.Sprint(guruShop.all()[anaCode]["id"]), "PUT /coupons/" + fmt.Sprint(guruShop.all()[biaCode]["id"]),
			"PUT /loja/pricing/promocodes/" + fmt.Sprint(yampiShop.all()[anaCode]["id"]), "PUT /loja/pricing/promocodes/" + fmt.Sprint(yampiShop.all()[biaCode]["id"])}
		if !sameSet(puts, want) {
			t.Errorf("after the change the platforms saw %q, want %q", puts, want)
		}
		if len(guruShop.all()) != 2 || len(yampiShop.all()) != 2 {
			t.Errorf("the platforms hold %d and %d coupons, want 2 each", len(guruShop.all()), len(yampiShop.all()))
		}

		// The discount is removed: the coupons are switched off, not left
		// giving it.
		c.want("PATCH", "/campaigns/"+ids.Format(ids.Campaign, tn.campaign.ID), map[string]any{"referee_discount_type": nil}, 200, "")
		off := map[string]string{"guru": redemption.CouponNotConfigured, "yampi": redemption.CouponNotConfigured}
		st := s.waitCoupons(tn, bia, off)
		if st["guru"]["coupon_id"] == nil || !strings.Contains(fmt.Sprint(st["guru"]["error"]), "switched off") {
			t.Errorf("after the removal bia's guru coupon = %v", st["guru"])
		}
		s.waitCoupons(tn, ana["id"].(string), off)
		for _, code := range []string{anaCode, biaCode} {
			if g, y := guruShop.all()[code], yampiShop.all()[code]; g["is_active"] != false || g["incidence_value"] != float64(15) ||
				y["active"] != false || y["value"] != float64(15) {
				t.Errorf("coupons of %s after the removal: guru %v, yampi %v; want switched off", code, g, y)
			}
		}
		if n := len(guru.seen()) + len(yampi.seen()); n != 12 {
			t.Errorf("the platforms saw %d requests, want 12 (4 creations, 4 updates, 4 switched off)", n)
		}
	})

	t.Run("a 500 is retried", func(t *testing.T) {
		guru, guruShop := newCouponShop(t, true)
		yampi, _ := newCouponShop(t, false)
		guru.fail = func(n int64, _ string) int {
			if n == 1 {
				return http.StatusInternalServerError
			}
			return 0
		}
		tn := s.couponTenant(t, discounted(campaign.RewardPercentage, 10), guru, yampi)
		m := s.newMember(tn, "caio@example.com", "Caio Reis")
		st := s.waitCoupons(tn, ids.Format(ids.Member, m.ID), provisioned)
		if got := requestLines(guru); fmt.Sprint(got) != "[POST /coupons POST /coupons]" {
			t.Errorf("guru saw %q, want the failed creation and its retry", got)
		}
		if len(guruShop.all()) != 1 || st["guru"]["coupon_id"] != guruShop.all()[m.CouponCode]["id"] {
			t.Errorf("guru holds %v; the member shows %v", guruShop.all(), st["guru"])
		}
	})

	t.Run("not configured", func(t *testing.T) {
		guru, _ := newCouponShop(t, true)
		tn := &tenant{}
		created := testenv.MustTenant(t, s.deps.Pool, s.deps.Box, merchant.Merchant{},
			merchant.Integration{Provider: merchant.ProviderGuru, UserToken: "guru-user-token", APIURL: guru.srv.URL},
			merchant.Integration{Provider: merchant.ProviderYampi, WebhookSecret: "wh_secret"}) // webhooks only
		tn.merchant, tn.apiKey = created.Merchant, created.Key
		tn.campaign = testenv.MustCampaign(t, s.deps.Pool, tn.merchant.ID, discounted(campaign.RewardFixed, 1550))
		plain := testenv.MustCampaign(t, s.deps.Pool, tn.merchant.ID, testenv.FixedCampaign(1000, 7)) // no discount
		m := s.newMember(tn, "duda@example.com", "Duda")
		st := s.waitCoupons(tn, ids.Format(ids.Member, m.ID), map[string]string{"guru": "provisioned", "yampi": "not_configured"})
		if st["yampi"]["error"] != "the yampi user token is not set in the merchant's settings" || st["yampi"]["coupon_id"] != nil {
			t.Errorf("yampi = %v", st["yampi"])
		}
		if got := guru.seen(); len(got) != 1 || !strings.Contains(got[0], `"incidence_type":"value","incidence_value":15.50`) {
			t.Errorf("guru saw %q, want one creation of a 15.50 discount", got)
		}
		c := s.validated(t, v, tn)
		out := c.want("POST", "/members", map[string]any{"email": "edu@example.com", "name": "Edu", "campaign_id": ids.Format(ids.Campaign, plain.ID)}, 201, "")
		edu := out["data"].(map[string]any)["id"].(string)
		st = s.waitCoupons(tn, edu, map[string]string{"guru": "not_configured", "yampi": "not_configured"})
		if st["guru"]["error"] != redemption.NoRefereeDiscount {
			t.Errorf("guru of a campaign without discount = %v", st["guru"])
		}
		if n := len(guru.seen()); n != 1 {
			t.Errorf("guru saw %d requests, want only Duda's", n)
		}
		// Yampi's credentials are set: the coupons that lacked them are
		// provisioned; Edu's campaign still gives no discount.
		yampi, yampiShop := newCouponShop(t, false)
		c.want("PUT", "/integrations/yampi", map[string]any{"user_token": "yt", "user_secret_key": "ys", "store_alias": "loja",
			"api_url": yampi.srv.URL}, 200, "")
		s.waitCoupons(tn, ids.Format(ids.Member, m.ID), provisioned)
		wantCoupon(t, yampi, false, m.CouponCode, true, 15.5)
		if st := s.couponStates(tn, edu); st["yampi"]["status"] != "not_configured" || st["yampi"]["error"] != redemption.NoRefereeDiscount {
			t.Errorf("edu's yampi coupon = %v", st["yampi"])
		}
		if len(yampiShop.all()) != 1 || len(guru.seen()) != 1 {
			t.Errorf("yampi holds %d coupons, guru saw %d requests; want 1 and 1", len(yampiShop.all()), len(guru.seen()))
		}
		// Edu moves to the discounted campaign: his code is provisioned.
		c.want("PATCH", "/members/"+edu, map[string]any{"campaign_id": ids.Format(ids.Campaign, tn.campaign.ID)}, 200, "")
		s.waitCoupons(tn, edu, provisioned)
		if len(yampiShop.all()) != 2 || len(guru.seen()) != 2 {
			t.Errorf("yampi holds %d coupons, guru saw %d requests; want 2 and 2", len(yampiShop.all()), len(guru.seen()))
		}
	})

	t.Run("platform down", func(t *testing.T) {
		guru, guruShop := newCouponShop(t, true)
		yampi, _ := newCouponShop(t, false)
		var down atomic.Bool
		down.Store(true)
		guru.fail = func(int64, string) int {
			if down.Load() {
				return http.StatusServiceUnavailable
			}
			return 0
		}
		tn := s.couponTenant(t, discounted(campaign.RewardPercentage, 5), guru, yampi)
		c := s.validated(t, v, tn)
		out := c.want("POST", "/members", map[string]any{"email": "fabi@example.com", "name": "Fabi"}, 201, "")
		fabi := out["data"].(map[string]any)["id"].(string)
		st := s.waitCoupons(tn, fabi, map[string]string{"guru": "failed", "yampi": "provisioned"})
		if e, _ := st["guru"]["error"].(string); !strings.Contains(e, "answered 503") || !strings.Contains(e, "gave up after 5 attempts") {
			t.Errorf("guru error = %q", e)
		}
		if n := len(guru.seen()); n != 5 {
			t.Errorf("guru saw %d tries, want 5", n)
		}
		// Back up: provision-coupon tries again; Yampi's coupon is updated
		// in place, not duplicated.
		down.Store(false)
		out = c.want("POST", "/members/"+fabi+"/provision-coupon", nil, 202, "")
		if st := out["data"].(map[string]any)["coupon_provisioning"].(map[string]any)["guru"].(map[string]any); st["status"] != "pending" {
			t.Errorf("provision-coupon answered guru %v, want pending", st)
		}
		st = s.waitCoupons(tn, fabi, provisioned)
		if len(guruShop.all()) != 1 || st["guru"]["error"] != nil {
			t.Errorf("guru holds %d coupons, shows %v", len(guruShop.all()), st["guru"])
		}
		if got := requestLines(yampi); fmt.Sprint(got) != fmt.Sprintf("[POST /loja/pricing/promocodes PUT /loja/pricing/promocodes/%v]", st["yampi"]["coupon_id"]) {
			t.Errorf("yampi saw %q", got)
		}
		c.want("POST", "/members/mem_"+zeros+"/provision-coupon", nil, 404, "not_found")
	})
	v.WantExercised(t, ex("createMember", 201), ex("provisionMemberCoupon", 202), ex("provisionMemberCoupon", 404),
		ex("updateCampaign", 200), ex("listMembers", 200), ex("updateMember", 200), ex("putIntegration", 200))
}

// sameSet reports whether a and b hold the same strings, in any order.
func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	count := map[string]int{}
	for _, s := range a {
		count[s]++
	}
	for _, s := range b {
		count[s]--
	}
	for _, n := range count {
		if n != 0 {
			return false
		}
	}
	return true
}

// couponRow reads a provisioning row as the provisioner left it.
func (s *stack) couponRow(memberID uuid.UUID, platform string) (status, couponID string, leased bool) {
	s.t.Helper()
	err := s.deps.Pool.QueryRow(context.Background(), `SELECT status, COALESCE(coupon_id, ''), lease_token IS NOT NULL
FROM coupon_provisions WHERE member_id = $1 AND platform = $2`, memberID, platform).Scan(&status, &couponID, &leased)
	if err != nil {
		s.t.Fatal(err)
	}
	return status, couponID, leased
}

// TestCouponProvisioningAcrossARestart stops the provisioner after Guru
// received a creation and before its answer: the next provisioner finds
// the code taken and adopts the coupon, never making a second one. A
// coupon the merchant typed by hand is adopted too, and updated to carry
// the discount.
func TestCouponProvisioningAcrossARestart(t *testing.T) {
	t.Parallel()
	s := startStack(t, stackOptions{env: couponEnv}) // no dispatcher: the test runs the provisioners

	guru, guruShop := newCouponShop(t, true)
	yampi, _ := newCouponShop(t, false)
	received := make(chan struct{})
	var tries atomic.Int64
	guruShop.hold = func(r *http.Request) {
		if tries.Add(1) == 1 { // the first answer is lost: the provisioner stops meanwhile
			close(received)
			<-r.Context().Done()
		}
	}
	tn := s.couponTenant(t, discounted(campaign.RewardPercentage, 10), guru, yampi)
	ana := s.newMember(tn, "ana@example.com", "Ana Souza")

	handGuru, handGuruShop := newCouponShop(t, true)
	handYampi, handYampiShop := newCouponShop(t, false)
	hand := s.couponTenant(t, discounted(campaign.RewardPercentage, 10), handGuru, handYampi)
	bia := s.newMember(hand, "bia@example.com", "Bia Lima")
	handGuruShop.seed("hand-1", map[string]any{"coupon_code": bia.CouponCode, "incidence_type": "value", "incidence_value": 0, "is_active": true})
	handYampiShop.seed("555", map[string]any{"code": bia.CouponCode, "discount_type": "p", "value": 10, "active": true})

	start := func() (stop func()) {
		p := program.NewProvisioner(s.deps)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- p.Run(ctx) }()
		return func() {
			cancel()
			if err := <-done; err != nil && err != context.Canceled {
				t.Errorf("provisioner: %v", err)
			}
		}
	}
	stop := start()
	select {
	case <-received:
	case <-time.After(30 * time.Second):
		t.Fatal("guru never received the creation")
	}
	s.waitCoupons(tn, ids.Format(ids.Member, ana.ID), map[string]string{"guru": "pending", "yampi": "provisioned"})
	s.waitCoupons(hand, ids.Format(ids.Member, bia.ID), provisioned)
	stop()
	if status, id, leased := s.couponRow(ana.ID, "guru"); status != "pending" || id != "" || leased {
		t.Fatalf("after the stop: guru row %s, coupon %q, leased %v; want pending, none, released", status, id, leased)
	}
	if len(guruShop.all()) != 1 {
		t.Fatalf("guru holds %d coupons before the restart, want the one whose answer was lost", len(guruShop.all()))
	}

	stop = start()
	defer stop()
	st := s.waitCoupons(tn, ids.Format(ids.Member, ana.ID), provisioned)
	if got, want := fmt.Sprint(requestLines(guru)), "[POST /coupons POST /coupons GET /coupons?coupon_code="+url.QueryEscape(ana.CouponCode)+"]"; got != want {
		t.Errorf("guru saw %s, want %s", got, want)
	}
	if len(guruShop.all()) != 1 || st["guru"]["coupon_id"] != guruShop.all()[ana.CouponCode]["id"] {
		t.Errorf("guru holds %v; the member shows %v: want the first coupon adopted", guruShop.all(), st["guru"])
	}

	// Typed by hand: adopted at both; Guru's, without the discount, updated.
	st = s.couponStates(hand, ids.Format(ids.Member, bia.ID))
	if st["guru"]["coupon_id"] != "hand-1" || st["yampi"]["coupon_id"] != "555" {
		t.Errorf("bia's coupons = %v, want hand-1 and 555 adopted", st)
	}
	if got, want := fmt.Sprint(requestLines(handGuru)), "[POST /coupons GET /coupons?coupon_code="+url.QueryEscape(bia.CouponCode)+" PUT /coupons/hand-1]"; got != want {
		t.Errorf("guru saw %s, want %s", got, want)
	}
	if got, want := fmt.Sprint(requestLines(handYampi)), "[POST /loja/pricing/promocodes GET /loja/pricing/promocodes?q="+url.QueryEscape(bia.CouponCode)+"]"; got != want {
		t.Errorf("yampi saw %s, want %s", got, want)
	}
	if c := handGuruShop.all()[bia.CouponCode]; c["incidence_type"] != "percent" || c["incidence_value"] != float64(10) || len(handGuruShop.all()) != 1 {
		t.Errorf("guru holds %v, want hand-1 giving 10 percent", handGuruShop.all())
	}
}
