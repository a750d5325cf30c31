package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/convida/convida/pkg/httpapi"
	"github.com/convida/convida/pkg/ids"
	"github.com/convida/convida/pkg/ledger"
	"github.com/convida/convida/pkg/postgres"
	"github.com/convida/convida/pkg/secretbox"
)

var (
	publicMemberKeys = []string{"id", "email", "name", "referralCode", "referralLink", "status", "wallet"}
	publicWalletKeys = []string{"totalEarned", "totalRedeemed", "available", "pending", "cancelled"}
)

func me(query url.Values) string { return "/api/v1/member/me?" + query.Encode() }

// wantReferralLink checks decision 8: the store URL with the code in
// `cupom`, its other query parameters kept.
func wantReferralLink(tb testing.TB, r reply, code string) {
	tb.Helper()
	link := str(tb, r, "data.referralLink")
	u, err := url.Parse(link)
	if err != nil {
		tb.Fatalf("referralLink %q: %v", link, err)
	}
	store, _ := url.Parse(storeURL)
	if u.Scheme != store.Scheme || u.Host != store.Host || u.Path != store.Path {
		tb.Errorf("referralLink = %q, want it on %s", link, storeURL)
	}
	if got := u.Query().Get("cupom"); got != code {
		tb.Errorf("referralLink cupom = %q, want %q", got, code)
	}
	if got := u.Query().Get("utm_source"); got != "convida" {
		tb.Errorf("referralLink lost utm_source: %q", link)
	}
}

