package e2e

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/convida/convida/pkg/ids"
	"github.com/convida/convida/pkg/openapi/openapitest"
	"github.com/convida/convida/pkg/testenv"
)

// validated calls the API through a client that checks every answer
// against the OpenAPI document.
type validated struct {
	t      *testing.T
	client *http.Client
	base   string
	key    string
}

func (s *stack) validated(t *testing.T, v *openapitest.Validator, tn *tenant) *validated {
	return &validated{t: t, client: v.Client(s.apiURL), base: s.apiURL + "/api/v1", key: tn.apiKey}
}

func (c *validated) do(method, path string, body any) (int, map[string]any) {
	c.t.Helper()
	var rd io.Reader
	if body != nil {
		raw, _ := json.Marshal(body)
		rd = bytes.NewReader(raw)
	}
	req, _ := http.NewRequest(method, c.base+path, rd)
	req.Header.Set("X-API-Key", c.key)
	req.Header.Set("Content-Type", "application/json")
	res, err := c.client.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(res.Body).Decode(&out)
	return res.StatusCode, out
}

func (c *validated) want(method, path string, body any, status int, code string) map[string]any {
	c.t.Helper()
	got, out := c.do(method, path, body)
	if got != status {
		c.t.Errorf("%s %s = %d %v, want %d", method, path, got, out, status)
		return out
	}
	if code != "" {
		if e, _ := out["error"].(map[string]any); e == nil || e["code"] != code {
			c.t.Errorf("%s %s = %v, want code %s", method, path, out, code)
		}
	}
	return out
}

// TestContractWalletActions runs approve, reject and both redeems on the
// real pipeline (broker, ledger, dispatcher; Guru and Yampi played by local
// servers), every answer validated against the OpenAPI document.
func TestContractWalletActions(t *testing.T) {
	t.Parallel()
	s := startRedeemStack(t)
	guru, yampi := newPlatform(t), newPlatform(t)
	guru.fail = func(_ int64, path string) int {
		if path == "/subscriptions/sub_fail" {
			return http.StatusUnprocessableEntity
		}
		return 0
	}
	tn, m := s.richMember(t, 1000, 200, guru, yampi) // one approved referral: 1000 available
	v := openapitest.New(t)
	c := s.validated(t, v, tn)
	for _, order := range []string{"c-2", "c-3", "c-4"} {
		wantStatus(t, s.postGuru(tn, guruSale(t, tn, order, m.CouponCode, 100, "approved")), 200)
	}
	s.waitBalance(tn, m.Email, wallet{totalEarned: 4000, available: 1000, pending: 3000})
	refOf := map[string]string{}
	rows, _ := s.deps.Pool.Query(t.Context(), `SELECT order_id, id FROM referrals WHERE merchant_id = $1`, tn.merchant.ID)
	for rows.Next() {
		var order string
		var id [16]byte
		_ = rows.Scan(&order, &id)
		refOf[order] = ids.Format(ids.Referral, id)
	}
	rows.Close()

	approved := c.want("POST", "/referrals/"+refOf["c-2"]+"/approve", map[string]any{"notes": "ok"}, 200, "")
	if st := approved["data"].(map[string]any)["status"]; st != "approved" {
		t.Errorf("approve: status %v", st)
	}
	c.want("POST", "/referrals/"+refOf["c-2"]+"/approve", nil, 409, "invalid_state")
	c.want("POST", "/referrals/"+refOf["c-3"]+"/reject", map[string]any{"reason": "fraud", "notes": "chargeback risk"}, 200, "")
	c.want("POST", "/referrals/"+refOf["c-3"]+"/reject", map[string]any{"reason": "fraud"}, 409, "invalid_state")
	c.want("POST", "/referrals/"+refOf["c-3"]+"/approve", nil, 409, "invalid_state")
	c.want("POST", "/referrals/"+refOf["c-2"]+"/reject", map[string]any{"reason": "duplicate"}, 200, "") // approved → reversed
	c.want("POST", "/referrals/"+refOf["c-4"]+"/reject", map[string]any{"reason": "bored"}, 400, "validation_error")
	c.want("POST", "/referrals/ref_"+zeros+"/approve", nil, 404, "not_found")
	c.want("POST", "/referrals/ref_"+zeros+"/reject", map[string]any{"reason": "other"}, 404, "not_found")
	s.waitBalance(tn, m.Email, wallet{totalEarned: 2000, available: 1000, pending: 1000, cancelled: 2000})

	mem := ids.Format(ids.Member, m.ID)
	c.want("POST", "/members/"+mem+"/redeem", map[string]any{"amount": 300, "type": "store_credit"}, 200, "")
	c.want("POST", "/members/"+mem+"/redeem", map[string]any{"amount": 300, "type": "subscription_discount", "subscription_id": "sub_fail"}, 422, "redemption_failed")
	c.want("POST", "/members/"+mem+"/redeem", map[string]any{"amount": 1_000_000, "type": "store_credit"}, 422, "insufficient_balance")
	c.want("POST", "/members/"+mem+"/redeem", map[string]any{"amount": 100, "type": "store_credit"}, 422, "below_min_redemption")
	c.want("POST", "/members/"+mem+"/redeem", map[string]any{"amount": 1.5, "type": "store_credit"}, 400, "validation_error")
	c.want("POST", "/members/mem_"+zeros+"/redeem", map[string]any{"amount": 300, "type": "store_credit"}, 404, "not_found")

	out := c.want("POST", "/wallet/redeem", map[string]any{"email": m.Email, "amount": 300, "destination": "billing_subscription", "subscriptionId": "sub_1"}, 200, "")
	if in := out["data"].(map[string]any)["integration"].(map[string]any); in["provider"] != "guru" {
		t.Errorf("integration = %v", in)
	}
	c.want("POST", "/wallet/redeem", map[string]any{"email": m.Email, "amount": 300, "destination": "billing_subscription", "subscriptionId": "sub_fail"}, 422, "REDEMPTION_FAILED")
	c.want("POST", "/wallet/redeem", map[string]any{"email": m.Email, "amount": 5000, "destination": "store_coupon"}, 422, "INSUFFICIENT_BALANCE")
	c.want("POST", "/wallet/redeem", map[string]any{"email": m.Email, "amount": 100, "destination": "store_coupon"}, 422, "BELOW_MIN_REDEMPTION")
	c.want("POST", "/wallet/redeem", map[string]any{"email": "nobody@example.com", "amount": 300, "destination": "store_coupon"}, 404, "MEMBER_NOT_FOUND")
	c.want("POST", "/wallet/redeem", map[string]any{"email": m.Email, "amount": 300, "destination": "pix"}, 400, "VALIDATION_ERROR")
	s.waitBalance(tn, m.Email, wallet{totalEarned: 2000, totalRedeemed: 600, available: 400, pending: 1000, cancelled: 2000})
	if err := checkLedger(s); err != nil {
		t.Error(err)
	}
	v.WantExercised(t,
		ex("approveReferral", 200), ex("approveReferral", 409), ex("approveReferral", 404),
		ex("rejectReferral", 200), ex("rejectReferral", 409), ex("rejectReferral", 400), ex("rejectReferral", 404),
		ex("redeemMember", 200), ex("redeemMember", 422), ex("redeemMember", 400), ex("redeemMember", 404),
		ex("redeemWallet", 200), ex("redeemWallet", 422), ex("redeemWallet", 404), ex("redeemWallet", 400))
}

