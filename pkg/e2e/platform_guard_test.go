package e2e

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/convida/convida/pkg/campaign"
	"github.com/convida/convida/pkg/ids"
	"github.com/convida/convida/pkg/netguard"
	"github.com/convida/convida/pkg/redemption"
	"github.com/convida/convida/pkg/testenv"
)

// canary is a server on loopback, TLS or plain, that counts the
// connections it accepts: while PLATFORM_ALLOW_PRIVATE_NETWORKS is off,
// Convida's platform client must open none to it.
type canary struct {
	srv   *httptest.Server
	conns atomic.Int64
}

func newCanary(t *testing.T, tls bool) *canary {
	c := &canary{}
	c.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"data":{"id":1},"charged_times":1}`))
	}))
	c.srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			c.conns.Add(1)
		}
	}
	if tls {
		c.srv.StartTLS()
	} else {
		c.srv.Start()
	}
	t.Cleanup(c.srv.Close)
	return c
}

// port is the canary's port, as text.
func (c *canary) port() string {
	u, _ := url.Parse(c.srv.URL)
	return u.Port()
}

// noAddress fails t when text repeats a loopback or metadata address, a
// canary's port, or a Go dial error.
func noAddress(t *testing.T, what, text string, canaries ...*canary) {
	t.Helper()
	leaks := []string{"127.0.0.1", "::ffff", "localhost", "169.254", "10.0.0.1", "dial tcp", "connect:"}
	for _, c := range canaries {
		leaks = append(leaks, c.port())
	}
	for _, leak := range leaks {
		if strings.Contains(text, leak) {
			t.Errorf("%s repeats %q: %s", what, leak, text)
		}
	}
}

// TestPlatformGuardRefusesPrivateAPIURLs: with PLATFORM_ALLOW_PRIVATE_NETWORKS
// off, a merchant cannot point Convida's platform client at the operator's
// network. The API refuses such an api_url with 400 naming api_url and not
// the address; an API URL already stored (a row written before the check,
// put here by SQL) makes the coupon provisioning fail and the redemption
// fail with the money returned, both saying the address is not public
// without naming it; and the canaries on loopback see no connection at all.
func TestPlatformGuardRefusesPrivateAPIURLs(t *testing.T) {
	t.Parallel()
	env := map[string]string{"PLATFORM_ALLOW_PRIVATE_NETWORKS": "false", "REDEMPTION_RETRY_DELAYS": "50ms,50ms,50ms,50ms",
		"ACTION_TIMEOUT": "60s"}
	for k, v := range couponEnv {
		env[k] = v
	}
	s := startStack(t, stackOptions{dispatcher: true, env: env})
	tlsCanary, plainCanary := newCanary(t, true), newCanary(t, false)
	t.Cleanup(func() {
		if n := tlsCanary.conns.Load() + plainCanary.conns.Load(); n != 0 {
			t.Errorf("the canaries accepted %d connections, want 0", n)
		}
	})

	t.Run("PUT refuses the address", func(t *testing.T) {
		tn := s.newTenant(testenv.FixedCampaign(500, 7))
		const notPublic, notHTTPS = "api_url: the address is not public", "api_url: only https URLs are allowed"
		for _, tc := range []struct{ apiURL, message string }{
			{tlsCanary.srv.URL + "/api/v2", notPublic},
			{plainCanary.srv.URL + "/api/v2", notHTTPS},
			{"http://api.dooki.com.br/v2", notHTTPS},
			{"https://localhost:" + tlsCanary.port() + "/v2", notPublic},
			{"https://169.254.169.254/latest/meta-data/", notPublic},
			{"https://[::ffff:127.0.0.1]:" + tlsCanary.port() + "/", notPublic},
			{"https://10.0.0.1/v2", notPublic},
		} {
			for _, p := range []string{"guru", "yampi"} {
				res := do(t, http.MethodPut, s.apiURL+"/api/v1/integrations/"+p,
					[]byte(`{"user_token": "ut-canary", "api_url": "`+tc.apiURL+`"}`),
					map[string]string{"X-API-Key": tn.apiKey, "Content-Type": "application/json"})
				e, _ := res.json(t)["error"].(map[string]any)
				if res.Status != http.StatusBadRequest || e["code"] != "validation_error" || e["message"] != tc.message {
					t.Errorf("PUT %s api_url %s = %d %s, want 400 validation_error %q", p, tc.apiURL, res.Status, res.Body, tc.message)
				}
				noAddress(t, "the refusal", string(res.Body), tlsCanary, plainCanary)
			}
		}
		// Nothing was saved: the stored settings are newTenant's.
		status, body := s.api(tn, http.MethodGet, "/integrations/yampi", nil)
		if data, _ := body["data"].(map[string]any); status != 200 || data["api_url"] != "https://api.dooki.com.br/v2" {
			t.Errorf("GET yampi after the refusals = %d %v", status, body)
		}
	})

	t.Run("a stored private API URL", func(t *testing.T) {
		for _, tc := range []struct {
			name    string
			canary  *canary
			message string
		}{
			{"https on loopback", tlsCanary, netguard.NoPublicAddress},
			{"plain http on loopback", plainCanary, "only https URLs are allowed"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				tn, ana := s.richMember(t, 5000, 0, nil, nil)
				discount := testenv.MustCampaign(t, s.deps.Pool, tn.merchant.ID, discounted(campaign.RewardPercentage, 10))
				if _, err := s.deps.Pool.Exec(context.Background(), `UPDATE integration_settings SET api_url = $2 WHERE merchant_id = $1`,
					tn.merchant.ID, tc.canary.srv.URL+"/v2"); err != nil {
					t.Fatal(err)
				}

				// (b) The member's coupons: failed at once, in words that do
				// not name the address.
				status, body := s.api(tn, http.MethodPost, "/members", []byte(`{"email": "bia@example.com", "name": "Bia", "campaign_id": "`+
					ids.Format(ids.Campaign, discount.ID)+`"}`))
				if status != 201 {
					t.Fatalf("POST /members = %d %v", status, body)
				}
				st := s.waitCoupons(tn, body["data"].(map[string]any)["id"].(string),
					map[string]string{"guru": redemption.CouponFailed, "yampi": redemption.CouponFailed})
				for _, p := range []string{"guru", "yampi"} {
					msg, _ := st[p]["error"].(string)
					if !strings.Contains(msg, tc.message) {
						t.Errorf("%s coupon error %q, want it to say %q", p, msg, tc.message)
					}
					noAddress(t, p+"'s coupon error", msg, tlsCanary, plainCanary)
				}

				// (c) Redemptions: refused by the platform client, the money
				// back in available.
				for _, redeem := range []string{
					`{"email":"ana@example.com","amount":1000,"destination":"store_coupon"}`,
					`{"email":"ana@example.com","amount":700,"destination":"billing_subscription","subscriptionId":"sub_1"}`,
				} {
					status, body := s.api(tn, http.MethodPost, "/wallet/redeem", []byte(redeem))
					e, _ := body["error"].(map[string]any)
					msg, _ := e["message"].(string)
					if status != 422 || e["code"] != "REDEMPTION_FAILED" || !strings.Contains(msg, tc.message) {
						t.Errorf("redeem %s = %d %v, want 422 REDEMPTION_FAILED saying %q", redeem, status, body, tc.message)
					}
					noAddress(t, "the redeem's 422", fmt.Sprint(body), tlsCanary, plainCanary)
				}
				s.waitBalance(tn, ana.Email, wallet{totalEarned: 5000, available: 5000})
				// The reasons kept, which the dashboard's Redemptions shows.
				rows, err := s.deps.Pool.Query(context.Background(), `SELECT failure_reason FROM redemptions WHERE merchant_id = $1`, tn.merchant.ID)
				if err != nil {
					t.Fatal(err)
				}
				reasons, err := pgx.CollectRows(rows, pgx.RowTo[string])
				if err != nil || len(reasons) != 2 {
					t.Fatalf("failure reasons %q, %v; want 2", reasons, err)
				}
				for _, r := range reasons {
					if !strings.Contains(r, tc.message) {
						t.Errorf("failure reason %q, want it to say %q", r, tc.message)
					}
					noAddress(t, "a failure reason", r, tlsCanary, plainCanary)
				}
			})
		}
	})
}