func TestMemberMe(t *testing.T) {
	t.Parallel()
	env := mustEnv(t)
	tn := env.mustTenant(t)
	tn.mustCampaign(t, map[string]any{"name": "Padrão", "reward_type": "fixed", "reward_value": 1000})
	vip := tn.mustCampaign(t, map[string]any{"name": "VIP", "reward_type": "fixed", "reward_value": 2000})
	r := tn.do(t, http.MethodPost, "/api/v1/members", map[string]any{"email": "ana@example.com", "name": "Ana Souza", "external_id": "cus_1"})
	wantStatus(t, r, http.StatusCreated)
	ana := member{prefID: str(t, r, "data.id"), email: "ana@example.com", coupon: str(t, r, "data.coupon_code")}
	ana.id, _ = ids.Parse(ids.Member, ana.prefID)

	type q = url.Values
	tests := []struct {
		name    string
		query   url.Values
		status  int
		code    string // error code when not 200
		created bool
		id      string // the member's UUID when known in advance
		email   string
		name_   string
		want    map[string]any // admin view of the member, when created
	}{
		{name: "existing by email", query: q{"email": {"ana@example.com"}}, status: 200, id: ana.id.String(),
			email: "ana@example.com", name_: "Ana Souza"},
		{name: "existing by email in another case", query: q{"email": {"ANA@Example.com"}}, status: 200, id: ana.id.String(),
			email: "ana@example.com", name_: "Ana Souza"},
		{name: "existing by externalId", query: q{"externalId": {"cus_1"}}, status: 200, id: ana.id.String(),
			email: "ana@example.com", name_: "Ana Souza"},
		{name: "existing with autoCreate", query: q{"email": {"ana@example.com"}, "name": {"Outra Ana"}, "autoCreate": {"true"}},
			status: 200, id: ana.id.String(), email: "ana@example.com", name_: "Ana Souza"},
		{name: "autoCreate", query: q{"email": {"joao@example.com"}, "name": {"João Pereira"}, "autoCreate": {"true"},
			"externalId": {"cus_2"}, "cpf": {"12345678900"}, "phone": {"+5511999990000"}},
			status: 200, created: true, email: "joao@example.com", name_: "João Pereira",
			want: map[string]any{"data.external_id": "cus_2", "data.coupon_code": codeOf("JOAO")}},
		{name: "autoCreate in a campaign", query: q{"email": {"vip@example.com"}, "name": {"Vera"}, "autoCreate": {"true"},
			"campaignId": {vip}}, status: 200, created: true, email: "vip@example.com", name_: "Vera",
			want: map[string]any{"data.campaign_id": vip}},
		{name: "autoCreate without name", query: q{"email": {"new1@example.com"}, "autoCreate": {"true"}},
			status: 400, code: "MISSING_FIELDS"},
		{name: "autoCreate without email", query: q{"externalId": {"cus_404"}, "name": {"Novo"}, "autoCreate": {"true"}},
			status: 400, code: "MISSING_FIELDS"},
		{name: "autoCreate without anything", query: q{"autoCreate": {"true"}}, status: 400, code: "MISSING_FIELDS"},
		{name: "autoCreate in an unknown campaign", query: q{"email": {"new2@example.com"}, "name": {"Novo"},
			"autoCreate": {"true"}, "campaignId": {"camp_" + hex32()}}, status: 400, code: "VALIDATION_ERROR"},
		{name: "missing", query: q{"email": {"nobody@example.com"}}, status: 404, code: "MEMBER_NOT_FOUND"},
		{name: "missing, autoCreate false", query: q{"email": {"nobody@example.com"}, "name": {"N"}, "autoCreate": {"false"}},
			status: 404, code: "MEMBER_NOT_FOUND"},
		{name: "missing by externalId", query: q{"externalId": {"cus_404"}}, status: 404, code: "MEMBER_NOT_FOUND"},
		{name: "invalid email", query: q{"email": {"not-an-email"}}, status: 400, code: "VALIDATION_ERROR"},
		{name: "invalid autoCreate", query: q{"email": {"ana@example.com"}, "autoCreate": {"maybe"}}, status: 400, code: "VALIDATION_ERROR"},
		{name: "no lookup key", query: q{}, status: 400, code: "VALIDATION_ERROR"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := tn.get(t, me(tt.query))
			if tt.status != http.StatusOK {
				wantError(t, r, tt.status, tt.code, "")
				return
			}
			wantStatus(t, r, http.StatusOK)
			wantKeys(t, r, "", "data", "created")
			wantKeys(t, r, "data", publicMemberKeys...)
			wantKeys(t, r, "data.wallet", publicWalletKeys...)
			id := tt.id
			if id == "" {
				id = str(t, r, "data.id")
			}
			wantFields(t, r, map[string]any{
				"created": tt.created, "data.id": id, "data.email": tt.email, "data.name": tt.name_,
				"data.referralCode": reNonEmpty, "data.status": "active",
				"data.wallet.totalEarned": 0, "data.wallet.totalRedeemed": 0, "data.wallet.available": 0,
				"data.wallet.pending": 0, "data.wallet.cancelled": 0,
			})
			if !reUUID.MatchString(id) {
				t.Errorf("data.id = %q, want the member's UUID", id)
			}
			wantReferralLink(t, r, str(t, r, "data.referralCode"))
			if !tt.created {
				return
			}
			// The member exists now, as the admin API sees it, and a second
			// call finds it.
			admin := tn.get(t, "/api/v1/members/"+id)
			wantStatus(t, admin, http.StatusOK)
			want := map[string]any{"data.email": tt.email, "data.name": tt.name_,
				"data.coupon_code": str(t, r, "data.referralCode"), "data.status": "active"}
			for k, v := range tt.want {
				want[k] = v
			}
			wantFields(t, admin, want)
			again := tn.get(t, me(tt.query))
			wantStatus(t, again, http.StatusOK)
			wantFields(t, again, map[string]any{"created": false, "data.id": id})
		})
	}
}

// TestMemberMeConcurrentAutoCreate: racing autoCreates of one email make
// one member, and exactly one answer says it created it.
func TestMemberMeConcurrentAutoCreate(t *testing.T) {
	t.Parallel()
	env := mustEnv(t)
	tn := env.mustTenant(t)
	tn.mustCampaign(t, map[string]any{"name": "Padrão", "reward_type": "fixed", "reward_value": 1000})
	const n = 8
	path := me(url.Values{"email": {"race@example.com"}, "name": {"Rita"}, "autoCreate": {"true"}})
	replies := make([]reply, n)
	errs := make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			replies[i], errs[i] = env.try(request{method: http.MethodGet, path: path,
				header: map[string]string{"X-API-Key": tn.key}})
		}()
	}
	close(start)
	wg.Wait()
	created, id := 0, ""
	for i, r := range replies {
		if errs[i] != nil {
			t.Fatalf("GET %s: %v", path, errs[i])
		}
		wantStatus(t, r, http.StatusOK)
		if v, _ := at(r.json, "created"); v == true {
			created++
		}
		got := str(t, r, "data.id")
		if id == "" {
			id = got
		}
		if got != id {
			t.Errorf("data.id = %s and %s: two members", id, got)
		}
	}
	if created != 1 {
		t.Errorf("%d answers say created, want 1", created)
	}
	var count int
	if err := env.pool.QueryRow(context.Background(), `SELECT count(*) FROM members WHERE merchant_id = $1`,
		tn.merchant.ID).Scan(&count); err != nil {
		t.Fatal(err)
	}
	if count != 1 {
		t.Errorf("members = %d, want 1", count)
	}
}

