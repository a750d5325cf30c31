package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/convida/convida/pkg/campaign"
	"github.com/convida/convida/pkg/ids"
	"github.com/convida/convida/pkg/member"
	"github.com/convida/convida/pkg/program"
)

// platform is a local HTTP server playing Guru and Yampi; fail decides the
// status of each platform call (0 = success).
type platform struct {
	srv      *httptest.Server
	mu       sync.Mutex
	requests []string // "METHOD path auth body"
	fail     func(n int64, path string) int
	delay    time.Duration // answer this late (set before the calls)
	calls    atomic.Int64
}

func newPlatform(t *testing.T) *platform {
	p := &platform{}
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		auth := r.Header.Get("Authorization") + r.Header.Get("User-Token") + "/" + r.Header.Get("User-Secret-Key")
		p.mu.Lock()
		p.requests = append(p.requests, fmt.Sprintf("%s %s %s %s", r.Method, r.URL.Path, auth, body))
		p.mu.Unlock()
		time.Sleep(p.delay)
		if p.fail != nil {
			if code := p.fail(p.calls.Add(1), r.URL.Path); code != 0 {
				w.WriteHeader(code)
				_, _ = w.Write([]byte(`{"message":"refused by the test platform"}`))
				return
			}
		}
		w.Header().Set("Content-Type", "application/json")
		if r.Method == http.MethodGet {
			_, _ = w.Write([]byte(`{"id":"sub_1","charged_times":3}`))
			return
		}
		_, _ = w.Write([]byte(`{"data":{"id":1}}`))
	}))
	t.Cleanup(p.srv.Close)
	return p
}

func (p *platform) seen() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.requests...)
}

// richMember returns a member of a fresh tenant with `available` cents
// available: one sale credited through the ingest and approved by hand
// through the API.
func (s *stack) richMember(t *testing.T, available int64, minRedemption int64, guru, yampi *platform) (*tenant, *member.Member) {
	tn := s.newTenant(campaign.Campaign{Name: "Fixo", RewardType: campaign.RewardFixed, RewardValue: available,
		WarrantyDays: 30, MinRedemption: minRedemption, IsActive: true})
	for provider, body := range map[string]string{
		"guru":  `{"user_token": "guru-user-token", "api_url": "` + guru.srv.URL + `"}`,
		"yampi": `{"user_token": "yampi-ut", "user_secret_key": "yampi-usk", "store_alias": "loja", "api_url": "` + yampi.srv.URL + `"}`,
	} {
		if status, res := s.api(tn, http.MethodPut, "/integrations/"+provider, []byte(body)); status != 200 {
			t.Fatalf("PUT integration %s = %d %v", provider, status, res)
		}
	}
	m := s.newMember(tn, "ana@example.com", "Ana Souza")
	wantStatus(t, s.postGuru(tn, guruSale(t, tn, "rich-1", m.CouponCode, 100, "approved")), 200)
	s.waitBalance(tn, m.Email, wallet{totalEarned: available, pending: available})
	var refID string
	_ = s.deps.Pool.QueryRow(context.Background(), `SELECT id::text FROM referrals WHERE merchant_id = $1`, tn.merchant.ID).Scan(&refID)
	ref, _ := ids.Parse(ids.Referral, refID)
	// 202: the ledger did not answer within ACTION_TIMEOUT (1 s in some
	// tests, which a loaded machine exceeds); the approval is accepted and
	// the wait below sees it land.
	status, body := s.api(tn, http.MethodPost, "/referrals/"+ids.Format(ids.Referral, ref)+"/approve", []byte(`{"notes":"checked"}`))
	if status != 202 && (status != 200 || body["data"].(map[string]any)["status"] != "approved") {
		t.Fatalf("approve = %d %v", status, body)
	}
	s.waitBalance(tn, m.Email, wallet{totalEarned: available, available: available})
	return tn, m
}

func startRedeemStack(t *testing.T) *stack {
	return startStack(t, stackOptions{dispatcher: true, env: map[string]string{"REDEMPTION_RETRY_DELAYS": "50ms,50ms,50ms,50ms", "ACTION_TIMEOUT": "60s"}})
}

