package e2e

import (
	"context"
	"net/http"
	"testing"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/ids"
	"github.com/convida/convida/pkg/testenv"
)

// TestTenantIsolation runs every operation with merchant B's key on
// merchant A's ids: 404 every time (member-facing: MEMBER_NOT_FOUND), and
// B's lists show nothing of A's.
func TestTenantIsolation(t *testing.T) {
	t.Parallel()
	s := startStack(t, stackOptions{})
	c := testenv.FixedCampaign(1000, 7)
	a, b := s.newTenant(c), s.newTenant(c)
	m := s.newMember(a, "ana@example.com", "Ana Souza")
	wantStatus(t, s.postGuru(a, guruSale(t, a, "iso-1", m.CouponCode, 100, "approved")), 200)
	s.waitBalance(a, m.Email, wallet{totalEarned: 1000, pending: 1000})
	var refID uuid.UUID
	if err := s.deps.Pool.QueryRow(context.Background(), `SELECT id FROM referrals WHERE merchant_id = $1`, a.merchant.ID).Scan(&refID); err != nil {
		t.Fatal(err)
	}
	mem, camp, ref := ids.Format(ids.Member, m.ID), ids.Format(ids.Campaign, a.campaign.ID), ids.Format(ids.Referral, refID)
	status, body := s.api(a, http.MethodPut, "/members/"+mem+"/creator", []byte(`{"display_name":"Ana"}`))
	if status != 200 {
		t.Fatalf("A: PUT creator = %d %v", status, body)
	}
	token := body["data"].(map[string]any)["token"].(string)
	if status, body := s.api(a, http.MethodPut, "/campaigns/"+camp+"/tiers", []byte(`{"tiers":[{"name":"Bronze","min_sales":0,"commission_percent":10}]}`)); status != 200 {
		t.Fatalf("A: PUT tiers = %d %v", status, body)
	}

	admin := []struct{ method, path, body string }{
		{"GET", "/members/" + mem, ""},
		{"GET", "/members/" + m.ID.String(), ""},
		{"PATCH", "/members/" + mem, `{"name":"Mallory"}`},
		{"GET", "/members/" + mem + "/wallet", ""},
		{"GET", "/members/" + mem + "/transactions", ""},
		{"POST", "/members/" + mem + "/redeem", `{"amount":100,"type":"store_credit"}`},
		{"POST", "/members/" + mem + "/provision-coupon", ""},
		{"GET", "/campaigns/" + camp, ""},
		{"PATCH", "/campaigns/" + camp, `{"name":"Mallory"}`},
		{"GET", "/referrals/" + ref, ""},
		{"POST", "/referrals/" + ref + "/approve", `{}`},
		{"POST", "/referrals/" + ref + "/reject", `{"reason":"fraud"}`},
		{"GET", "/members/" + mem + "/creator", ""},
		{"PUT", "/members/" + mem + "/creator", `{"display_name":"Mallory"}`},
		{"POST", "/members/" + mem + "/creator/rotate-token", `{}`},
		{"DELETE", "/members/" + mem + "/creator", ""},
		{"GET", "/campaigns/" + camp + "/tiers", ""},
		{"PUT", "/campaigns/" + camp + "/tiers", `{"tiers":[]}`},
	}
	for _, op := range admin {
		status, body := s.api(b, op.method, op.path, []byte(op.body))
		if status != 404 || body["error"].(map[string]any)["code"] != "not_found" {
			t.Errorf("B: %s %s = %d %v, want 404 not_found", op.method, op.path, status, body)
		}
	}
	memberFacing := []struct{ method, path, body string }{
		{"GET", "/member/me?email=" + m.Email, ""},
		{"GET", "/member/me?externalId=whatever&email=" + m.Email, ""},
		{"GET", "/member/referrals?email=" + m.Email, ""},
		{"GET", "/wallet/balance?email=" + m.Email, ""},
		{"GET", "/wallet/transactions?email=" + m.Email, ""},
		{"POST", "/wallet/redeem", `{"email":"` + m.Email + `","amount":100,"destination":"store_coupon"}`},
	}
	for _, op := range memberFacing {
		status, body := s.api(b, op.method, op.path, []byte(op.body))
		if status != 404 || body["error"].(map[string]any)["code"] != "MEMBER_NOT_FOUND" {
			t.Errorf("B: %s %s = %d %v, want 404 MEMBER_NOT_FOUND", op.method, op.path, status, body)
		}
	}
	for _, path := range []string{"/members", "/members?search=ana", "/referrals", "/referrals?member_id=" + mem, "/campaigns"} {
		status, body := s.api(b, http.MethodGet, path, nil)
		if status != 200 {
			t.Errorf("B: GET %s = %d %v", path, status, body)
			continue
		}
		for _, item := range body["data"].([]any) {
			id := item.(map[string]any)["id"]
			if id == mem || id == camp || id == ref {
				t.Errorf("B: GET %s shows A's %v", path, id)
			}
		}
	}
	// And A's data is untouched by B's attempts.
	s.waitBalance(a, m.Email, wallet{totalEarned: 1000, pending: 1000})
	if n := s.count(`SELECT count(*) FROM coupon_provisions WHERE merchant_id = $1 AND wanted_version = 1`, a.merchant.ID); n != 2 {
		t.Errorf("A's member has %d coupon rows as created, want 2: B's provision-coupon asked for nothing", n)
	}
	if status, body := s.api(a, http.MethodGet, "/referrals/"+ref, nil); status != 200 || body["data"].(map[string]any)["status"] != "pending" {
		t.Errorf("A: referral = %d %v, want pending", status, body)
	}
	if status, body := s.api(a, http.MethodGet, "/members/"+mem+"/creator", nil); status != 200 ||
		body["data"].(map[string]any)["token"] != token || body["data"].(map[string]any)["display_name"] != "Ana" {
		t.Errorf("A: creator = %d %v, want its own, token unchanged", status, body)
	}
	if status, body := s.api(a, http.MethodGet, "/campaigns/"+camp+"/tiers", nil); status != 200 ||
		len(body["data"].(map[string]any)["tiers"].([]any)) != 1 {
		t.Errorf("A: tiers = %d %v, want its one tier", status, body)
	}
}
