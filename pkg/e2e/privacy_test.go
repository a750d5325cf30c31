package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/convida/convida/pkg/event"
	"github.com/convida/convida/pkg/ids"
	"github.com/convida/convida/pkg/member"
	"github.com/convida/convida/pkg/postgres"
	"github.com/convida/convida/pkg/redemption"
	"github.com/convida/convida/pkg/testenv"
)

// The privacy tests (docs/privacy.md): a member, Helena, with every kind
// of personal data Convida keeps — her own fields, a creator profile, the
// sales she referred (their buyers Igor and Julia), a sale she bought
// with another member's code and one she bought with none, a redemption,
// a rejection whose notes name her — and a webhook endpoint subscribed to
// every event. TestMemberExport reads her export; TestMemberErasure erases
// her and looks for her everywhere.

// herData is what the tests look for once she is erased, lower-cased:
// her e-mail, name, external id, document (as typed and as digits), phone,
// metadata, creator profile. Her first name alone is not in it: it is the
// name part of her referral code, which stays (docs/privacy.md).
var herData = []string{"helena.prado@example.com", "helena prado", "crm-helena-77", "390.533.447-05", "39053344705",
	"97777-1234", "@helena.prado.fit", "helena fit", "helena.fit.oficial"}

// herBuyersData are the buyers of the sales she referred.
var herBuyersData = []string{"igor.nunes@example.com", "igor nunes", "22233344405", "julia.reis@example.com", "julia reis", "33344455506"}

type privacyRun struct {
	s        *stack
	tn       *tenant
	rc       *receiver
	c        *checker
	helena   *member.Member
	bruno    *member.Member
	memberID string            // mem_…
	token    string            // her creator token
	refs     map[string]string // ref_… by order
}

func (run *privacyRun) api(t *testing.T, method, path string, body []byte, status int, code string) reply {
	t.Helper()
	return run.c.expect(t, probe{method, path, body, keyed(run.tn.apiKey)}, status, code)
}

