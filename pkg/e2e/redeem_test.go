package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/convida/convida/pkg/ids"
	"github.com/convida/convida/pkg/program"
)

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
