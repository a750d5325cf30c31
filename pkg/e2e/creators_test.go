package e2e

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/convida/convida/pkg/ids"
	"github.com/convida/convida/pkg/testenv"
)

// creatorRun is a creator with tiers Bronze (0 sales, 10 %), Silver (3,
// 15 %) and Gold (10, 20 %), made through the API, and four sales of its
// coupon posted over the ingest, alternately by Guru and Yampi, each
// credited before the next is sent.
type creatorRun struct {
	s        *stack
	tn       *tenant
	c        *checker
	token    string
	coupon   string
	memberID string   // mem_…
	buyers   []string // the buyers' e-mails, in the order of the sales
	orders   []int64  // the order values in cents, same order
}

// creatorOrder is each sale's value: R$ 197.90, whose 10 % (1979) and 15 %
// (2968, rounded down) differ from each other and from the campaign's fixed
// reward (500).
const creatorOrder = 19790

func startCreatorRun(t *testing.T) *creatorRun {
	t.Helper()
	s := startStack(t, stackOptions{observe: true})
	tn := s.newTenant(testenv.FixedCampaign(500, 30))
	run := &creatorRun{s: s, tn: tn, c: newChecker(t, s.apiURL),
		buyers: []string{"joao.silva@example.com", "maria@example.org", "Pedro@Example.com", "lu@example.net"}}
	key := keyed(tn.apiKey)
	camp := ids.Format(ids.Campaign, tn.campaign.ID)

	r := run.c.expect(t, probe{"POST", "/api/v1/members", jsonBody(map[string]any{"email": "ana@example.com", "name": "Ana Souza",
		"campaign_id": camp}), key}, 201, "")
	run.memberID, _ = r.data()["id"].(string)
	run.coupon, _ = r.data()["coupon_code"].(string)
	r = run.c.expect(t, probe{"PUT", "/api/v1/members/" + run.memberID + "/creator", jsonBody(map[string]any{
		"display_name": "Ana Fit", "niche": "fitness", "instagram_username": "ana.fit"}), key}, 200, "")
	run.token, _ = r.data()["token"].(string)
	if run.coupon == "" || len(run.token) < 32 {
		t.Fatalf("member %v / creator token %q", r.body, run.token)
	}
	run.c.expect(t, probe{"PUT", "/api/v1/campaigns/" + camp + "/tiers", jsonBody(map[string]any{"tiers": []map[string]any{
		{"name": "Bronze", "min_sales": 0, "commission_percent": 10},
		{"name": "Silver", "min_sales": 3, "commission_percent": 15},
		{"name": "Gold", "min_sales": 10, "commission_percent": 20},
	}}), key}, 200, "")

	for i, buyer := range run.buyers {
		order := strconv.Itoa(880001 + i)
		if i%2 == 0 {
			wantStatus(t, s.postGuru(tn, fixture(t, guruApproved, map[string]any{"api_token": tn.guruToken, "id": "creator-" + order,
				"status": "approved", "payment.coupon.coupon_code": run.coupon, "payment.total": 197.90, "contact.email": buyer})), 200)
		} else {
			body := fixture(t, yampiPaid, map[string]any{"resource.id": 880001 + i, "resource.promocode.data.code": run.coupon,
				"resource.value_total": 197.90, "resource.customer.data.email": buyer})
			wantStatus(t, s.postYampi(tn, body, ""), 200)
		}
		run.orders = append(run.orders, creatorOrder)
		testenv.Eventually(t, 30*time.Second, "sale "+strconv.Itoa(i+1)+" credited", func() bool {
			return s.count(`SELECT count(*) FROM referrals WHERE merchant_id = $1`, tn.merchant.ID) == i+1
		})
	}
	return run
}

// public reads a creator operation (no key) and checks it is not cached.
func (run *creatorRun) public(t *testing.T, path string, status int, code string) reply {
	t.Helper()
	r := run.c.expect(t, probe{method: "GET", path: path}, status, code)
	if cc := r.header.Get("Cache-Control"); cc != "no-store" {
		t.Errorf("GET %s: Cache-Control %q, want no-store", path, cc)
	}
	return r
}

// num reads a JSON number of a decoded body.
func num(t *testing.T, v any) float64 {
	t.Helper()
	f, ok := v.(float64)
	if !ok {
		t.Errorf("%#v is not a number", v)
	}
	return f
}

var reMasked = regexp.MustCompile(`^[^*@]\*\*\*@[^@]+$`)