const zeros = "00000000000000000000000000000000"

// TestContractRedeemStillPending: a platform that does not answer within
// the action timeout → 202 with the redemption pending, on both interfaces.
func TestContractRedeemStillPending(t *testing.T) {
	t.Parallel()
	s := startStack(t, stackOptions{dispatcher: true, env: map[string]string{"REDEMPTION_RETRY_DELAYS": "50ms", "ACTION_TIMEOUT": "1s"}})
	guru, yampi := newPlatform(t), newPlatform(t)
	tn, m := s.richMember(t, 1000, 0, guru, yampi)
	guru.delay = 3 * time.Second
	v := openapitest.New(t)
	c := s.validated(t, v, tn)
	out := c.want("POST", "/members/"+ids.Format(ids.Member, m.ID)+"/redeem",
		map[string]any{"amount": 100, "type": "subscription_discount", "subscription_id": "sub_1"}, 202, "")
	if st := out["data"].(map[string]any)["status"]; st != "pending" {
		t.Errorf("redemption status = %v, want pending", st)
	}
	out = c.want("POST", "/wallet/redeem", map[string]any{"email": m.Email, "amount": 100, "destination": "billing_subscription", "subscriptionId": "sub_1"}, 202, "")
	if out["data"].(map[string]any)["integration"] != nil {
		t.Errorf("integration = %v, want null while pending", out["data"])
	}
	v.WantExercised(t, ex("redeemMember", 202), ex("redeemWallet", 202))
	// Once the platform answers, both complete.
	s.waitBalance(tn, m.Email, wallet{totalEarned: 1000, totalRedeemed: 200, available: 800})
	testenv.Eventually(t, 30*time.Second, "both redemptions completed", func() bool {
		return s.count(`SELECT count(*) FROM redemptions WHERE merchant_id = $1 AND status = 'completed'`, tn.merchant.ID) == 2
	})
}