// startPrivacyRun builds Helena's history through the API and the ingest
// and waits until every event was delivered and every delivery recorded.
func startPrivacyRun(t *testing.T) *privacyRun {
	t.Helper()
	s := startStack(t, stackOptions{dispatcher: true,
		env: webhookEnv(t, map[string]string{"REDEMPTION_RETRY_DELAYS": "50ms", "ACTION_TIMEOUT": "60s"})})
	run := &privacyRun{s: s, rc: newReceiver(t, nil), c: newChecker(t, s.apiURL), refs: map[string]string{}}
	run.tn = s.newTenant(testenv.FixedCampaign(1000, 30))
	tn := run.tn
	yampi := newPlatform(t)
	run.api(t, "PUT", "/api/v1/integrations/yampi",
		[]byte(`{"user_token":"yt","user_secret_key":"ys","store_alias":"loja","api_url":"`+yampi.srv.URL+`"}`), 200, "")
	s.hook(tn, run.rc, event.Subscribable...)

	ctx := context.Background()
	run.helena = &member.Member{MerchantID: tn.merchant.ID, CampaignID: tn.campaign.ID, Email: "helena.prado@example.com",
		Name: "Helena Prado", ExternalID: "crm-helena-77", Document: "390.533.447-05", Phone: "+55 21 97777-1234",
		Metadata: map[string]any{"instagram": "@helena.prado.fit", "plan": "gold"}}
	if err := postgres.NewMemberStore(s.deps.Pool).WithRelay(s.deps.Relay()).CreateMember(ctx, run.helena, tn.merchant.CodePrefix); err != nil {
		t.Fatal(err)
	}
	run.memberID = ids.Format(ids.Member, run.helena.ID)
	run.bruno = s.newMember(tn, "bruno@example.com", "Bruno Lima")
	creator := run.api(t, "PUT", "/api/v1/members/"+run.memberID+"/creator",
		[]byte(`{"display_name":"Helena Fit","niche":"fitness","instagram_username":"helena.fit.oficial"}`), 200, "")
	run.token, _ = creator.data()["token"].(string)

	guru := func(order, coupon, name, email, doc string) []byte {
		return fixture(t, guruApproved, map[string]any{"api_token": tn.guruToken, "id": order, "status": "approved",
			"payment.coupon.coupon_code": coupon, "payment.total": 100, "contact.name": name, "contact.email": email, "contact.doc": doc})
	}
	// Two sales she referred, one she bought with Bruno's code (her e-mail
	// in other letters), one she bought with no code.
	wantStatus(t, s.postGuru(tn, guru("pv-1", run.helena.CouponCode, "Igor Nunes", "igor.nunes@example.com", "22233344405")), 200)
	yampiBody := fixture(t, yampiPaid, map[string]any{"resource.id": 880001, "resource.promocode.data.code": run.helena.CouponCode,
		"resource.value_total": 100, "resource.customer.data.name": "Julia Reis", "resource.customer.data.first_name": "Julia",
		"resource.customer.data.last_name": "Reis", "resource.customer.data.email": "julia.reis@example.com",
		"resource.customer.data.cpf": "33344455506"})
	wantStatus(t, s.postYampi(tn, yampiBody, ""), 200)
	wantStatus(t, s.postGuru(tn, guru("pv-3", run.bruno.CouponCode, "Helena Prado", "Helena.Prado@Example.com", "39053344705")), 200)
	wantStatus(t, s.postGuru(tn, guru("pv-4", "", "Helena Prado", "HELENA.PRADO@EXAMPLE.COM", "390.533.447-05")), 200)
	s.waitBalance(tn, run.helena.Email, wallet{totalEarned: 2000, pending: 2000})
	s.waitBalance(tn, run.bruno.Email, wallet{totalEarned: 1000, pending: 1000})
	rows, err := s.deps.Pool.Query(ctx, `SELECT order_id, id FROM referrals WHERE merchant_id = $1`, tn.merchant.ID)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var order string
		var id uuid.UUID
		_ = rows.Scan(&order, &id)
		run.refs[order] = ids.Format(ids.Referral, id)
	}
	rows.Close()

	// One approved, one rejected with notes naming her, a redemption.
	run.api(t, "POST", "/api/v1/referrals/"+run.refs["pv-1"]+"/approve", []byte(`{}`), 200, "")
	run.api(t, "POST", "/api/v1/referrals/"+run.refs["880001"]+"/reject",
		[]byte(`{"reason":"other","notes":"Helena Prado asked to cancel, phone +55 21 97777-1234"}`), 200, "")
	run.api(t, "POST", "/api/v1/members/"+run.memberID+"/redeem", []byte(`{"amount":500,"type":"store_credit"}`), 200, "")
	s.waitBalance(tn, run.helena.Email, wallet{totalEarned: 1000, totalRedeemed: 500, available: 500, cancelled: 1000})
	run.settle(t, 4)
	return run
}

// settle waits until every event of the merchant was relayed and
// delivered to the receiver, and deliveries of the platforms are recorded.
func (run *privacyRun) settle(t *testing.T, deliveries int) {
	t.Helper()
	s, m := run.s, run.tn.merchant.ID
	testenv.Eventually(t, 30*time.Second, "every event delivered and every delivery recorded", func() bool {
		events := s.count(`SELECT count(*) FROM outbox WHERE merchant_id = $1 AND type = ANY($2)`, m, event.Subscribable)
		return s.count(`SELECT count(*) FROM outbox_pending WHERE merchant_id = $1`, m) == 0 &&
			s.count(`SELECT count(*) FROM webhook_jobs WHERE merchant_id = $1`, m) == 0 &&
			len(run.rc.received()) >= events &&
			s.count(`SELECT count(*) FROM inbound_deliveries WHERE merchant_id = $1`, m) == deliveries
	})
}