// TestCreatorOperations is the acceptance of decisions 21–22: a creator
// made through the admin API, its sales arriving from Guru and Yampi, its
// three public operations as a creator's page reads them (validated against
// the OpenAPI document), a rotated token refused at once, and no log line
// of the whole run holding a token.
func TestCreatorOperations(t *testing.T) {
	t.Parallel()
	run := startCreatorRun(t)
	key := keyed(run.tn.apiKey)
	base := "/api/v1/creators/" + run.token

	// One sale approved by the merchant.
	var refID string
	if err := run.s.deps.Pool.QueryRow(t.Context(), `SELECT id::text FROM referrals WHERE merchant_id = $1 AND order_id = $2`,
		run.tn.merchant.ID, "creator-880001").Scan(&refID); err != nil {
		t.Fatal(err)
	}
	ref, _ := ids.Parse(ids.Referral, refID)
	// 202 when the ledger took longer than ACTION_TIMEOUT on a loaded
	// machine: the approval lands anyway.
	if r := run.c.send(t, probe{"POST", "/api/v1/referrals/" + ids.Format(ids.Referral, ref) + "/approve",
		jsonBody(map[string]any{"notes": "ok"}), key}); r.status != 200 && r.status != 202 {
		t.Fatalf("approve = %d %v", r.status, r.body)
	}
	testenv.Eventually(t, 30*time.Second, "the approval", func() bool {
		return run.s.count(`SELECT count(*) FROM referrals WHERE merchant_id = $1 AND status = 'approved'`, run.tn.merchant.ID) == 1
	})

	r := run.public(t, base, 200, "")
	wantExactKeys(t, r.body, "id", "name", "niche", "instagramUsername", "referralCode", "referralLink", "totalSales", "approvedSales", "commissionTier")
	memberUUID, _ := ids.Parse(ids.Member, run.memberID)
	if r.body["id"] != memberUUID.String() || r.body["name"] != "Ana Fit" || r.body["niche"] != "fitness" ||
		r.body["instagramUsername"] != "ana.fit" || r.body["referralCode"] != run.coupon ||
		!strings.Contains(fmt.Sprint(r.body["referralLink"]), "cupom="+run.coupon) ||
		num(t, r.body["totalSales"]) != 4 || num(t, r.body["approvedSales"]) != 1 {
		t.Errorf("GET /creators/{token} = %v", r.body)
	}
	tier, _ := r.body["commissionTier"].(map[string]any)
	wantExactKeys(t, tier, "name", "commissionRate")
	if tier["name"] != "Silver" || num(t, tier["commissionRate"]) != 0.15 {
		t.Errorf("commissionTier = %v, want Silver at 0.15 (4 sales this month)", tier)
	}

	r = run.public(t, base+"/tiers", 200, "")
	wantExactKeys(t, r.body, "data")
	d := r.data()
	wantExactKeys(t, d, "currentTier", "nextTier", "salesToNextTier", "tiers")
	cur, _ := d["currentTier"].(map[string]any)
	next, _ := d["nextTier"].(map[string]any)
	if cur["name"] != "Silver" || num(t, cur["minSales"]) != 3 || num(t, cur["commissionRate"]) != 0.15 ||
		next["name"] != "Gold" || num(t, next["minSales"]) != 10 || num(t, next["commissionRate"]) != 0.2 ||
		num(t, d["salesToNextTier"]) != 6 {
		t.Errorf("tiers = %v; want Silver now, Gold next, 6 sales to go", d)
	}
	tiers, _ := d["tiers"].([]any)
	var names []string
	for _, x := range tiers {
		tr, _ := x.(map[string]any)
		wantExactKeys(t, tr, "name", "minSales", "commissionRate")
		names = append(names, fmt.Sprintf("%v:%v:%v", tr["name"], tr["minSales"], tr["commissionRate"]))
	}
	if got := strings.Join(names, " "); got != "Bronze:0:0.1 Silver:3:0.15 Gold:10:0.2" {
		t.Errorf("tiers = %s", got)
	}

	r = run.public(t, base+"/sales?page=1&limit=20", 200, "")
	wantExactKeys(t, r.body, "data", "pagination")
	sales, _ := r.body["data"].([]any)
	if len(sales) != 4 {
		t.Fatalf("sales = %v, want 4", r.body)
	}
	pg, _ := r.body["pagination"].(map[string]any)
	if num(t, pg["page"]) != 1 || num(t, pg["limit"]) != 20 || num(t, pg["total"]) != 4 {
		t.Errorf("pagination = %v", pg)
	}
	wantMasked := []string{"l***@example.net", "P***@Example.com", "m***@example.org", "j***@example.com"} // newest first
	for i, x := range sales {
		sale, _ := x.(map[string]any)
		wantExactKeys(t, sale, "id", "orderAmount", "commissionAmount", "status", "couponUsed", "buyerEmail", "createdAt")
		email := fmt.Sprint(sale["buyerEmail"])
		if email != wantMasked[i] || !reMasked.MatchString(email) || strings.Contains(email, run.buyers[len(run.buyers)-1-i]) {
			t.Errorf("sale %d buyerEmail = %q, want %q", i, email, wantMasked[i])
		}
		if num(t, sale["orderAmount"]) != creatorOrder || !strings.EqualFold(fmt.Sprint(sale["couponUsed"]), run.coupon) {
			t.Errorf("sale %d = %v", i, sale)
		}
		status := "pending"
		if i == len(sales)-1 {
			status = "approved"
		}
		if sale["status"] != status {
			t.Errorf("sale %d status = %v, want %s", i, sale["status"], status)
		}
	}
	r = run.public(t, base+"/sales?page=2&limit=3", 200, "")
	if got, _ := r.body["data"].([]any); len(got) != 1 {
		t.Errorf("page 2 of 3 = %v, want the oldest sale", r.body)
	}
	run.public(t, base+"/sales?limit=101", 400, "VALIDATION_ERROR")
	run.public(t, base+"/sales?page=0", 400, "VALIDATION_ERROR")

	// Rotated: the old token is refused at once on all three, the new one reads.
	r = run.c.expect(t, probe{"POST", "/api/v1/members/" + run.memberID + "/creator/rotate-token", nil, key}, 200, "")
	rotated, _ := r.data()["token"].(string)
	for _, suffix := range []string{"", "/tiers", "/sales"} {
		run.public(t, base+suffix, 404, "NOT_FOUND")
		run.public(t, "/api/v1/creators/"+rotated+suffix, 200, "")
	}
	run.c.v.WantExercised(t, ex("getPublicCreator", 200), ex("getPublicCreator", 404), ex("getPublicCreatorTiers", 200),
		ex("getPublicCreatorTiers", 404), ex("getPublicCreatorSales", 200), ex("getPublicCreatorSales", 400),
		ex("getPublicCreatorSales", 404), ex("putCreator", 200), ex("putCampaignTiers", 200), ex("rotateCreatorToken", 200))

	// Not a line of the run (API, ingest, ledger, recorder) holds a token.
	lines := run.s.logs.All()
	for _, entry := range lines {
		line := entry.Message
		for k, v := range entry.ContextMap() {
			line += fmt.Sprintf(" %s=%v", k, v)
		}
		for _, token := range []string{run.token, rotated} {
			if strings.Contains(line, token) {
				t.Errorf("a log line holds a creator token: %s", line)
			}
		}
	}
	if len(lines) == 0 {
		t.Error("the run logged nothing: the log was not observed")
	}
}

