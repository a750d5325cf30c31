package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/campaign"
	"github.com/convida/convida/pkg/creator"
	"github.com/convida/convida/pkg/event"
	"github.com/convida/convida/pkg/ids"
	"github.com/convida/convida/pkg/openapi/openapitest"
	"github.com/convida/convida/pkg/testenv"
)

// fraudMember is a member of a fresh tenant, created by /member/me with
// its CPF or CNPJ when doc is not empty.
type fraudMember struct {
	tn     *tenant
	id     string // mem_…
	coupon string
}

// newFraudTenant returns a tenant whose campaign pays reward cents with no
// warranty, under rules, and its member email (with document doc).
func (s *stack) newFraudTenant(t *testing.T, reward int64, rules campaign.Rules, email, doc string) fraudMember {
	t.Helper()
	c := testenv.FixedCampaign(reward, 0)
	c.Rules = rules
	tn := s.newTenant(c)
	q := url.Values{"email": {email}, "name": {"Ana Souza"}, "autoCreate": {"true"}}
	if doc != "" {
		q.Set("cpf", doc)
	}
	status, res := s.api(tn, http.MethodGet, "/member/me?"+q.Encode(), nil)
	if status != 200 {
		t.Fatalf("GET /member/me autoCreate = %d %v", status, res)
	}
	d := res["data"].(map[string]any)
	id, _ := uuid.Parse(d["id"].(string))
	return fraudMember{tn: tn, id: ids.Format(ids.Member, id), coupon: d["referralCode"].(string)}
}

// guruBuy posts a paid Guru sale of the member's coupon for total reais by
// the buyer e-mail and document (the fixture's when empty).
func (s *stack) guruBuy(t *testing.T, fm fraudMember, order string, total float64, email, doc string) {
	t.Helper()
	set := map[string]any{"api_token": fm.tn.guruToken, "id": order, "status": "approved",
		"payment.coupon.coupon_code": fm.coupon, "payment.total": total}
	if email != "" {
		set["contact.email"] = email
	}
	if doc != "" {
		set["contact.doc"] = doc
	}
	wantStatus(t, s.postGuru(fm.tn, fixture(t, guruApproved, set)), 200)
}

// referralsOf waits until the tenant has n referrals and returns them by
// order id, read through the contract-validated client (with query).
func referralsOf(t *testing.T, c *validated, n int, query string) map[string]map[string]any {
	t.Helper()
	var out map[string]map[string]any
	testenv.Eventually(t, 20*time.Second, fmt.Sprintf("%d referrals%s", n, query), func() bool {
		_, res := c.do(http.MethodGet, "/referrals?per_page=100"+query, nil)
		out = map[string]map[string]any{}
		list, _ := res["data"].([]any)
		for _, r := range list {
			ref := r.(map[string]any)
			out[ref["order_id"].(string)] = ref
		}
		return len(out) == n
	})
	return out
}

// memberWallet reads GET /members/{id}/wallet through the validated client.
func memberWallet(t *testing.T, c *validated, memberID string) wallet {
	t.Helper()
	status, res := c.do(http.MethodGet, "/members/"+memberID+"/wallet", nil)
	if status != 200 {
		t.Fatalf("GET wallet = %d %v", status, res)
	}
	d := res["data"].(map[string]any)
	n := func(k string) int64 { return int64(d[k].(float64)) }
	return wallet{totalEarned: n("total_earned"), totalRedeemed: n("total_redeemed"), available: n("available"),
		pending: n("pending"), cancelled: n("cancelled")}
}