// TestPlatformCredentialsBoundToTheirURL: a merchant's API credentials
// never follow a new api_url or store_alias. Saved with platform A, they
// are dropped when only the URL moves to B (or only the store alias
// changes); the answer says the API is not configured and what it lacks;
// the coupons and the redemptions that follow do not call B, which never
// sees a credential stored before. Entering them again with B's URL
// provisions the coupon at B.
func TestPlatformCredentialsBoundToTheirURL(t *testing.T) {
	t.Parallel()
	env := map[string]string{"REDEMPTION_RETRY_DELAYS": "50ms,50ms,50ms,50ms", "ACTION_TIMEOUT": "60s"}
	for k, v := range couponEnv {
		env[k] = v
	}
	s := startStack(t, stackOptions{dispatcher: true, env: env})
	guruA, _ := newCouponShop(t, true)
	yampiA, _ := newCouponShop(t, false)
	guruB, guruBShop := newCouponShop(t, true)
	yampiB, yampiBShop := newCouponShop(t, false)

	tn, ana := s.richMember(t, 5000, 0, nil, nil)
	discount := testenv.MustCampaign(t, s.deps.Pool, tn.merchant.ID, discounted(campaign.RewardPercentage, 10))
	const (
		oldGuru, oldYampi, oldYampiKey = "guru-old-token-1111", "yampi-old-token-2222", "yampi-old-key-3333"
		newGuru, newYampi, newYampiKey = "guru-new-token-4444", "yampi-new-token-5555", "yampi-new-key-6666"
	)
	// B never sees a credential stored before it was B's, whatever else
	// fails.
	t.Cleanup(func() {
		for _, line := range append(guruB.seen(), yampiB.seen()...) {
			for _, old := range []string{oldGuru, oldYampi, oldYampiKey, "guru-user-token", "yt/ys"} {
				if strings.Contains(line, old) {
					t.Errorf("B received a credential given for another host: %q", line)
				}
			}
			if !strings.Contains(line, "Bearer "+newGuru) && !strings.Contains(line, newYampi+"/"+newYampiKey) {
				t.Errorf("B received a request without its own credentials: %q", line)
			}
		}
	})
	put := func(provider, body string, configured bool, missing string) map[string]any {
		t.Helper()
		status, res := s.api(tn, http.MethodPut, "/integrations/"+provider, []byte(body))
		data, _ := res["data"].(map[string]any)
		if status != 200 || data["api_configured"] != configured || fmt.Sprint(data["api_missing"]) != missing {
			t.Errorf("PUT %s %s = %d %v, want api_configured %v and api_missing %s", provider, body, status, res, configured, missing)
		}
		return data
	}
	put("guru", `{"user_token": "`+oldGuru+`", "api_url": "`+guruA.srv.URL+`"}`, true, "[]")
	put("yampi", `{"user_token": "`+oldYampi+`", "user_secret_key": "`+oldYampiKey+`", "api_url": "`+yampiA.srv.URL+`"}`, true, "[]")
	// The credentials work at A.
	if status, body := s.api(tn, http.MethodPost, "/wallet/redeem", []byte(`{"email":"ana@example.com","amount":500,"destination":"store_coupon"}`)); status != 200 {
		t.Fatalf("redeem at A = %d %v", status, body)
	}
	if seen := yampiA.seen(); len(seen) != 1 || !strings.Contains(seen[0], oldYampi+"/"+oldYampiKey) {
		t.Fatalf("A saw %q, want one call with the stored credentials", seen)
	}

	// Only the URL moves to B: the credentials are dropped.
	if data := put("guru", `{"api_url": "`+guruB.srv.URL+`"}`, false, "[user_token]"); data["user_token"] != "" || data["api_url"] != guruB.srv.URL {
		t.Errorf("guru after a new api_url alone = %v", data)
	}
	if data := put("yampi", `{"api_url": "`+yampiB.srv.URL+`"}`, false, "[user_token user_secret_key]"); data["user_token"] != "" ||
		data["user_secret_key"] != "" || data["store_alias"] != "loja" {
		t.Errorf("yampi after a new api_url alone = %v", data)
	}
	status, got := s.api(tn, http.MethodGet, "/integrations/guru", nil)
	if data, _ := got["data"].(map[string]any); status != 200 || data["api_configured"] != false || fmt.Sprint(data["api_missing"]) != "[user_token]" {
		t.Errorf("GET guru = %d %v", status, got)
	}

	// A member's coupons and a redemption: not configured, nothing sent.
	status, body := s.api(tn, http.MethodPost, "/members", []byte(`{"email": "caio@example.com", "name": "Caio", "campaign_id": "`+
		ids.Format(ids.Campaign, discount.ID)+`"}`))
	if status != 201 {
		t.Fatalf("POST /members = %d %v", status, body)
	}
	caio := body["data"].(map[string]any)["id"].(string)
	st := s.waitCoupons(tn, caio, map[string]string{"guru": redemption.CouponNotConfigured, "yampi": redemption.CouponNotConfigured})
	if st["guru"]["error"] != "the guru user token is not set in the merchant's settings" {
		t.Errorf("guru coupon = %v", st["guru"])
	}
	for _, redeem := range []string{
		`{"email":"ana@example.com","amount":500,"destination":"store_coupon"}`,
		`{"email":"ana@example.com","amount":500,"destination":"billing_subscription","subscriptionId":"sub_1"}`,
	} {
		status, body := s.api(tn, http.MethodPost, "/wallet/redeem", []byte(redeem))
		if e, _ := body["error"].(map[string]any); status != 422 || e["code"] != "INTEGRATION_NOT_CONFIGURED" {
			t.Errorf("redeem %s after the move = %d %v, want 422 INTEGRATION_NOT_CONFIGURED", redeem, status, body)
		}
	}
	s.waitBalance(tn, ana.Email, wallet{totalEarned: 5000, totalRedeemed: 500, available: 4500})
	if seen := append(guruB.seen(), yampiB.seen()...); len(seen) != 0 {
		t.Errorf("B saw %q, want no request while its credentials are not set", seen)
	}

	// The credentials entered again with B's URL: Caio's coupons are made
	// at B, with the new credentials only.
	put("guru", `{"user_token": "`+newGuru+`", "api_url": "`+guruB.srv.URL+`"}`, true, "[]")
	put("yampi", `{"user_token": "`+newYampi+`", "user_secret_key": "`+newYampiKey+`", "api_url": "`+yampiB.srv.URL+`"}`, true, "[]")
	s.waitCoupons(tn, caio, provisioned)
	if len(guruBShop.all()) != 1 || len(yampiBShop.all()) != 1 {
		t.Errorf("B holds %d Guru and %d Yampi coupons, want 1 and 1", len(guruBShop.all()), len(yampiBShop.all()))
	}

	// Only another store alias: Yampi's credentials are dropped again.
	if data := put("yampi", `{"store_alias": "outra-loja"}`, false, "[user_token user_secret_key]"); data["store_alias"] != "outra-loja" ||
		data["api_url"] != yampiB.srv.URL {
		t.Errorf("yampi after a new store alias alone = %v", data)
	}
	before := len(yampiB.seen())
	if status, body := s.api(tn, http.MethodPost, "/members/"+caio+"/provision-coupon", nil); status != 202 {
		t.Errorf("provision-coupon = %d %v", status, body)
	}
	s.waitCoupons(tn, caio, map[string]string{"guru": redemption.CouponProvisioned, "yampi": redemption.CouponNotConfigured})
	status, body = s.api(tn, http.MethodPost, "/wallet/redeem", []byte(`{"email":"ana@example.com","amount":500,"destination":"store_coupon"}`))
	if e, _ := body["error"].(map[string]any); status != 422 || e["code"] != "INTEGRATION_NOT_CONFIGURED" {
		t.Errorf("redeem after a new store alias = %d %v, want 422 INTEGRATION_NOT_CONFIGURED", status, body)
	}
	if n := len(yampiB.seen()); n != before {
		t.Errorf("Yampi B saw %d more requests after the store alias changed, want none", n-before)
	}
}
