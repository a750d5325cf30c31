package httpapi_test

import (
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/ids"
	"github.com/convida/convida/pkg/ledger"
	"github.com/convida/convida/pkg/redemption"
)

var memberKeys = []string{"id", "email", "name", "external_id", "coupon_code", "campaign_id", "status", "wallet",
	"stats", "metadata", "created_at", "updated_at", "erased_at", "coupon_provisioning", "referral_links"}

// codeOf is the referral-code shape of decision 8 for merchant prefix LOJ.
func codeOf(namePart string) *regexp.Regexp {
	return regexp.MustCompile(`^LOJ-` + namePart + `-[23456789ABCDEFGHJKLMNPQRSTUVWXYZ]{4}$`)
}

func TestCreateMember(t *testing.T) {
	t.Parallel()
	env := mustEnv(t)
	tn := env.mustTenant(t)

	// No campaign yet: nothing to put the member in.
	r := tn.do(t, http.MethodPost, "/api/v1/members", map[string]any{"email": "joao@example.com", "name": "João Silva"})
	wantError(t, r, http.StatusBadRequest, "validation_error", "campaign")

	def := tn.mustCampaign(t, map[string]any{"name": "Padrão", "reward_type": "fixed", "reward_value": 1000})
	second := tn.mustCampaign(t, map[string]any{"name": "VIP", "reward_type": "percentage", "reward_value": 15})

	r = tn.do(t, http.MethodPost, "/api/v1/members", `{"email": "joao@example.com", "name": "João Silva",
  "external_id": "cus_123", "metadata": {"plan": "pro", "seats": 3, "tags": ["a", "b"], "nested": {"ok": true}}}`)
	wantStatus(t, r, http.StatusCreated)
	wantKeys(t, r, "", "data")
	wantKeys(t, r, "data", memberKeys...)
	wantKeys(t, r, "data.wallet", "pending", "available", "currency")
	wantKeys(t, r, "data.stats", "total_referrals", "total_earnings")
	wantKeys(t, r, "data.metadata", "plan", "seats", "tags", "nested")
	wantKeys(t, r, "data.coupon_provisioning", "guru", "yampi")
	wantKeys(t, r, "data.coupon_provisioning.guru", "status", "coupon_id", "error")
	wantFields(t, r, map[string]any{
		"data.id": reMemberID, "data.email": "joao@example.com", "data.name": "João Silva",
		"data.external_id": "cus_123", "data.coupon_code": codeOf("JOAO"), "data.campaign_id": def,
		"data.status": "active", "data.wallet.pending": 0, "data.wallet.available": 0, "data.wallet.currency": "BRL",
		"data.stats.total_referrals": 0, "data.stats.total_earnings": 0,
		"data.metadata.plan": "pro", "data.metadata.seats": 3, "data.metadata.tags.1": "b", "data.metadata.nested.ok": true,
		"data.created_at": reTimestamp, "data.updated_at": reTimestamp,
		// The default campaign gives the friend no discount: nothing to provision.
		"data.coupon_provisioning.guru.status": "not_configured", "data.coupon_provisioning.yampi.status": "not_configured",
		"data.coupon_provisioning.guru.coupon_id": nil, "data.coupon_provisioning.yampi.error": redemption.NoRefereeDiscount,
	})
	// With a referee discount, asked for in the creation's transaction; the dispatcher carries it out.
	friendly := tn.mustCampaign(t, map[string]any{"name": "Amigos", "reward_type": "fixed", "reward_value": 500,
		"referee_discount_type": "percentage", "referee_discount_value": 10})
	r = tn.do(t, http.MethodPost, "/api/v1/members", map[string]any{"email": "bia@example.com", "name": "Bia", "campaign_id": friendly})
	wantStatus(t, r, http.StatusCreated)
	wantFields(t, r, map[string]any{
		"data.coupon_provisioning.guru.status": "pending", "data.coupon_provisioning.yampi.status": "pending",
		"data.coupon_provisioning.guru.coupon_id": nil, "data.coupon_provisioning.yampi.error": nil,
	})
	r = tn.get(t, "/api/v1/members/"+str(t, r, "data.id"))
	wantFields(t, r, map[string]any{"data.coupon_provisioning.guru.status": "pending", "data.coupon_provisioning.yampi.status": "pending"})

	tests := []struct {
		name   string
		body   string
		status int
		code   string
		want   map[string]any // on success; mentions is the wanted field otherwise
		field  string
	}{
		{"in a named campaign", `{"email": "maria@example.com", "name": "Maria", "campaign_id": "` + second + `"}`, 201, "",
			map[string]any{"data.campaign_id": second, "data.coupon_code": codeOf("MARIA"), "data.external_id": ""}, ""},
		{"campaign by bare uuid", `{"email": "carla@example.com", "name": "Carla", "campaign_id": "` + bareUUID(t, second) + `"}`, 201, "",
			map[string]any{"data.campaign_id": second}, ""},
		{"name without letters", `{"email": "n1@example.com", "name": "123"}`, 201, "",
			map[string]any{"data.coupon_code": codeOf("MEMBER"), "data.campaign_id": def}, ""},
		{"long first name", `{"email": "n2@example.com", "name": "Maximilianoaugusto Souza"}`, 201, "",
			map[string]any{"data.coupon_code": codeOf("MAXIMILIANOA")}, ""},
		{"email and name trimmed", `{"email": "  lu@example.com ", "name": "  Lúcia  "}`, 201, "",
			map[string]any{"data.email": "lu@example.com", "data.name": "Lúcia", "data.coupon_code": codeOf("LUCIA")}, ""},
		{"null metadata", `{"email": "nm@example.com", "name": "Nina", "metadata": null}`, 201, "",
			map[string]any{"data.name": "Nina"}, ""},
		{"duplicate email", `{"email": "joao@example.com", "name": "Outro"}`, 409, "email_exists", nil, ""},
		{"duplicate email in another case", `{"email": "JOAO@Example.COM", "name": "Outro"}`, 409, "email_exists", nil, ""},
		{"unknown campaign", `{"email": "x1@example.com", "name": "X", "campaign_id": "camp_` + hex32() + `"}`, 400, "validation_error", nil, "campaign_id"},
		{"malformed campaign", `{"email": "x2@example.com", "name": "X", "campaign_id": "nope"}`, 400, "validation_error", nil, "campaign_id"},
		{"email missing", `{"name": "X"}`, 400, "validation_error", nil, "email"},
		{"email invalid", `{"email": "not-an-email", "name": "X"}`, 400, "validation_error", nil, "email"},
		{"email without domain", `{"email": "x@", "name": "X"}`, 400, "validation_error", nil, "email"},
		{"email with display name", `{"email": "X <x@example.com>", "name": "X"}`, 400, "validation_error", nil, "email"},
		{"email not text", `{"email": 5, "name": "X"}`, 400, "validation_error", nil, "email"},
		{"name missing", `{"email": "x3@example.com"}`, 400, "validation_error", nil, "name"},
		{"name blank", `{"email": "x4@example.com", "name": " "}`, 400, "validation_error", nil, "name"},
		{"metadata not an object", `{"email": "x5@example.com", "name": "X", "metadata": "vip"}`, 400, "validation_error", nil, "metadata"},
		{"metadata an array", `{"email": "x6@example.com", "name": "X", "metadata": [1]}`, 400, "validation_error", nil, "metadata"},
		{"campaign_id not text", `{"email": "x7@example.com", "name": "X", "campaign_id": 7}`, 400, "validation_error", nil, "campaign_id"},
		{"malformed JSON", `{"email": "x8@example.com", "name": }`, 400, "validation_error", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := tn.do(t, http.MethodPost, "/api/v1/members", tt.body)
			if tt.status != http.StatusCreated {
				wantError(t, r, tt.status, tt.code, tt.field)
				return
			}
			wantStatus(t, r, http.StatusCreated)
			wantKeys(t, r, "data", memberKeys...)
			wantKeys(t, r, "data.metadata") // no metadata given: an empty object, never null
			want := map[string]any{"data.id": reMemberID, "data.status": "active", "data.wallet.currency": "BRL"}
			for k, v := range tt.want {
				want[k] = v
			}
			wantFields(t, r, want)
		})
	}
}