func TestRedeemThroughPlatforms(t *testing.T) {
	t.Parallel()
	s := startRedeemStack(t)
	guru, yampi := newPlatform(t), newPlatform(t)
	tn, m := s.richMember(t, 5000, 500, guru, yampi)

	// Member-facing, Guru subscription discount: 1234 cents.
	status, body := s.api(tn, http.MethodPost, "/wallet/redeem",
		[]byte(`{"email":"ana@example.com","amount":1234,"destination":"billing_subscription","subscriptionId":"sub_1"}`))
	if status != 200 {
		t.Fatalf("POST /wallet/redeem = %d %v", status, body)
	}
	data := body["data"].(map[string]any)
	if body["success"] != true || data["amountRedeemed"].(float64) != 1234 || data["destination"] != "billing_subscription" {
		t.Errorf("redeem answer = %v", body)
	}
	if in := data["integration"].(map[string]any); in["provider"] != "guru" || in["subscriptionId"] != "sub_1" || in["appliedCycles"].(float64) != 1 {
		t.Errorf("integration = %v", in)
	}
	if nb := data["newBalance"].(map[string]any); nb["available"].(float64) != 3766 || nb["totalRedeemed"].(float64) != 1234 {
		t.Errorf("newBalance = %v", nb)
	}
	want := []string{
		"GET /subscriptions/sub_1 Bearer guru-user-token/ ",
		`PUT /subscriptions/sub_1/increment-discount Bearer guru-user-token/ {"start_cycle":4,"discount":{"value":12.34,"cycles":1}}`,
	}
	if got := guru.seen(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("guru saw %q\nwant %q", got, want)
	}

	// Admin, Yampi store credit: everything left (amount null).
	status, body = s.api(tn, http.MethodPost, "/members/"+ids.Format(ids.Member, m.ID)+"/redeem", []byte(`{"amount":null,"type":"store_credit"}`))
	if status != 200 {
		t.Fatalf("POST /members/{id}/redeem = %d %v", status, body)
	}
	red := body["data"].(map[string]any)
	md := red["metadata"].(map[string]any)
	if red["status"] != "completed" || red["amount"].(float64) != 3766 || md["coupon_code"] == nil || md["expires_at"] == nil {
		t.Errorf("redemption = %v", red)
	}
	seenYampi := yampi.seen()
	if len(seenYampi) != 1 || !strings.HasPrefix(seenYampi[0], "POST /loja/pricing/promocodes yampi-ut/yampi-usk ") ||
		!strings.Contains(seenYampi[0], `"value":37.66`) || !strings.Contains(seenYampi[0], fmt.Sprintf(`"code":"%s"`, md["coupon_code"])) {
		t.Errorf("yampi saw %q", seenYampi)
	}
	s.waitBalance(tn, m.Email, wallet{totalEarned: 5000, totalRedeemed: 5000})

	// Nothing left; and below the minimum.
	status, body = s.api(tn, http.MethodPost, "/wallet/redeem", []byte(`{"email":"ana@example.com","amount":1,"destination":"store_coupon"}`))
	if status != 422 || body["error"].(map[string]any)["code"] != "INSUFFICIENT_BALANCE" {
		t.Errorf("redeem beyond balance = %d %v", status, body)
	}
	got := s.transactionStatuses(tn, m.Email)
	if want := []string{"credit:5000:available", "debit:1234:used", "debit:3766:used"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("transactions = %v, want %v", got, want)
	}
}