// TestMemberErasure erases Helena and finds her nowhere: in no column of
// any table, no answer of the API, no event delivered after; her wallet
// is what it was to the cent and the ledger checks; her code attributes no
// new sale, while a refund of a sale she referred still takes its reward
// back; a second erasure changes and emits nothing.
func TestMemberErasure(t *testing.T) {
	t.Parallel()
	run := startPrivacyRun(t)
	s, m := run.s, run.tn.merchant.ID
	// Two sales through her code that made no referral, their buyers hers
	// as much as her referrals': one waiting for its payment (ignored),
	// one with a wrong token (refused before it authenticated).
	for token, status := range map[string]int{run.tn.guruToken: 200, "not-the-token": 401} {
		body := fixture(t, guruApproved, map[string]any{"api_token": token, "id": "pv-6", "status": "waiting_payment",
			"payment.coupon.coupon_code": run.helena.CouponCode, "payment.total": 100, "contact.name": "Lara Souza",
			"contact.email": "lara.souza@example.com", "contact.doc": "55566677708"})
		wantStatus(t, s.postGuru(run.tn, body), status)
	}
	run.settle(t, 6)
	needles := slices.Concat(herData, herBuyersData, []string{"lara.souza@example.com", "lara souza", "55566677708"})
	if found := s.tablesHolding(t, needles); len(found) < len(needles)/2 {
		t.Fatalf("before the erasure the scan finds only %v: it could not fail", found)
	}
	walletPath := "/api/v1/members/" + run.memberID + "/wallet"
	walletBefore := run.api(t, "GET", walletPath, nil, 200, "").data()
	// An answer kept for its replays that shows her as a buyer: the
	// approval of the sale she bought with Bruno's code.
	approve := probe{"POST", "/api/v1/referrals/" + run.refs["pv-3"] + "/approve", []byte(`{}`), keyed(run.tn.apiKey, "Idempotency-Key", "approve-pv-3")}
	if r := run.c.expect(t, approve, 200, ""); !strings.Contains(jsonText(r.body), "Helena.Prado@Example.com") {
		t.Fatalf("the approval does not show her: %v", r.body)
	}
	// Its event, which shows her too, is delivered before the erasure
	// starts: what is delivered after is the erasure's to clean.
	testenv.Eventually(t, 30*time.Second, "the approval's referral.approved delivered", func() bool {
		for _, e := range run.rc.received() {
			if e.typ == "referral.approved" && e.data["order_id"] == "pv-3" {
				return true
			}
		}
		return false
	})
	delivered := len(run.rc.received())

	erased := run.api(t, "POST", "/api/v1/members/"+run.memberID+"/erase", nil, 200, "").data()
	if erased["email"] != member.ErasedEmail(run.helena.ID) || erased["name"] != "" || erased["external_id"] != "" ||
		len(erased["metadata"].(map[string]any)) != 0 || erased["erased_at"] == nil || erased["coupon_code"] != run.helena.CouponCode ||
		erased["status"] != "active" {
		t.Errorf("the erased member: %v", erased)
	}
	again := run.api(t, "POST", "/api/v1/members/"+run.memberID+"/erase", []byte(`{}`), 200, "").data()
	// The coupon provisioner works in the background and may settle her
	// codes between the two answers: that part is not the erasure's.
	delete(again, "coupon_provisioning")
	delete(erased, "coupon_provisioning")
	if a, b := jsonText(again), jsonText(erased); a != b {
		t.Errorf("a second erasure answered\n%s\nnot the first's\n%s", a, b)
	}
	testenv.Eventually(t, 20*time.Second, "member.erased delivered", func() bool { return len(run.rc.byType()["member.erased"].id) > 0 })
	run.settle(t, 6)
	if n := s.count(`SELECT count(*) FROM outbox WHERE merchant_id = $1 AND type = 'member.erased'`, m); n != 1 {
		t.Errorf("%d member.erased events, want 1: the second erasure emitted", n)
	}
	if n := s.count(`SELECT count(*) FROM audit_events WHERE merchant_id = $1 AND action = 'member.erased' AND target_id = $2`,
		m, run.memberID); n != 1 {
		t.Errorf("%d audit events member.erased, want 1", n)
	}

	// No table holds her, nor the buyers of her referrals.
	if found := s.tablesHolding(t, needles); len(found) > 0 {
		t.Errorf("after the erasure personal data remains:\n\t%s", strings.Join(found, "\n\t"))
	}

	// No answer of the API holds her.
	for _, path := range []string{
		"/api/v1/members/" + run.memberID, "/api/v1/members?per_page=100", walletPath,
		"/api/v1/members/" + run.memberID + "/transactions?per_page=100", "/api/v1/members/" + run.memberID + "/export",
		"/api/v1/referrals?per_page=100", "/api/v1/referrals/" + run.refs["pv-3"], "/api/v1/referrals/" + run.refs["880001"],
		"/api/v1/referrals?member_id=" + run.memberID,
	} {
		r := run.api(t, "GET", path, nil, 200, "")
		if found := holding(jsonText(r.body), needles); len(found) > 0 {
			t.Errorf("GET %s holds %q: %s", path, found, jsonText(r.body))
		}
	}
	run.api(t, "GET", "/api/v1/members/"+run.memberID+"/creator", nil, 404, "not_found")
	if got := creatorStatus(t, s, run.token); got != http.StatusNotFound {
		t.Errorf("her creator token on the public API: %d, want 404", got)
	}
	hook := s.webhookLogs(run.tn, firstWebhook(t, s, m), "?limit=100")
	if found := holding(jsonText(hook), needles); len(found) > 0 {
		t.Errorf("the delivery log holds %q", found)
	}

	// Its kept answer is forgotten: the approval runs anew (the same ledger
	// command, derived from the key) and shows the referral as it is now.
	if r := run.c.expect(t, approve, 200, ""); r.header.Get("Idempotent-Replayed") != "" ||
		len(holding(jsonText(r.body), needles)) > 0 {
		t.Errorf("the approval that showed her was replayed after the erasure: %v", r.body)
	}

	// Her old e-mail finds nothing; her erased member refuses her data again.
	old := url.QueryEscape(run.helena.Email)
	run.api(t, "GET", "/api/v1/member/me?email="+old, nil, 404, "MEMBER_NOT_FOUND")
	run.api(t, "GET", "/api/v1/wallet/balance?email="+old, nil, 404, "MEMBER_NOT_FOUND")
	if list := run.api(t, "GET", "/api/v1/members?search=helena.prado", nil, 200, ""); len(list.body["data"].([]any)) != 0 {
		t.Errorf("search by her old e-mail: %v", list.body)
	}
	run.api(t, "PATCH", "/api/v1/members/"+run.memberID, []byte(`{"name":"Helena Prado"}`), 409, "invalid_state")

	// Her wallet, to the cent; the ledger checks.
	if after := run.api(t, "GET", walletPath, nil, 200, "").data(); jsonText(after) != jsonText(walletBefore) {
		t.Errorf("her wallet was %v, is %v", walletBefore, after)
	}
	if err := checkLedger(s); err != nil {
		t.Error(err)
	}

	// Every event delivered since the erasure, the erasure's own first.
	for _, e := range run.rc.received()[delivered:] {
		if found := holding(jsonText(e.data), needles); len(found) > 0 {
			t.Errorf("%s delivered after the erasure holds %q: %v", e.typ, found, e.data)
		}
	}
	if d := run.rc.byType()["member.erased"].data; d["id"] != run.memberID || d["email"] != member.ErasedEmail(run.helena.ID) ||
		d["erased_at"] == nil || d["name"] != "" {
		t.Errorf("member.erased data: %v", d)
	}

	// Her code attributes no new sale; a refund of a sale she referred
	// before still takes back what it can (500 available of the 1000).
	newSale := fixture(t, guruApproved, map[string]any{"api_token": run.tn.guruToken, "id": "pv-5", "status": "approved",
		"payment.coupon.coupon_code": run.helena.CouponCode, "payment.total": 100, "contact.name": "Kaio Mendes",
		"contact.email": "kaio@example.com", "contact.doc": "44455566607"})
	wantStatus(t, s.postGuru(run.tn, newSale), 200)
	testenv.Eventually(t, 15*time.Second, "the sale of her code processed", func() bool {
		return s.count(`SELECT count(*) FROM processed_commands WHERE merchant_id = $1 AND command_id = 'guru:pv-5:sale'
  AND outcome = 'noop' AND result->>'reason' = 'member erased: nothing attributed'`, m) == 1
	})
	if n := s.count(`SELECT count(*) FROM referrals WHERE merchant_id = $1 AND order_id = 'pv-5'`, m); n != 0 {
		t.Errorf("the sale of her code after the erasure made %d referrals", n)
	}
	// The merchant reads what became of it in the deliveries' list.
	listed := map[string]any{}
	for _, d := range run.api(t, "GET", "/api/v1/integrations/guru/deliveries?per_page=100", nil, 200, "").body["data"].([]any) {
		if d := d.(map[string]any); d["order_id"] == "pv-5" {
			listed = d
		}
	}
	if listed["outcome"] != "member_erased" || listed["error"] != "member erased: nothing attributed" || listed["status"] != 200.0 {
		t.Errorf("the sale of her code after the erasure is listed %v, want member_erased (answered 200) with the ledger's note", listed)
	}
	if after := run.api(t, "GET", walletPath, nil, 200, "").data(); jsonText(after) != jsonText(walletBefore) {
		t.Errorf("after a sale of her code her wallet was %v, is %v", walletBefore, after)
	}
	refund := fixture(t, guruRefunded, map[string]any{"api_token": run.tn.guruToken, "id": "pv-1", "status": "refunded",
		"payment.coupon.coupon_code": run.helena.CouponCode, "payment.total": 100})
	wantStatus(t, s.postGuru(run.tn, refund), 200)
	testenv.Eventually(t, 15*time.Second, "the refund of her earlier sale", func() bool {
		w := run.api(t, "GET", walletPath, nil, 200, "").data()
		return w["available"] == 0.0 && w["total_earned"] == 500.0
	})
	if err := checkLedger(s); err != nil {
		t.Error(err)
	}
	run.settle(t, 8)
	for _, e := range run.rc.received()[delivered:] {
		if found := holding(jsonText(e.data), herData); len(found) > 0 {
			t.Errorf("%s delivered after the erasure holds %q: %v", e.typ, found, e.data)
		}
	}

	// The contract of the operation: a key still in flight, a key reused.
	eva := s.newMember(run.tn, "eva@example.com", "Eva Costa")
	evaPath := "/api/v1/members/" + ids.Format(ids.Member, eva.ID) + "/erase"
	s.heldInFlight(t, run.c, []any{`SELECT 1 FROM members WHERE merchant_id = $1 AND id = $2 FOR UPDATE`, m, eva.ID},
		probe{"POST", evaPath, nil, keyed(run.tn.apiKey, "Idempotency-Key", "erase-eva")}, 200)
	run.c.expect(t, probe{"POST", evaPath, []byte(`{"again":true}`), keyed(run.tn.apiKey, "Idempotency-Key", "erase-eva")}, 422, "idempotency_key_reused")
	run.c.v.WantExercised(t, ex("eraseMember", 200), ex("eraseMember", 409), ex("eraseMember", 422), ex("updateMember", 409))
}

