package e2e

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/convida/convida/pkg/campaign"
	"github.com/convida/convida/pkg/ids"
	"github.com/convida/convida/pkg/merchant"
	"github.com/convida/convida/pkg/netguard"
	platformapi "github.com/convida/convida/pkg/platform"
	"github.com/convida/convida/pkg/postgres"
	"github.com/convida/convida/pkg/program"
	"github.com/convida/convida/pkg/reconcile"
	"github.com/convida/convida/pkg/redemption"
	"github.com/convida/convida/pkg/testenv"
)

// plantedCredentials are the credentials every platform call of the log
// test carries, some with characters a query, a form or a path escapes.
type plantedCredentials struct {
	guruAccount, guruUser, yampiHook, yampiToken, yampiKey string
	hottok, hmSecret, hmBasic, kwHook, kwSecret, access    string
}

var logSecrets = plantedCredentials{
	guruAccount: "guru-account-PLANTED-0123456789abcdef", guruUser: "guru-user/PLANTED+1=",
	yampiHook: "yampi-hook-PLANTED", yampiToken: "yampi-token&PLANTED", yampiKey: "yampi key/PLANTED+2",
	hottok: "hottok-PLANTED-abcdef", hmSecret: "hm-secret&=/+PLANTED", hmBasic: "aG0tUExBTlRFRC1iYXNpYw==",
	kwHook: "kiwify-hook-PLANTED", kwSecret: "kw-secret?&=+PLANTED", access: "access-token-PLANTED",
}

// all is every value in every spelling a request carries it.
func (p plantedCredentials) all() []string {
	var out []string
	for _, s := range []string{p.guruAccount, p.guruUser, p.yampiHook, p.yampiToken, p.yampiKey, p.hottok, p.hmSecret, p.hmBasic,
		p.kwHook, p.kwSecret, p.access} {
		out = append(out, s, url.QueryEscape(s), url.PathEscape(s))
	}
	return out
}

// echoPlatform refuses every call with status, its body repeating the
// request whole (URL and query, credentials' headers, body); with tokens
// it issues the planted access token at any path ending in "token".
func echoPlatform(t *testing.T, status int, tokens bool) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		if tokens && strings.HasSuffix(r.URL.Path, "token") {
			fmt.Fprintf(w, `{"access_token":%q,"expires_in":3600}`, logSecrets.access)
			return
		}
		w.WriteHeader(status)
		fmt.Fprintf(w, `{"error":"refused","url":%q,"authorization":%q,"user_token":%q,"secret_key":%q,"body":%q}`,
			r.URL.String(), r.Header.Get("Authorization"), r.Header.Get("User-Token"), r.Header.Get("User-Secret-Key"), body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// logPath is one way a platform call fails, on the stack whose guard it
// needs: base is where every API of the tenant points; tokens, when set,
// is a platform that issues the access token (Hotmart's auth_url, and
// Kiwify's API when the failure comes after the token).
type logPath struct {
	name   string
	s      *stack
	base   string
	says   string
	tokens string
}

// TestNoSecretInAnyLog: for every platform credential (Guru's account and
// user tokens; Yampi's webhook secret, user token and secret key;
// Hotmart's hottok, client secret, basic token and access token; Kiwify's
// webhook token, client secret and access token) and every way a call
// fails (an address the guard refuses, no such host, connection refused,
// 401, 5xx), through every call that carries it (the reconciliation pull
// and the OAuth token request, the redemptions, the members' coupons),
// the programs' captured log holds none of the planted values, in any
// spelling. Each failure is checked to have happened as named, in the
// words the merchant is shown.
func TestNoSecretInAnyLog(t *testing.T) {
	t.Parallel()
	env := func(allowPrivate string) map[string]string {
		e := map[string]string{"PLATFORM_ALLOW_PRIVATE_NETWORKS": allowPrivate, "REDEMPTION_RETRY_DELAYS": "10ms,10ms,10ms",
			"ACTION_TIMEOUT": "60s"}
		for k, v := range couponEnv {
			e[k] = v
		}
		return e
	}
	refusedTLS := httptest.NewTLSServer(http.NotFoundHandler())
	t.Cleanup(refusedTLS.Close)
	closed := func() string {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		return "http://" + l.Addr().String()
	}()
	tokens := echoPlatform(t, http.StatusTeapot, true)
	guarded := startStack(t, stackOptions{dispatcher: true, observe: true, env: env("false")})
	open := startStack(t, stackOptions{dispatcher: true, observe: true, env: env("true")})
	paths := []logPath{
		{"refused address", guarded, refusedTLS.URL, netguard.NoPublicAddress, ""},
		{"no such host", open, "http://convida-platform.invalid", netguard.NoPublicAddress, tokens},
		{"connection refused", open, closed, "connection refused", tokens},
		{"401", open, echoPlatform(t, http.StatusUnauthorized, false), "answered 401", echoPlatform(t, http.StatusUnauthorized, true)},
		{"5xx", open, echoPlatform(t, http.StatusServiceUnavailable, false), "answered 503", echoPlatform(t, http.StatusServiceUnavailable, true)},
	}
	for _, p := range paths {
		t.Run(p.name, func(t *testing.T) { failEveryCall(t, p) })
	}
	for name, s := range map[string]*stack{"guarded": guarded, "open": open} {
		enc := zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig())
		entries := s.logs.All()
		if len(entries) == 0 {
			t.Fatalf("the %s stack logged nothing", name)
		}
		for _, e := range entries {
			buf, err := enc.EncodeEntry(e.Entry, e.Context)
			if err != nil {
				t.Fatal(err)
			}
			line := buf.String()
			for _, secret := range logSecrets.all() {
				if strings.Contains(line, secret) {
					t.Errorf("the %s stack's log holds the planted %q: %s", name, secret, line)
				}
			}
		}
	}
}