func TestRedeemRefusedReturnsMoneyAndRetriesServerErrors(t *testing.T) {
	t.Parallel()
	s := startRedeemStack(t)
	guru, yampi := newPlatform(t), newPlatform(t)
	tn, m := s.richMember(t, 5000, 0, guru, yampi)

	guru.fail = func(int64, string) int { return http.StatusUnprocessableEntity } // a 4xx: fail at once
	status, body := s.api(tn, http.MethodPost, "/wallet/redeem",
		[]byte(`{"email":"ana@example.com","amount":1000,"destination":"guru_subscription","subscriptionId":"sub_9"}`))
	if status != 422 || body["error"].(map[string]any)["code"] != "REDEMPTION_FAILED" {
		t.Fatalf("refused redeem = %d %v", status, body)
	}
	if n := len(guru.seen()); n != 1 {
		t.Errorf("guru calls = %d, want 1 (a 4xx is not retried)", n)
	}
	s.waitBalance(tn, m.Email, wallet{totalEarned: 5000, available: 5000})
	if got, want := s.transactionStatuses(tn, m.Email), []string{"credit:5000:available", "debit:1000:cancelled"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("public transactions = %v, want %v", got, want)
	}
	status, body = s.api(tn, http.MethodGet, "/members/"+ids.Format(ids.Member, m.ID)+"/transactions", nil)
	var types []string
	for _, e := range body["data"].([]any) {
		types = append(types, e.(map[string]any)["type"].(string))
	}
	if status != 200 || fmt.Sprint(types) != "[cancel debit release credit]" {
		t.Errorf("admin transactions = %d %v, want [cancel debit release credit]", status, types)
	}

	yampi.fail = func(n int64, _ string) int { // two 5xx, then success
		if n <= 2 {
			return http.StatusBadGateway
		}
		return 0
	}
	status, body = s.api(tn, http.MethodPost, "/members/"+ids.Format(ids.Member, m.ID)+"/redeem", []byte(`{"amount":700,"type":"yampi_coupon"}`))
	if status != 200 || body["data"].(map[string]any)["status"] != "completed" {
		t.Fatalf("redeem after 5xx = %d %v", status, body)
	}
	if n := len(yampi.seen()); n != 3 {
		t.Errorf("yampi calls = %d, want 3", n)
	}
	s.waitBalance(tn, m.Email, wallet{totalEarned: 5000, available: 4300, totalRedeemed: 700})
}

// TestConcurrentRedemptions: 100 redemptions of 1000 against 50,000
// available, through two API instances, at once: exactly 50 succeed.
func TestConcurrentRedemptions(t *testing.T) {
	t.Parallel()
	s := startRedeemStack(t)
	guru, yampi := newPlatform(t), newPlatform(t)
	tn, m := s.richMember(t, 50_000, 0, guru, yampi)
	second := httptest.NewServer(program.APIRouter(s.secondDeps(t)))
	defer second.Close()
	urls := []string{s.apiURL, second.URL}

	var ok, insufficient, other atomic.Int64
	var wg sync.WaitGroup
	for i := 0; i < 100; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			res := do(t, http.MethodPost, urls[i%2]+"/api/v1/wallet/redeem",
				[]byte(`{"email":"ana@example.com","amount":1000,"destination":"store_coupon"}`),
				map[string]string{"X-API-Key": tn.apiKey})
			var body map[string]any
			_ = json.Unmarshal(res.Body, &body)
			switch {
			case res.Status == 200:
				ok.Add(1)
			case res.Status == 422 && body["error"].(map[string]any)["code"] == "INSUFFICIENT_BALANCE":
				insufficient.Add(1)
			default:
				other.Add(1)
				t.Errorf("redeem %d = %d %s", i, res.Status, res.Body)
			}
		}(i)
	}
	wg.Wait()
	if ok.Load() != 50 || insufficient.Load() != 50 {
		t.Errorf("succeeded %d, insufficient %d, other %d; want 50 and 50", ok.Load(), insufficient.Load(), other.Load())
	}
	s.waitBalance(tn, m.Email, wallet{totalEarned: 50_000, totalRedeemed: 50_000})
	if n := s.count(`SELECT count(*) FROM redemptions WHERE merchant_id = $1 AND status = 'completed'`, tn.merchant.ID); n != 50 {
		t.Errorf("completed redemptions = %d, want 50", n)
	}
	if err := checkLedger(s); err != nil {
		t.Error(err)
	}
}