// tablesHolding returns "table.column: needle" for every text, JSON,
// array and byte column of every table of the stack's database that holds
// one of needles (lower-case), letter case ignored.
func (s *stack) tablesHolding(t *testing.T, needles []string) []string {
	t.Helper()
	ctx := context.Background()
	rows, err := s.deps.Pool.Query(ctx, `SELECT c.table_name, c.column_name, c.data_type
FROM information_schema.columns c JOIN information_schema.tables t
  ON t.table_schema = c.table_schema AND t.table_name = c.table_name AND t.table_type = 'BASE TABLE'
WHERE c.table_schema = current_schema() AND c.data_type IN ('text', 'character varying', 'json', 'jsonb', 'ARRAY', 'bytea')
ORDER BY 1, 2`)
	if err != nil {
		t.Fatal(err)
	}
	type column struct{ Table, Name, Type string }
	cols, err := pgx.CollectRows(rows, pgx.RowToStructByPos[column])
	if err != nil {
		t.Fatal(err)
	}
	if len(cols) < 40 {
		t.Fatalf("only %d columns to scan: %v", len(cols), cols)
	}
	var found []string
	for _, c := range cols {
		text := pgx.Identifier{c.Name}.Sanitize() + "::text"
		if c.Type == "bytea" {
			text = "encode(" + pgx.Identifier{c.Name}.Sanitize() + ", 'escape')"
		}
		for _, n := range needles {
			var hits int
			if err := s.deps.Pool.QueryRow(ctx, `SELECT count(*) FROM `+pgx.Identifier{c.Table}.Sanitize()+
				` WHERE strpos(lower(`+text+`), $1) > 0`, n).Scan(&hits); err != nil {
				t.Fatalf("scan %s.%s: %v", c.Table, c.Name, err)
			}
			if hits > 0 {
				found = append(found, fmt.Sprintf("%s.%s: %q in %d rows", c.Table, c.Name, n, hits))
			}
		}
	}
	return found
}