// failEveryCall makes every platform call of two tenants fail the way p
// says, and checks each failed so.
func failEveryCall(t *testing.T, p logPath) {
	s, ls := p.s, logSecrets
	store := postgres.NewMerchantStore(s.deps.Pool, s.deps.Box)
	put := func(tn *tenant, in merchant.Integration) {
		t.Helper()
		if _, err := store.PutIntegration(context.Background(), tn.merchant.ID, in); err != nil {
			t.Fatal(err)
		}
	}
	// Tenant 1: every API of the four platforms at the failing address.
	tn, ana := s.richMember(t, 5000, 0, nil, nil)
	discount := testenv.MustCampaign(t, s.deps.Pool, tn.merchant.ID, discounted(campaign.RewardPercentage, 10))
	put(tn, merchant.Integration{Provider: "guru", AccountToken: ls.guruAccount, UserToken: ls.guruUser, APIURL: p.base + "/guru"})
	put(tn, merchant.Integration{Provider: "yampi", WebhookSecret: ls.yampiHook, UserToken: ls.yampiToken, UserSecretKey: ls.yampiKey,
		StoreAlias: "loja", APIURL: p.base + "/yampi"})
	put(tn, merchant.Integration{Provider: "hotmart", AccountToken: ls.hottok, ClientID: "hm-client-id", ClientSecret: ls.hmSecret,
		BasicToken: "Basic " + ls.hmBasic, APIURL: p.base + "/hotmart/api", AuthURL: p.base + "/hotmart/token"})
	put(tn, merchant.Integration{Provider: "kiwify", WebhookSecret: ls.kwHook, ClientID: "kw-client-id", ClientSecret: ls.kwSecret,
		AccountID: "kw-account", APIURL: p.base + "/kiwify"})
	// Tenant 2: the token works, the pull fails (Kiwify's token is asked of
	// its API's address: only a platform that answers can give it).
	// (With the guard on, a working token service on loopback is refused
	// too: the refused address has no such tenant.)
	after := s.newTenant(testenv.FixedCampaign(1000, 7))
	var afterToken []string
	if p.tokens != "" {
		put(after, merchant.Integration{Provider: "hotmart", AccountToken: ls.hottok, ClientID: "hm-client-id", ClientSecret: ls.hmSecret,
			BasicToken: "Basic " + ls.hmBasic, APIURL: p.base + "/hotmart/api", AuthURL: p.tokens + "/hotmart/token"})
		afterToken = append(afterToken, "hotmart")
	}
	if strings.Contains(p.says, "answered") {
		put(after, merchant.Integration{Provider: "kiwify", WebhookSecret: ls.kwHook, ClientID: "kw-client-id", ClientSecret: ls.kwSecret,
			AccountID: "kw-account", APIURL: p.tokens + "/kiwify"})
		afterToken = append(afterToken, "kiwify")
	}

	// The pulls and their token requests.
	runs := reconcileAll(t, s, map[*tenant][]string{tn: {"guru", "yampi", "hotmart", "kiwify"}, after: afterToken})
	for key, run := range runs {
		if run.Status != reconcile.StatusFailed || !strings.Contains(run.Error, p.says) {
			t.Errorf("%s run = %s %q, want failed saying %q", key, run.Status, run.Error, p.says)
		}
	}
	// The redemptions.
	for _, redeem := range []string{
		`{"email":"ana@example.com","amount":1000,"destination":"store_coupon"}`,
		`{"email":"ana@example.com","amount":700,"destination":"billing_subscription","subscriptionId":"sub_1"}`,
	} {
		status, body := s.api(tn, http.MethodPost, "/wallet/redeem", []byte(redeem))
		e, _ := body["error"].(map[string]any)
		if msg, _ := e["message"].(string); status != 422 || e["code"] != "REDEMPTION_FAILED" || !strings.Contains(msg, p.says) {
			t.Errorf("redeem %s = %d %v, want 422 REDEMPTION_FAILED saying %q", redeem, status, body, p.says)
		}
	}
	s.waitBalance(tn, ana.Email, wallet{totalEarned: 5000, available: 5000})
	// The members' coupons.
	status, body := s.api(tn, http.MethodPost, "/members", []byte(`{"email": "bia@example.com", "name": "Bia", "campaign_id": "`+
		ids.Format(ids.Campaign, discount.ID)+`"}`))
	if status != 201 {
		t.Fatalf("POST /members = %d %v", status, body)
	}
	st := s.waitCoupons(tn, body["data"].(map[string]any)["id"].(string),
		map[string]string{"guru": redemption.CouponFailed, "yampi": redemption.CouponFailed})
	for _, platform := range []string{"guru", "yampi"} {
		if msg, _ := st[platform]["error"].(string); !strings.Contains(msg, p.says) {
			t.Errorf("%s coupon error %q, want it to say %q", platform, msg, p.says)
		}
	}
}