// TestMemberFacingWallet follows one referral through credit, release and
// refund and checks the member-facing reads after each step (decisions 17,
// 18).
func TestMemberFacingWallet(t *testing.T) {
	t.Parallel()
	env := mustEnv(t)
	tn := env.mustTenant(t)
	tn.mustCampaign(t, map[string]any{"name": "Padrão", "reward_type": "percentage", "reward_value": 10})
	ana := tn.mustMember(t, "ana@example.com", "Ana Souza")
	q := "?email=" + url.QueryEscape("Ana@Example.com")

	for _, p := range []string{"/api/v1/wallet/transactions", "/api/v1/member/referrals"} {
		r := tn.get(t, p+q)
		wantStatus(t, r, http.StatusOK)
		wantFields(t, r, map[string]any{"data.memberId": ana.id.String()})
	}
	wantLen(t, tn.get(t, "/api/v1/wallet/transactions"+q), "data.transactions", 0)
	wantLen(t, tn.get(t, "/api/v1/member/referrals"+q), "data.referrals", 0)

	type figures struct{ pending, available, earned, cancelled int64 }
	steps := []struct {
		name      string
		cmd       func(t *testing.T) ledger.Command
		wallet    figures
		txnStatus string
		refStatus string
	}{
		{"nothing yet", nil, figures{}, "", ""},
		{"credited", func(*testing.T) ledger.Command { return tn.sale(ledger.CmdCreditSale, ana, "o1", 9790) },
			figures{pending: 979, earned: 979}, "pending", "pending"},
		{"released", func(t *testing.T) ledger.Command { return tn.release(t, ana, "o1") },
			figures{available: 979, earned: 979}, "available", "approved"},
		{"refunded", func(*testing.T) ledger.Command { return tn.sale(ledger.CmdRefund, ana, "o1", 9790) },
			figures{cancelled: 979}, "reversed", "cancelled"},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			if st.cmd != nil {
				tn.mustLedger(t, st.cmd(t))
			}
			walletWant := func(prefix string) map[string]any {
				return map[string]any{
					prefix + ".pending": st.wallet.pending, prefix + ".available": st.wallet.available,
					prefix + ".totalEarned": st.wallet.earned, prefix + ".totalRedeemed": 0,
					prefix + ".cancelled": st.wallet.cancelled,
				}
			}

			r := tn.get(t, "/api/v1/wallet/balance"+q)
			wantStatus(t, r, http.StatusOK)
			wantKeys(t, r, "", "data")
			wantKeys(t, r, "data", "memberId", "balance")
			wantKeys(t, r, "data.balance", publicWalletKeys...)
			want := walletWant("data.balance")
			want["data.memberId"] = ana.id.String()
			wantFields(t, r, want)
			// Decision 18's invariant, as the client sees it.
			if n := func(k string) int64 {
				v, _ := at(r.json, "data.balance."+k)
				num, _ := v.(json.Number)
				i, _ := num.Int64()
				return i
			}; n("available")+n("pending") != n("totalEarned")-n("totalRedeemed") {
				t.Errorf("available + pending != totalEarned − totalRedeemed: %s", r)
			}

			r = tn.get(t, "/api/v1/member/me"+q)
			wantStatus(t, r, http.StatusOK)
			wantFields(t, r, walletWant("data.wallet"))

			if st.cmd == nil {
				return
			}
			r = tn.get(t, "/api/v1/wallet/transactions"+q)
			wantStatus(t, r, http.StatusOK)
			wantKeys(t, r, "", "data")
			wantKeys(t, r, "data", "memberId", "transactions")
			wantLen(t, r, "data.transactions", 1)
			wantKeys(t, r, "data.transactions.0", "id", "type", "status", "amount", "description", "createdAt")
			wantFields(t, r, map[string]any{
				"data.memberId": ana.id.String(), "data.transactions.0.id": reUUID, "data.transactions.0.type": "credit",
				"data.transactions.0.status": st.txnStatus, "data.transactions.0.amount": 979,
				"data.transactions.0.description": reNonEmpty, "data.transactions.0.createdAt": reTimestamp,
			})

			r = tn.get(t, "/api/v1/member/referrals"+q)
			wantStatus(t, r, http.StatusOK)
			wantKeys(t, r, "", "data")
			wantKeys(t, r, "data", "memberId", "referrals")
			wantLen(t, r, "data.referrals", 1)
			wantKeys(t, r, "data.referrals.0", "id", "refereeName", "refereeEmail", "orderAmount", "rewardAmount",
				"status", "couponUsed", "createdAt")
			wantFields(t, r, map[string]any{
				"data.memberId":                ana.id.String(),
				"data.referrals.0.id":          tn.referralID(t, ana, "o1").String(),
				"data.referrals.0.refereeName": "Bruno Lima", "data.referrals.0.refereeEmail": "bruno.o1@example.com",
				"data.referrals.0.orderAmount": 9790, "data.referrals.0.rewardAmount": 979,
				"data.referrals.0.status": st.refStatus, "data.referrals.0.couponUsed": ana.coupon,
				"data.referrals.0.createdAt": reTimestamp,
			})
		})
	}

	errs := []struct {
		name, query, code string
		status            int
		key               bool
	}{
		{"email missing", "", "VALIDATION_ERROR", 400, true},
		{"email blank", "?email=%20", "VALIDATION_ERROR", 400, true},
		{"email invalid", "?email=ana", "VALIDATION_ERROR", 400, true},
		{"unknown email", "?email=nobody@example.com", "MEMBER_NOT_FOUND", 404, true},
		{"externalId is not enough", "?externalId=cus_1", "VALIDATION_ERROR", 400, true},
		{"no key", q, "UNAUTHORIZED", 401, false},
	}
	for _, p := range []string{"/api/v1/member/referrals", "/api/v1/wallet/balance", "/api/v1/wallet/transactions"} {
		for _, e := range errs {
			t.Run(p+" "+e.name, func(t *testing.T) {
				t.Parallel()
				var r reply
				if e.key {
					r = tn.get(t, p+e.query)
				} else {
					r = env.call(t, request{method: http.MethodGet, path: p + e.query})
				}
				wantError(t, r, e.status, e.code, "")
			})
		}
	}
}

