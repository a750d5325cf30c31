package e2e

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/campaign"
	"github.com/convida/convida/pkg/ids"
	"github.com/convida/convida/pkg/merchant"
	"github.com/convida/convida/pkg/openapi/openapitest"
	"github.com/convida/convida/pkg/program"
	"github.com/convida/convida/pkg/provider"
	"github.com/convida/convida/pkg/redemption"
	"github.com/convida/convida/pkg/testenv"
)

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
		s.wantCoupon(t, guru, true, anaCode, false, float64(10))
		s.wantCoupon(t, yampi, false, anaCode, false, float64(10))
		s.wantCoupon(t, guru, true, biaCode, false, float64(10))
		s.wantCoupon(t, yampi, false, biaCode, false, float64(10))
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
			merchant.Integration{Provider: provider.Guru, UserToken: "guru-user-token", APIURL: guru.srv.URL},
			merchant.Integration{Provider: provider.Yampi, WebhookSecret: "wh_secret"}) // webhooks only
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
		s.wantCoupon(t, yampi, false, m.CouponCode, true, 15.5)
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
