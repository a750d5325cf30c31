package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/convida/convida/pkg/campaign"
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
// percent, or reais when fixed, valid from now on s's clock.
func (s *stack) wantCoupon(t *testing.T, p *platform, guru bool, code string, fixed bool, value any) {
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
		if d := s.clock.Now().Sub(time.Unix(int64(start), 0)); d < 0 || d > time.Minute {
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
		if d := s.clock.Now().Sub(start); err != nil || d < 0 || d > time.Minute {
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