func bareUUID(tb testing.TB, prefixed string) string {
	tb.Helper()
	i := strings.IndexByte(prefixed, '_')
	id, ok := ids.Parse(prefixed[:i+1], prefixed)
	if !ok {
		tb.Fatalf("%q does not parse", prefixed)
	}
	return id.String()
}

func hex32() string { return strings.ReplaceAll(uuid.NewString(), "-", "") }

func TestGetMember(t *testing.T) {
	t.Parallel()
	env := mustEnv(t)
	tn := env.mustTenant(t)
	camp := tn.mustCampaign(t, map[string]any{"name": "Padrão", "reward_type": "percentage", "reward_value": 10})
	created := tn.do(t, http.MethodPost, "/api/v1/members", map[string]any{"email": "ana@example.com", "name": "Ana Souza",
		"external_id": "cus_9", "metadata": map[string]any{"origin": "site"}})
	wantStatus(t, created, http.StatusCreated)
	ana := member{prefID: str(t, created, "data.id"), email: "ana@example.com", coupon: str(t, created, "data.coupon_code")}
	ana.id, _ = ids.Parse(ids.Member, ana.prefID)

	// The prefixed id and the bare UUID (the member-facing id) both work.
	for _, path := range []string{ana.prefID, ana.id.String()} {
		r := tn.get(t, "/api/v1/members/"+path)
		wantStatus(t, r, http.StatusOK)
		wantKeys(t, r, "data", memberKeys...)
		wantFields(t, r, map[string]any{
			"data.id": ana.prefID, "data.email": "ana@example.com", "data.name": "Ana Souza", "data.external_id": "cus_9",
			"data.coupon_code": ana.coupon, "data.campaign_id": camp, "data.status": "active",
			"data.wallet.pending": 0, "data.wallet.available": 0, "data.wallet.currency": "BRL",
			"data.stats.total_referrals": 0, "data.stats.total_earnings": 0, "data.metadata.origin": "site",
			"data.created_at": str(t, created, "data.created_at"), "data.updated_at": reTimestamp,
		})
	}

	walletKeys := []string{"member_id", "pending", "available", "total_earned", "total_redeemed", "cancelled", "currency", "updated_at"}
	r := tn.get(t, "/api/v1/members/"+ana.prefID+"/wallet")
	wantStatus(t, r, http.StatusOK)
	wantKeys(t, r, "", "data")
	wantKeys(t, r, "data", walletKeys...)
	wantFields(t, r, map[string]any{"data.member_id": ana.prefID, "data.pending": 0, "data.available": 0,
		"data.total_earned": 0, "data.total_redeemed": 0, "data.cancelled": 0, "data.currency": "BRL",
		"data.updated_at": reTimestamp})

	// 9790 × 10 % = 979 pending; then released; then the second sale.
	steps := []struct {
		name   string
		cmds   func() []ledger.Command
		wallet map[string]any
		member map[string]any
	}{
		{"credited", func() []ledger.Command { return []ledger.Command{tn.sale(ledger.CmdCreditSale, ana, "o1", 9790)} },
			map[string]any{"data.pending": 979, "data.available": 0, "data.total_earned": 979, "data.cancelled": 0},
			map[string]any{"data.wallet.pending": 979, "data.wallet.available": 0, "data.stats.total_referrals": 1}},
		{"released", func() []ledger.Command { return []ledger.Command{tn.release(t, ana, "o1")} },
			map[string]any{"data.pending": 0, "data.available": 979, "data.total_earned": 979, "data.cancelled": 0},
			map[string]any{"data.wallet.pending": 0, "data.wallet.available": 979, "data.stats.total_referrals": 1,
				"data.stats.total_earnings": 979}},
		{"refunded", func() []ledger.Command { return []ledger.Command{tn.sale(ledger.CmdRefund, ana, "o1", 9790)} },
			map[string]any{"data.pending": 0, "data.available": 0, "data.total_earned": 0, "data.cancelled": 979},
			map[string]any{"data.wallet.pending": 0, "data.wallet.available": 0, "data.stats.total_referrals": 1,
				"data.stats.total_earnings": 0}},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			tn.mustLedger(t, st.cmds()...)
			r := tn.get(t, "/api/v1/members/"+ana.id.String()+"/wallet")
			wantStatus(t, r, http.StatusOK)
			wantKeys(t, r, "data", walletKeys...)
			st.wallet["data.member_id"], st.wallet["data.total_redeemed"], st.wallet["data.currency"] = ana.prefID, 0, "BRL"
			st.wallet["data.updated_at"] = reTimestamp
			wantFields(t, r, st.wallet)
			r = tn.get(t, "/api/v1/members/"+ana.prefID)
			wantStatus(t, r, http.StatusOK)
			wantFields(t, r, st.member)
		})
	}

	for _, bad := range []string{
		"mem_" + hex32(), uuid.NewString(), "mem_123", "camp_" + strings.TrimPrefix(ana.prefID, "mem_"),
		strings.TrimPrefix(ana.prefID, "mem_"), "MEM_" + strings.TrimPrefix(ana.prefID, "mem_"),
		"mem_" + strings.Repeat("z", 32), "%00",
	} {
		for _, suffix := range []string{"", "/wallet", "/transactions"} {
			wantError(t, tn.get(t, "/api/v1/members/"+bad+suffix), http.StatusNotFound, "not_found", "")
		}
	}
}

