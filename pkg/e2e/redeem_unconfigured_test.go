package e2e

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/convida/convida/pkg/event"
	"github.com/convida/convida/pkg/ids"
	"github.com/convida/convida/pkg/merchant"
	"github.com/convida/convida/pkg/openapi/openapitest"
	"github.com/convida/convida/pkg/provider"
	"github.com/convida/convida/pkg/testenv"
)

// TestRedeemUnconfiguredPlatform: a merchant whose Guru and Yampi accounts
// only send webhooks (no API credentials) has a member with money. Every
// redemption, on both interfaces and to both platforms, is refused 422
// integration_not_configured before the ledger: the wallet, the member's
// transactions (member-facing and admin) and the redemptions are
// unchanged, and no event reaches the merchant's endpoint.
func TestRedeemUnconfiguredPlatform(t *testing.T) {
	t.Parallel()
	s := startStack(t, stackOptions{dispatcher: true, env: webhookEnv(t, map[string]string{"ACTION_TIMEOUT": "60s"})})
	tn := &tenant{guruToken: "guru-account-token-0123456789", yampiSecret: "wh_test_secret"}
	created := testenv.MustTenant(t, s.deps.Pool, s.deps.Box, merchant.Merchant{},
		merchant.Integration{Provider: provider.Guru, AccountToken: tn.guruToken},
		merchant.Integration{Provider: provider.Yampi, WebhookSecret: tn.yampiSecret})
	tn.merchant, tn.apiKey = created.Merchant, created.Key
	tn.campaign = testenv.MustCampaign(t, s.deps.Pool, tn.merchant.ID, testenv.FixedCampaign(3000, 7))
	rc := newReceiver(t, nil)
	s.hook(tn, rc, event.Subscribable...)
	m := s.newMember(tn, "ana@example.com", "Ana Souza")
	mem := ids.Format(ids.Member, m.ID)

	// 3000 available: a sale, approved by hand.
	wantStatus(t, s.postGuru(tn, guruSale(t, tn, "unconf-1", m.CouponCode, 100, "approved")), 200)
	s.waitBalance(tn, m.Email, wallet{totalEarned: 3000, pending: 3000})
	var refID [16]byte
	_ = s.deps.Pool.QueryRow(t.Context(), `SELECT id FROM referrals WHERE merchant_id = $1`, tn.merchant.ID).Scan(&refID)
	if status, body := s.api(tn, http.MethodPost, "/referrals/"+ids.Format(ids.Referral, refID)+"/approve", []byte(`{}`)); status != 200 {
		t.Fatalf("approve = %d %v", status, body)
	}
	s.waitBalance(tn, m.Email, wallet{totalEarned: 3000, available: 3000})
	// The events so far, all delivered before the redemptions are tried.
	testenv.Eventually(t, 20*time.Second, "the member's, the sale's and the approval's events", func() bool {
		return len(rc.byType()) == 4 // member.created, referral.created, wallet.credited, referral.approved
	})
	// The member's coupons settle too (no API credentials: not configured).
	s.waitCoupons(tn, mem, map[string]string{"guru": "not_configured", "yampi": "not_configured"})
	reads := []string{"/wallet/balance?email=ana@example.com", "/wallet/transactions?email=ana@example.com",
		"/members/" + mem + "/transactions", "/members/" + mem}
	before := map[string]string{}
	for _, p := range reads {
		status, body := s.api(tn, http.MethodGet, p, nil)
		if status != 200 {
			t.Fatalf("GET %s = %d %v", p, status, body)
		}
		before[p] = fmt.Sprint(body)
	}
	delivered := len(rc.received())

	v := openapitest.New(t)
	c := s.validated(t, v, tn)
	c.want("POST", "/wallet/redeem", map[string]any{"email": m.Email, "amount": 500, "destination": "store_coupon"},
		422, "INTEGRATION_NOT_CONFIGURED")
	c.want("POST", "/wallet/redeem", map[string]any{"email": m.Email, "amount": 500, "destination": "billing_subscription",
		"subscriptionId": "sub_1"}, 422, "INTEGRATION_NOT_CONFIGURED")
	c.want("POST", "/members/"+mem+"/redeem", map[string]any{"amount": nil, "type": "store_credit"}, 422, "integration_not_configured")
	c.want("POST", "/members/"+mem+"/redeem", map[string]any{"amount": 500, "type": "subscription_discount",
		"subscription_id": "sub_1"}, 422, "integration_not_configured")
	v.WantExercised(t, ex("redeemWallet", 422), ex("redeemMember", 422))

	for _, p := range reads {
		if _, body := s.api(tn, http.MethodGet, p, nil); fmt.Sprint(body) != before[p] {
			t.Errorf("GET %s changed:\n was %s\n now %v", p, before[p], body)
		}
	}
	if n := s.count(`SELECT count(*) FROM redemptions WHERE merchant_id = $1`, tn.merchant.ID); n != 0 {
		t.Errorf("%d redemptions recorded, want none", n)
	}
	if n := s.count(`SELECT count(*) FROM processed_commands WHERE merchant_id = $1 AND kind = 'redeem'`, tn.merchant.ID); n != 0 {
		t.Errorf("%d redeem commands applied, want none", n)
	}
	// An event caused after the refusals arrives; none came between.
	if status, body := s.api(tn, http.MethodPatch, "/members/"+mem, []byte(`{"name":"Ana S. Lima"}`)); status != 200 {
		t.Fatalf("PATCH member = %d %v", status, body)
	}
	testenv.Eventually(t, 20*time.Second, "member.updated", func() bool { _, ok := rc.byType()[event.MemberUpdated]; return ok })
	if got := rc.received()[delivered:]; len(got) != 1 || got[0].typ != event.MemberUpdated {
		var types []string
		for _, g := range got {
			types = append(types, g.typ)
		}
		t.Errorf("delivered after the refusals: %v, want only member.updated", types)
	}
	if err := checkLedger(s); err != nil {
		t.Error(err)
	}
}