// TestTenantIsolation: decision 1, merchant B's key on merchant A's
// resources is 404, never the resource.
func TestTenantIsolation(t *testing.T) {
	t.Parallel()
	env := mustEnvWith(t, envOptions{wire: func(pool *pgxpool.Pool, box *secretbox.Box) httpapi.Config {
		return httpapi.Config{Creators: httpapi.CreatorsConfig{Profiles: postgres.NewCreatorStore(pool, box),
			Tiers: postgres.NewCampaignTierStore(pool)}}
	}})
	a, b := env.mustTenant(t), env.mustTenant(t)
	campA := a.mustCampaign(t, map[string]any{"name": "A", "reward_type": "fixed", "reward_value": 1000})
	b.mustCampaign(t, map[string]any{"name": "B", "reward_type": "fixed", "reward_value": 1000})
	r := a.do(t, http.MethodPost, "/api/v1/members", map[string]any{"email": "shared@example.com", "name": "Ana", "external_id": "ext_a"})
	wantStatus(t, r, http.StatusCreated)
	memA := member{prefID: str(t, r, "data.id"), email: "shared@example.com", coupon: str(t, r, "data.coupon_code")}
	memA.id, _ = ids.Parse(ids.Member, memA.prefID)
	a.mustLedger(t, a.sale(ledger.CmdCreditSale, memA, "o1", 5000))
	r = a.do(t, http.MethodPut, "/api/v1/integrations/guru", map[string]any{"account_token": "tokenA-0123456789"})
	wantStatus(t, r, http.StatusOK)
	creatorA := a.mustCreator(t, memA, "Ana")
	wantStatus(t, a.do(t, http.MethodPut, "/api/v1/campaigns/"+campA+"/tiers", bronzeSilverGold), http.StatusOK)

	tests := []struct {
		name, method, path string
		body               any
		status             int
		code               string
	}{
		{"member", "GET", "/api/v1/members/" + memA.prefID, nil, 404, "not_found"},
		{"member by uuid", "GET", "/api/v1/members/" + memA.id.String(), nil, 404, "not_found"},
		{"member wallet", "GET", "/api/v1/members/" + memA.prefID + "/wallet", nil, 404, "not_found"},
		{"member transactions", "GET", "/api/v1/members/" + memA.prefID + "/transactions", nil, 404, "not_found"},
		{"campaign", "GET", "/api/v1/campaigns/" + campA, nil, 404, "not_found"},
		{"member in A's campaign", "POST", "/api/v1/members",
			map[string]any{"email": "b1@example.com", "name": "B", "campaign_id": campA}, 400, "validation_error"},
		{"me by email", "GET", "/api/v1/member/me?email=shared@example.com", nil, 404, "MEMBER_NOT_FOUND"},
		{"me by externalId", "GET", "/api/v1/member/me?externalId=ext_a", nil, 404, "MEMBER_NOT_FOUND"},
		{"me autoCreate in A's campaign", "GET", "/api/v1/member/me?email=b2@example.com&name=B&autoCreate=true&campaignId=" + campA,
			nil, 400, "VALIDATION_ERROR"},
		{"referrals", "GET", "/api/v1/member/referrals?email=shared@example.com", nil, 404, "MEMBER_NOT_FOUND"},
		{"balance", "GET", "/api/v1/wallet/balance?email=shared@example.com", nil, 404, "MEMBER_NOT_FOUND"},
		{"transactions", "GET", "/api/v1/wallet/transactions?email=shared@example.com", nil, 404, "MEMBER_NOT_FOUND"},
		{"creator", "GET", "/api/v1/members/" + memA.prefID + "/creator", nil, 404, "not_found"},
		{"creator put", "PUT", "/api/v1/members/" + memA.prefID + "/creator", map[string]any{"display_name": "Mallory"}, 404, "not_found"},
		{"creator rotate", "POST", "/api/v1/members/" + memA.prefID + "/creator/rotate-token", nil, 404, "not_found"},
		{"creator delete", "DELETE", "/api/v1/members/" + memA.prefID + "/creator", nil, 404, "not_found"},
		{"tiers", "GET", "/api/v1/campaigns/" + campA + "/tiers", nil, 404, "not_found"},
		{"tiers put", "PUT", "/api/v1/campaigns/" + campA + "/tiers", map[string]any{"tiers": []any{}}, 404, "not_found"},
	}
	t.Run("B gets 404", func(t *testing.T) {
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				t.Parallel()
				r := b.do(t, tt.method, tt.path, tt.body)
				wantError(t, r, tt.status, tt.code, "")
			})
		}
	})

	t.Run("integration", func(t *testing.T) {
		r := b.get(t, "/api/v1/integrations/guru")
		wantStatus(t, r, http.StatusOK)
		wantFields(t, r, map[string]any{"data.configured": false})
	})
	t.Run("same email in another merchant", func(t *testing.T) {
		r := b.do(t, http.MethodPost, "/api/v1/members", map[string]any{"email": "shared@example.com", "name": "Bia"})
		wantStatus(t, r, http.StatusCreated)
		if got := str(t, r, "data.id"); got == memA.prefID {
			t.Errorf("B's member has A's id %s", got)
		}
		wantFields(t, r, map[string]any{"data.wallet.pending": 0})
	})
	t.Run("A still sees its own", func(t *testing.T) {
		r := a.get(t, "/api/v1/wallet/balance?email=shared@example.com")
		wantStatus(t, r, http.StatusOK)
		wantFields(t, r, map[string]any{"data.memberId": memA.id.String(), "data.balance.pending": 1000})
		r = a.get(t, "/api/v1/members/"+memA.prefID+"/creator")
		wantStatus(t, r, http.StatusOK)
		wantFields(t, r, map[string]any{"data.display_name": "Ana", "data.token": creatorA})
		wantLen(t, a.get(t, "/api/v1/campaigns/"+campA+"/tiers"), "data.tiers", 3)
	})
}