func TestMemberTransactions(t *testing.T) {
	t.Parallel()
	env := mustEnv(t)
	tn := env.mustTenant(t)
	tn.mustCampaign(t, map[string]any{"name": "Padrão", "reward_type": "fixed", "reward_value": 1000})
	ana := tn.mustMember(t, "ana@example.com", "Ana Souza")
	path := "/api/v1/members/" + ana.prefID + "/transactions"

	r := tn.get(t, path)
	wantStatus(t, r, http.StatusOK)
	wantKeys(t, r, "", "data", "pagination")
	wantLen(t, r, "data", 0)
	wantKeys(t, r, "pagination", "page", "per_page", "total", "total_pages")
	wantFields(t, r, map[string]any{"pagination.page": 1, "pagination.per_page": 20, "pagination.total": 0,
		"pagination.total_pages": 0})

	// Five entries, oldest first: three credits, the release of o1, the
	// cancellation of o2 (refunded while pending).
	tn.mustLedger(t, tn.sale(ledger.CmdCreditSale, ana, "o1", 5000))
	tn.mustLedger(t, tn.sale(ledger.CmdCreditSale, ana, "o2", 5000))
	tn.mustLedger(t, tn.sale(ledger.CmdCreditSale, ana, "o3", 5000))
	tn.mustLedger(t, tn.release(t, ana, "o1"))
	tn.mustLedger(t, tn.sale(ledger.CmdRefund, ana, "o2", 5000))
	ref := func(order string) string { return ids.Format(ids.Referral, tn.referralID(t, ana, order)) }

	r = tn.get(t, path)
	wantStatus(t, r, http.StatusOK)
	wantLen(t, r, "data", 5)
	wantFields(t, r, map[string]any{"pagination.page": 1, "pagination.per_page": 20, "pagination.total": 5,
		"pagination.total_pages": 1})
	txnKeys := []string{"id", "type", "amount", "balance_after", "description", "reference_type", "reference_id", "created_at"}
	// Newest first, each with the wallet right after it.
	want := []struct {
		typ                string
		order              string
		pending, available int
	}{
		{"cancel", "o2", 1000, 1000},
		{"release", "o1", 2000, 1000},
		{"credit", "o3", 3000, 0},
		{"credit", "o2", 2000, 0},
		{"credit", "o1", 1000, 0},
	}
	seen := map[string]bool{}
	for i, w := range want {
		p := "data." + string(rune('0'+i))
		wantKeys(t, r, p, txnKeys...)
		wantKeys(t, r, p+".balance_after", "pending", "available", "currency")
		wantFields(t, r, map[string]any{
			p + ".id": reTxnID, p + ".type": w.typ, p + ".amount": 1000,
			p + ".balance_after.pending": w.pending, p + ".balance_after.available": w.available,
			p + ".balance_after.currency": "BRL", p + ".description": reNonEmpty,
			p + ".reference_type": "referral", p + ".reference_id": ref(w.order), p + ".created_at": reTimestamp,
		})
		id := str(t, r, p+".id")
		if seen[id] {
			t.Errorf("transaction id %s appears twice", id)
		}
		seen[id] = true
	}

	pages := []struct {
		query                              string
		n, page, perPage, total, totalPage int
		types                              string // the types on the page, newest first
	}{
		{"?per_page=2", 2, 1, 2, 5, 3, "cancel,release"},
		{"?per_page=2&page=2", 2, 2, 2, 5, 3, "credit,credit"},
		{"?per_page=2&page=3", 1, 3, 2, 5, 3, "credit"},
		{"?per_page=2&page=4", 0, 4, 2, 5, 3, ""},
		{"?per_page=100", 5, 1, 100, 5, 1, "cancel,release,credit,credit,credit"},
		{"?per_page=1&page=5", 1, 5, 1, 5, 5, "credit"},
		{"?type=credit", 3, 1, 20, 3, 1, "credit,credit,credit"},
		{"?type=credit&per_page=2&page=2", 1, 2, 2, 3, 2, "credit"},
		{"?type=release", 1, 1, 20, 1, 1, "release"},
		{"?type=cancel", 1, 1, 20, 1, 1, "cancel"},
		{"?type=debit", 0, 1, 20, 0, 0, ""},
		{"?type=adjustment", 0, 1, 20, 0, 0, ""},
	}
	for _, pg := range pages {
		t.Run(pg.query, func(t *testing.T) {
			t.Parallel()
			r := tn.get(t, path+pg.query)
			wantStatus(t, r, http.StatusOK)
			wantLen(t, r, "data", pg.n)
			wantFields(t, r, map[string]any{"pagination.page": pg.page, "pagination.per_page": pg.perPage,
				"pagination.total": pg.total, "pagination.total_pages": pg.totalPage})
			var types []string
			for i := 0; i < pg.n; i++ {
				types = append(types, str(t, r, "data."+string(rune('0'+i))+".type"))
			}
			if got := strings.Join(types, ","); got != pg.types {
				t.Errorf("types = %q, want %q", got, pg.types)
			}
		})
	}

	bad := []struct{ query, field string }{
		{"?per_page=0", "per_page"},
		{"?per_page=101", "per_page"},
		{"?per_page=abc", "per_page"},
		{"?per_page=-1", "per_page"},
		{"?per_page=2.5", "per_page"},
		{"?page=0", "page"},
		{"?page=-3", "page"},
		{"?page=abc", "page"},
		{"?page=99999999999999999999", "page"},
		{"?type=refund", "type"},
		{"?type=CREDIT", "type"},
	}
	for _, b := range bad {
		t.Run(b.query, func(t *testing.T) {
			t.Parallel()
			wantError(t, tn.get(t, path+b.query), http.StatusBadRequest, "validation_error", b.field)
		})
	}
}