// reconcileAll asks for a run of each tenant's providers through the API
// and runs them with the scheduler's task until none waits; the pauses
// between a page's tries are skipped. It returns the runs by "provider of
// tenant n".
func reconcileAll(t *testing.T, s *stack, ask map[*tenant][]string) map[string]reconcile.Run {
	ctx := context.Background()
	task := program.NewReconcile(s.deps)
	task.Reconciler.Platforms.(*platformapi.Client).Sleep = func(ctx context.Context, _ time.Duration) error { return ctx.Err() }
	asked := map[string]string{}
	n := 0
	for tn, providers := range ask {
		n++
		for _, p := range providers {
			status, res := s.api(tn, http.MethodPost, "/integrations/"+p+"/reconcile", nil)
			if status != http.StatusAccepted {
				t.Fatalf("POST %s reconcile = %d %v", p, status, res)
			}
			asked[fmt.Sprintf("%s of tenant %d", p, n)] = res["data"].(map[string]any)["id"].(string)
		}
	}
	testenv.Eventually(t, 60*time.Second, "every run ended", func() bool {
		if err := task.Run(ctx, s.clock.Now()); err != nil {
			t.Fatal(err)
		}
		task.Wait()
		return s.count(`SELECT count(*) FROM reconciliation_runs WHERE status = 'running'`) == 0
	})
	out := map[string]reconcile.Run{}
	for key, id := range asked {
		uid, _ := ids.Parse(ids.Reconciliation, id)
		var run reconcile.Run
		if err := s.deps.Pool.QueryRow(ctx, `SELECT status, error FROM reconciliation_runs WHERE id = $1`, uid).Scan(&run.Status, &run.Error); err != nil {
			t.Fatal(err)
		}
		out[key] = run
	}
	return out
}