func waitMemberWallet(t *testing.T, c *validated, memberID string, want wallet) {
	t.Helper()
	var got wallet
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if got = memberWallet(t, c, memberID); got == want {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("wallet = %+v, want %+v", got, want)
}

func reasonsOf(ref map[string]any) []string {
	var out []string
	for _, r := range ref["review_reasons"].([]any) {
		out = append(out, r.(string))
	}
	return out
}

// TestFraudRules: each fraud rule end to end, through the ingest, the
// ledger and the scheduler (warranty 0, swept every 100 ms). A
// self-referral is created rejected; a flagged referral is created pending
// with review_required, the sweep releases the clean referral beside it
// but not the flagged one, the review queue lists it, and approve or
// reject settles it with the wallet right to the cent. Every API answer is
// validated against the OpenAPI document.
func TestFraudRules(t *testing.T) {
	t.Parallel()
	s := startStack(t, stackOptions{scheduler: true, env: map[string]string{"SCHEDULER_INTERVAL": "100ms", "ACTION_TIMEOUT": "60s"}})
	v := openapitest.New(t)
	off := campaign.Rules{}

	t.Run("self-referral by a Gmail address with dots and a +tag is rejected", func(t *testing.T) {
		fm := s.newFraudTenant(t, 1000, off, "ana.souza@gmail.com", "")
		c := s.validated(t, v, fm.tn)
		s.guruBuy(t, fm, "g-1", 100, "AnaSouza+promo@googlemail.com", "")
		ref := referralsOf(t, c, 1, "")["g-1"]
		if ref["status"] != "rejected" || ref["rejection_reason"] != "self_referral" || ref["review_required"] != false {
			t.Errorf("referral = %v, want rejected self_referral", ref)
		}
		if w := memberWallet(t, c, fm.id); w != (wallet{}) {
			t.Errorf("wallet = %+v, want nothing", w)
		}
	})

	t.Run("self-referral by CPF with punctuation against Guru's contact.doc is rejected", func(t *testing.T) {
		fm := s.newFraudTenant(t, 1000, off, "ana@example.org", "529.982.247-25")
		c := s.validated(t, v, fm.tn)
		s.guruBuy(t, fm, "c-1", 100, "someone.else@example.com", "52998224725")
		s.guruBuy(t, fm, "c-2", 100, "bruno@example.com", "11144477735") // another buyer: credited
		refs := referralsOf(t, c, 2, "")
		if refs["c-1"]["status"] != "rejected" || refs["c-1"]["rejection_reason"] != "self_referral" {
			t.Errorf("self-referral = %v, want rejected self_referral", refs["c-1"])
		}
		waitMemberWallet(t, c, fm.id, wallet{totalEarned: 1000, available: 1000})
	})

	t.Run("self-referral by CNPJ through Yampi is rejected", func(t *testing.T) {
		fm := s.newFraudTenant(t, 1000, off, "loja@example.org", "11.222.333/0001-81")
		c := s.validated(t, v, fm.tn)
		body := fixture(t, yampiPaid, map[string]any{"resource.id": 770001, "resource.promocode.data.code": fm.coupon,
			"resource.value_total": 100, "resource.customer.data.cpf": "", "resource.customer.data.cnpj": "11222333000181"})
		wantStatus(t, s.postYampi(fm.tn, body, ""), 200)
		ref := referralsOf(t, c, 1, "")["770001"]
		if ref["status"] != "rejected" || ref["rejection_reason"] != "self_referral" {
			t.Errorf("referral = %v, want rejected self_referral", ref)
		}
	})

	// held settles a flagged referral: it stays pending after the sweep has
	// released the clean one beside it, it is in the review queue and not
	// among review_required=false, and approve or reject decides it.
	held := func(t *testing.T, c *validated, fm fraudMember, refs map[string]map[string]any, flagged string,
		approve bool, after wallet) {
		t.Helper()
		var released int64
		for order, r := range refs {
			if order != flagged {
				released += int64(r["reward_amount"].(float64))
			}
		}
		waitMemberWallet(t, c, fm.id, wallet{totalEarned: released + int64(refs[flagged]["reward_amount"].(float64)),
			available: released, pending: int64(refs[flagged]["reward_amount"].(float64))})
		queue := referralsOf(t, c, 1, "&review_required=true")
		if q := queue[flagged]; q == nil || q["status"] != "pending" || q["review_required"] != true {
			t.Fatalf("review queue = %v, want %s pending", queue, flagged)
		}
		if others := referralsOf(t, c, len(refs)-1, "&review_required=false"); others[flagged] != nil {
			t.Errorf("review_required=false lists the flagged referral")
		}
		path := "/referrals/" + refs[flagged]["id"].(string)
		var out map[string]any
		if approve {
			out = c.want(http.MethodPost, path+"/approve", map[string]any{"notes": "checked"}, 200, "")
		} else {
			out = c.want(http.MethodPost, path+"/reject", map[string]any{"reason": "fraud"}, 200, "")
		}
		if d, _ := out["data"].(map[string]any); d == nil || d["review_required"] != false || len(reasonsOf(d)) == 0 {
			t.Errorf("decision = %v, want review_required cleared and its reasons kept", out)
		}
		waitMemberWallet(t, c, fm.id, after)
		if queue := referralsOf(t, c, 0, "&review_required=true"); len(queue) != 0 {
			t.Errorf("review queue after the decision = %v, want empty", queue)
		}
	}

	t.Run("a disposable buyer is held for review; approve releases it", func(t *testing.T) {
		fm := s.newFraudTenant(t, 1000, campaign.DefaultRules(), "ana@example.org", "")
		c := s.validated(t, v, fm.tn)
		s.guruBuy(t, fm, "d-1", 100, "bruno@example.com", "")
		s.guruBuy(t, fm, "d-2", 100, "throwaway@mailinator.com", "")
		refs := referralsOf(t, c, 2, "")
		if r := refs["d-2"]; r["status"] != "pending" || r["review_required"] != true || !slices.Equal(reasonsOf(r), []string{"disposable_email"}) {
			t.Fatalf("disposable = %v, want pending, review_required, [disposable_email]", r)
		}
		held(t, c, fm, refs, "d-2", true, wallet{totalEarned: 2000, available: 2000})
	})

	t.Run("velocity: the referral over max_referrals_per_hour is held; reject cancels it", func(t *testing.T) {
		fm := s.newFraudTenant(t, 1000, campaign.DefaultRules(), "ana@example.org", "")
		c := s.validated(t, v, fm.tn)
		c.want(http.MethodPatch, "/campaigns/"+ids.Format(ids.Campaign, fm.tn.campaign.ID), map[string]any{"max_referrals_per_hour": 2}, 200, "")
		for i := 1; i <= 3; i++ {
			order := fmt.Sprintf("v-%d", i)
			s.guruBuy(t, fm, order, 100, "buyer"+order+"@example.com", "")
			referralsOf(t, c, i, "") // one after another: the 3rd is the one over 2
		}
		refs := referralsOf(t, c, 3, "")
		for order, want := range map[string][]string{"v-1": nil, "v-2": nil, "v-3": {"velocity"}} {
			if got := reasonsOf(refs[order]); !slices.Equal(got, want) || refs[order]["review_required"] != (want != nil) {
				t.Errorf("%s: review %v %v, want %v", order, refs[order]["review_required"], got, want)
			}
		}
		held(t, c, fm, refs, "v-3", false,
			wallet{totalEarned: 2000, available: 2000, cancelled: 1000})
	})

	t.Run("cap: the referral over max_reward_per_month earns up to the cap, to the cent, and is held", func(t *testing.T) {
		fm := s.newFraudTenant(t, 979, off, "ana@example.org", "")
		c := s.validated(t, v, fm.tn)
		c.want(http.MethodPatch, "/campaigns/"+ids.Format(ids.Campaign, fm.tn.campaign.ID), map[string]any{"max_reward_per_month": 2500}, 200, "")
		for i := 1; i <= 3; i++ {
			order := fmt.Sprintf("k-%d", i)
			s.guruBuy(t, fm, order, 97.9, "buyer"+order+"@example.com", "")
			referralsOf(t, c, i, "")
		}
		refs := referralsOf(t, c, 3, "")
		for order, want := range map[string]int64{"k-1": 979, "k-2": 979, "k-3": 542} {
			if got := int64(refs[order]["reward_amount"].(float64)); got != want {
				t.Errorf("%s: reward %d, want %d", order, got, want)
			}
		}
		if !slices.Equal(reasonsOf(refs["k-3"]), []string{"monthly_cap"}) {
			t.Errorf("k-3 reasons = %v, want [monthly_cap]", reasonsOf(refs["k-3"]))
		}
		held(t, c, fm, refs, "k-3", true,
			wallet{totalEarned: 2500, available: 2500})
	})
	v.WantExercised(t, ex("listReferrals", 200), ex("approveReferral", 200), ex("rejectReferral", 200), ex("getMemberWallet", 200))
}

// TestCreatorTierCommission: a creator's sales of the month earn its tier's
// commission (Bronze 0 → 10 %, Silver 3 → 15 %, Gold 10 → 20 %): the 1st
// to 4th sales 10, 10, 15, 15 % of the order, rounded down; the 3rd moves
// it up to Silver, and creator.tier_changed is in the outbox.
func TestCreatorTierCommission(t *testing.T) {
	t.Parallel()
	s := startStack(t, stackOptions{})
	fm := s.newFraudTenant(t, 100, campaign.Rules{}, "criadora@example.org", "")
	ctx := context.Background()
	memberID, _ := ids.Parse(ids.Member, fm.id)
	if _, err := s.deps.Pool.Exec(ctx, `INSERT INTO creator_profiles (merchant_id, member_id, display_name, token_hash, token_enc)
VALUES ($1, $2, 'Ana Cria', $3, '\x01')`, fm.tn.merchant.ID, memberID, creator.HashToken(creator.NewToken())); err != nil {
		t.Fatal(err)
	}
	if _, err := s.deps.Pool.Exec(ctx, `INSERT INTO campaign_tiers (merchant_id, campaign_id, position, name, min_sales, commission_bp)
VALUES ($1, $2, 0, 'Bronze', 0, 1000), ($1, $2, 1, 'Silver', 3, 1500), ($1, $2, 2, 'Gold', 10, 2000)`, fm.tn.merchant.ID, fm.tn.campaign.ID); err != nil {
		t.Fatal(err)
	}
	v := openapitest.New(t)
	c := s.validated(t, v, fm.tn)
	orders := []struct {
		id     string
		total  float64
		reward int64
	}{{"t-1", 97.9, 979}, {"t-2", 123.45, 1234}, {"t-3", 97.9, 1468}, {"t-4", 199.99, 2999}}
	for i, o := range orders {
		if i%2 == 0 {
			s.guruBuy(t, fm, o.id, o.total, "buyer"+o.id+"@example.com", "")
		} else {
			body := fixture(t, yampiPaid, map[string]any{"resource.id": o.id, "resource.promocode.data.code": fm.coupon,
				"resource.value_total": o.total})
			wantStatus(t, s.postYampi(fm.tn, body, ""), 200)
		}
		referralsOf(t, c, i+1, "")
	}
	refs := referralsOf(t, c, 4, "")
	var sum int64
	for _, o := range orders {
		if got := int64(refs[o.id]["reward_amount"].(float64)); got != o.reward {
			t.Errorf("%s of %.2f: reward %d, want %d", o.id, o.total, got, o.reward)
		}
		sum += o.reward
	}
	waitMemberWallet(t, c, fm.id, wallet{totalEarned: sum, pending: sum})
	var data []map[string]any
	rows, err := s.deps.Pool.Query(ctx, `SELECT payload FROM outbox WHERE merchant_id = $1 AND type = $2`, fm.tn.merchant.ID, event.CreatorTierChanged)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var envelope struct {
			Data map[string]any `json:"data"`
		}
		var raw []byte
		_ = rows.Scan(&raw)
		_ = json.Unmarshal(raw, &envelope)
		data = append(data, envelope.Data)
	}
	rows.Close()
	want := map[string]any{"member_id": fm.id, "previous_tier": "Bronze", "tier": "Silver", "month_sales": 3.0, "commission_percent": 15.0}
	if len(data) != 1 || !maps.Equal(data[0], want) {
		t.Errorf("creator.tier_changed in the outbox = %v, want one: %v", data, want)
	}
}