// holding returns the needles text holds, letter case ignored.
func holding(text string, needles []string) []string {
	var out []string
	text = strings.ToLower(text)
	for _, n := range needles {
		if strings.Contains(text, n) {
			out = append(out, n)
		}
	}
	return out
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// firstWebhook is the id (wh_…) of the merchant's endpoint.
func firstWebhook(t *testing.T, s *stack, merchantID uuid.UUID) string {
	var id uuid.UUID
	if err := s.deps.Pool.QueryRow(context.Background(), `SELECT id FROM webhook_endpoints WHERE merchant_id = $1`, merchantID).Scan(&id); err != nil {
		t.Fatal(err)
	}
	return ids.Format(ids.Webhook, id)
}

// TestErasureSwitchesHerCouponOff: the coupons of an erased member's code
// at Guru and Yampi are switched off, so the code gives her friends no
// discount any more either.
func TestErasureSwitchesHerCouponOff(t *testing.T) {
	t.Parallel()
	s := startStack(t, stackOptions{dispatcher: true, env: couponEnv})
	guru, guruShop := newCouponShop(t, true)
	yampi, yampiShop := newCouponShop(t, false)
	tn := s.couponTenant(t, discounted("percentage", 15), guru, yampi)
	rui := s.newMember(tn, "rui.alves@example.com", "Rui Alves")
	id := ids.Format(ids.Member, rui.ID)
	s.waitCoupons(tn, id, provisioned)
	if status, body := s.api(tn, http.MethodPost, "/members/"+id+"/erase", nil); status != http.StatusOK {
		t.Fatalf("erase = %d %v", status, body)
	}
	st := s.waitCoupons(tn, id, map[string]string{"guru": redemption.CouponNotConfigured, "yampi": redemption.CouponNotConfigured})
	if !strings.Contains(fmt.Sprint(st["guru"]["error"]), "switched off") {
		t.Errorf("her guru coupon after the erasure: %v", st["guru"])
	}
	if g, y := guruShop.all()[rui.CouponCode], yampiShop.all()[rui.CouponCode]; g["is_active"] != false || y["active"] != false {
		t.Errorf("her coupons after the erasure: guru %v, yampi %v; want switched off", g, y)
	}
}