// TestCreatorSalesEarnTheirTierRate: a creator's sale earns the commission
// of the tier its month reaches, the sale itself counted (decision 21): the
// 1st and 2nd sales of the month Bronze's 10 %, the 3rd and 4th Silver's
// 15 %, instead of the campaign's fixed reward. The ledger computes it.
func TestCreatorSalesEarnTheirTierRate(t *testing.T) {
	t.Parallel()
	run := startCreatorRun(t)
	r := run.public(t, "/api/v1/creators/"+run.token+"/sales", 200, "")
	sales, _ := r.body["data"].([]any)
	if len(sales) != 4 {
		t.Fatalf("sales = %v, want 4", r.body)
	}
	// Newest first: the 4th, 3rd, 2nd, 1st sale.
	want := []float64{creatorOrder * 15 / 100, creatorOrder * 15 / 100, creatorOrder * 10 / 100, creatorOrder * 10 / 100}
	for i, x := range sales {
		sale, _ := x.(map[string]any)
		if got := num(t, sale["commissionAmount"]); got != want[i] {
			t.Errorf("sale %d of the month earned %v, want %v", len(sales)-i, got, want[i])
		}
	}
	total := int64(want[0] + want[1] + want[2] + want[3])
	run.s.waitBalance(run.tn, "ana@example.com", wallet{totalEarned: total, pending: total})
}

// wantExactKeys fails unless obj has exactly the keys.
func wantExactKeys(t *testing.T, obj map[string]any, keys ...string) {
	t.Helper()
	if len(obj) != len(keys) {
		t.Errorf("keys of %v, want exactly %v", obj, keys)
		return
	}
	for _, k := range keys {
		if _, ok := obj[k]; !ok {
			t.Errorf("%v has no %q", obj, k)
		}
	}
}
