package httpapi_test

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/ledger"
)

// TestListMembers covers every filter and bound of GET /members, the
// pagination math, the order and tenant isolation.
func TestListMembers(t *testing.T) {
	t.Parallel()
	env := mustCatalogEnv(t)
	a, b := env.mustTenant(t), env.mustTenant(t)

	empty := a.get(t, "/api/v1/members")
	wantOnePage(t, empty, nil)

	def := a.mustCampaign(t, map[string]any{"name": "Padrão", "reward_type": "fixed", "reward_value": 1000})
	vip := a.mustCampaign(t, map[string]any{"name": "VIP", "reward_type": "percentage", "reward_value": 10})
	bCamp := b.mustCampaign(t, map[string]any{"name": "Outra", "reward_type": "fixed", "reward_value": 500})

	// Created in this order, so listed in the reverse one.
	ana := a.mustMember(t, "ana@example.com", "Ana Souza")
	bia := a.mustMember(t, "bia@example.com", "Bia Lima")
	carla := a.mustMember(t, "carla@example.com", "Carla 100% Real")
	davi := a.mustMember(t, "davi@example.com", "Davi_Costa")
	eva := a.mustMember(t, "EVA@Example.com", "Eva Anaya")
	bob := b.mustMember(t, "ana@b.example.com", "Ana de B")
	all := []string{eva.prefID, davi.prefID, carla.prefID, bia.prefID, ana.prefID}

	// Ana earns before her status changes: one released, one pending.
	a.mustLedger(t, a.sale(ledger.CmdCreditSale, ana, "o1", 9790), a.sale(ledger.CmdCreditSale, ana, "o2", 5000))
	a.mustLedger(t, a.release(t, ana, "o1"))
	for _, p := range []struct {
		m    member
		body map[string]any
	}{
		{bia, map[string]any{"status": "inactive", "campaign_id": vip}},
		{carla, map[string]any{"status": "blocked"}},
		{davi, map[string]any{"campaign_id": vip}},
	} {
		wantStatus(t, a.do(t, http.MethodPatch, "/api/v1/members/"+p.m.prefID, p.body), http.StatusOK)
	}

	a.wantListCases(t, "/api/v1/members", []listCase{
		{"all, newest first", "", all},
		{"status active", q("status", "active"), []string{eva.prefID, davi.prefID, ana.prefID}},
		{"status inactive", q("status", "inactive"), []string{bia.prefID}},
		{"status blocked", q("status", "blocked"), []string{carla.prefID}},
		{"campaign", q("campaign_id", vip), []string{davi.prefID, bia.prefID}},
		{"campaign as bare uuid", q("campaign_id", bareUUID(t, vip)), []string{davi.prefID, bia.prefID}},
		{"default campaign", q("campaign_id", def), []string{eva.prefID, carla.prefID, ana.prefID}},
		{"unknown campaign", q("campaign_id", "camp_"+hex32()), []string{}},
		{"another merchant's campaign", q("campaign_id", bCamp), []string{}},
		{"search name, any case", q("search", "ANA"), []string{eva.prefID, ana.prefID}},
		{"search email, any case", q("search", "eva@example"), []string{eva.prefID}},
		{"search email domain", q("search", "@example.com"), all},
		{"search trimmed", q("search", "  bia  "), []string{bia.prefID}},
		{"search percent is literal", q("search", "%"), []string{carla.prefID}},
		{"search underscore is literal", q("search", "_"), []string{davi.prefID}},
		{"search underscore in a word", q("search", "a_a"), []string{}},
		{"search backslash is literal", q("search", `\`), []string{}},
		{"search no match", q("search", "zzz"), []string{}},
		{"search blank is no filter", q("search", "   "), all},
		{"status and campaign", q("status", "active", "campaign_id", vip), []string{davi.prefID}},
		{"status and search", q("status", "active", "search", "a"), []string{eva.prefID, davi.prefID, ana.prefID}},
		{"all three", q("status", "blocked", "campaign_id", def, "search", "100%"), []string{carla.prefID}},
		{"unknown parameters ignored", q("sort", "name", "foo", "bar"), all},
	})

	t.Run("items are the admin member with wallet and stats", func(t *testing.T) {
		t.Parallel()
		r := a.get(t, "/api/v1/members")
		for i, id := range listIDs(t, r) {
			one := a.get(t, "/api/v1/members/"+id)
			wantStatus(t, one, http.StatusOK)
			item, _ := at(r.json, "data."+strconv.Itoa(i))
			if !jsonEqual(item, one.json.(map[string]any)["data"]) {
				t.Errorf("list item %d = %v, want GET /members/%s = %s", i, item, id, one.raw)
			}
		}
		wantKeys(t, r, "data.4", memberKeys...)
		wantFields(t, r, map[string]any{
			"data.4.id": ana.prefID, "data.4.email": "ana@example.com", "data.4.campaign_id": def,
			"data.4.wallet.pending": 1000, "data.4.wallet.available": 1000, "data.4.wallet.currency": "BRL",
			"data.4.stats.total_referrals": 2, "data.4.stats.total_earnings": 2000,
			"data.3.wallet.pending": 0, "data.3.stats.total_referrals": 0, "data.3.status": "inactive",
			"data.3.campaign_id": vip, "data.0.email": "EVA@Example.com",
		})
	})

	t.Run("tenant isolation", func(t *testing.T) {
		t.Parallel()
		r := b.get(t, "/api/v1/members")
		wantStatus(t, r, http.StatusOK)
		if got := listIDs(t, r); !slices.Equal(got, []string{bob.prefID}) {
			t.Errorf("merchant B sees %v, want only %s", got, bob.prefID)
		}
		wantPage(t, r, 1, 20, 1, 1)
		for _, query := range []string{q("campaign_id", def), q("search", "ana@example.com"), q("search", "Souza")} {
			r := b.get(t, "/api/v1/members"+query)
			if got := listIDs(t, r); len(got) != 0 {
				t.Errorf("merchant B with %s sees %v, want none", query, got)
			}
		}
	})

	t.Run("bad parameters", func(t *testing.T) {
		t.Parallel()
		for _, tt := range []struct{ query, field string }{
			{q("status", "deleted"), "status"},
			{q("status", "ACTIVE"), "status"},
			{q("campaign_id", "nope"), "campaign_id"},
			{q("campaign_id", "camp_123"), "campaign_id"},
			{q("campaign_id", "mem_"+hex32()), "campaign_id"},
			{q("search", strings.Repeat("x", 256)), "search"},
			{q("page", "0"), "page"},
			{q("page", "-1"), "page"},
			{q("page", "abc"), "page"},
			{q("page", "1.5"), "page"},
			{q("page", "99999999999"), "page"},
			{q("per_page", "0"), "per_page"},
			{q("per_page", "101"), "per_page"},
			{q("per_page", "ten"), "per_page"},
			{"?search=%00", "search"},
			{"?search=%ff", "search"},
		} {
			wantError(t, a.get(t, "/api/v1/members"+tt.query), http.StatusBadRequest, "validation_error", tt.field)
		}
		r := a.get(t, "/api/v1/members"+q("search", strings.Repeat("x", 255)))
		wantStatus(t, r, http.StatusOK)
	})
}

// TestListMembersPagination walks the pages of 5 members by 2.
func TestListMembersPagination(t *testing.T) {
	t.Parallel()
	env := mustCatalogEnv(t)
	tn := env.mustTenant(t)
	tn.mustCampaign(t, map[string]any{"name": "Padrão", "reward_type": "fixed", "reward_value": 1000})
	var created []string
	for _, name := range []string{"Ana", "Bia", "Carla", "Davi", "Eva"} {
		created = append(created, tn.mustMember(t, strings.ToLower(name)+"@example.com", name).prefID)
	}
	newest := reversed(created)
	tests := []struct {
		query                string
		page, perPage, pages int
		want                 []string
	}{
		{"", 1, 20, 1, newest},
		{q("per_page", "2"), 1, 2, 3, newest[0:2]},
		{q("per_page", "2", "page", "2"), 2, 2, 3, newest[2:4]},
		{q("per_page", "2", "page", "3"), 3, 2, 3, newest[4:5]},
		{q("per_page", "2", "page", "4"), 4, 2, 3, []string{}},
		{q("per_page", "2", "page", "2147483647"), 2147483647, 2, 3, []string{}},
		{q("per_page", "1"), 1, 1, 5, newest[0:1]},
		{q("per_page", "5"), 1, 5, 1, newest},
		{q("per_page", "4", "page", "2"), 2, 4, 2, newest[4:5]},
		{q("per_page", "100"), 1, 100, 1, newest},
		{q("page", "1"), 1, 20, 1, newest},
		{q("per_page", "2", "status", "active", "page", "3"), 3, 2, 3, newest[4:5]},
		{q("per_page", "2", "status", "blocked", "page", "2"), 2, 2, 0, []string{}},
	}
	for _, tt := range tests {
		r := tn.get(t, "/api/v1/members"+tt.query)
		wantStatus(t, r, http.StatusOK)
		if got := listIDs(t, r); !slices.Equal(got, tt.want) {
			t.Errorf("%s: ids = %v, want %v", tt.query, got, tt.want)
		}
		total := 5
		if tt.pages == 0 {
			total = 0
		}
		wantPage(t, r, tt.page, tt.perPage, total, tt.pages)
	}
}

// TestPatchMember applies PATCH /members/{id} step by step: each step's
// fields change and everything else stays as it was.
func TestPatchMember(t *testing.T) {
	t.Parallel()
	env := mustCatalogEnv(t)
	a, b := env.mustTenant(t), env.mustTenant(t)
	def := a.mustCampaign(t, map[string]any{"name": "Padrão", "reward_type": "fixed", "reward_value": 1000})
	vip := a.mustCampaign(t, map[string]any{"name": "VIP", "reward_type": "percentage", "reward_value": 10})
	bCamp := b.mustCampaign(t, map[string]any{"name": "Outra", "reward_type": "fixed", "reward_value": 500})
	r := a.do(t, http.MethodPost, "/api/v1/members", map[string]any{"email": "ana@example.com", "name": "Ana Souza",
		"external_id": "cus_1", "metadata": map[string]any{"plan": "pro", "big": 9007199254740993}})
	wantStatus(t, r, http.StatusCreated)
	id := str(t, r, "data.id")
	path := "/api/v1/members/" + id
	coupon, created := str(t, r, "data.coupon_code"), str(t, r, "data.created_at")
	bob := b.mustMember(t, "bob@example.com", "Bob")

	// state is what GET must show after each step.
	state := map[string]any{
		"data.id": id, "data.email": "ana@example.com", "data.name": "Ana Souza", "data.external_id": "cus_1",
		"data.campaign_id": def, "data.status": "active", "data.coupon_code": coupon, "data.created_at": created,
		"data.metadata.plan": "pro", "data.metadata.big": int64(9007199254740993),
	}
	steps := []patchStep{
		{"empty body changes nothing", ``, nil},
		{"empty object changes nothing", `{}`, nil},
		{"nulls change nothing", `{"name": null, "external_id": null, "campaign_id": null, "status": null, "metadata": null}`, nil},
		{"name", `{"name": "Ana Maria"}`, map[string]any{"data.name": "Ana Maria"}},
		{"name trimmed", `{"name": "  Ana Clara  "}`, map[string]any{"data.name": "Ana Clara"}},
		{"external_id", `{"external_id": " cus_2 "}`, map[string]any{"data.external_id": "cus_2"}},
		{"external_id cleared", `{"external_id": ""}`, map[string]any{"data.external_id": ""}},
		{"status inactive", `{"status": "inactive"}`, map[string]any{"data.status": "inactive"}},
		{"status blocked", `{"status": "blocked"}`, map[string]any{"data.status": "blocked"}},
		{"status active", `{"status": "active"}`, map[string]any{"data.status": "active"}},
		{"campaign", `{"campaign_id": "` + vip + `"}`, map[string]any{"data.campaign_id": vip}},
		{"campaign by bare uuid", `{"campaign_id": "` + bareUUID(t, def) + `"}`, map[string]any{"data.campaign_id": def}},
		{"metadata replaced", `{"metadata": {"tier": "gold", "n": 12345678901234567890}}`,
			map[string]any{"data.metadata.tier": "gold", "data.metadata.plan": absent{}, "data.metadata.big": absent{}}},
		{"metadata emptied", `{"metadata": {}}`, map[string]any{"data.metadata.tier": absent{}}},
		{"several at once", `{"name": "Ana", "status": "inactive", "campaign_id": "` + vip + `", "metadata": {"x": [1, "y"]}, "unknown": 1}`,
			map[string]any{"data.name": "Ana", "data.status": "inactive", "data.campaign_id": vip, "data.metadata.x.1": "y"}},
	}
	// metaKeys are the exact metadata keys after a step; absent: unchanged.
	metaKeys := map[string][]string{
		"metadata replaced": {"n", "tier"},
		"metadata emptied":  {},
		"several at once":   {"x"},
	}
	prevUpdated := ts(str(t, r, "data.updated_at"))
	a.applyPatchSteps(t, path, memberKeys, state, prevUpdated, steps, func(st patchStep, r reply) {
		if keys, ok := metaKeys[st.name]; ok {
			wantKeys(t, r, "data.metadata", keys...)
		}
		if st.name == "metadata replaced" {
			if n, _ := at(r.json, "data.metadata.n"); n == nil || n.(interface{ String() string }).String() != "12345678901234567890" {
				t.Errorf("%s: metadata.n = %v, want 12345678901234567890 exactly", st.name, n)
			}
			delete(state, "data.metadata.n")
		}
	})

	before := a.get(t, path)
	t.Run("refused", func(t *testing.T) {
		long := strings.Repeat("x", 256)
		for _, tt := range []struct {
			name, body string
			status     int
			code       string
			field      string
		}{
			{"email", `{"email": "new@example.com"}`, 400, "validation_error", "email"},
			{"same email", `{"email": "ana@example.com"}`, 400, "validation_error", "email"},
			{"email null", `{"email": null, "name": "X"}`, 400, "validation_error", "email"},
			{"name empty", `{"name": ""}`, 400, "validation_error", "name"},
			{"name blank", `{"name": "   "}`, 400, "validation_error", "name"},
			{"name not text", `{"name": 5}`, 400, "validation_error", "name"},
			{"name NUL", `{"name": "a\u0000"}`, 400, "validation_error", "name"},
			{"status unknown", `{"status": "deleted"}`, 400, "validation_error", "status"},
			{"status upper case", `{"status": "ACTIVE"}`, 400, "validation_error", "status"},
			{"status empty", `{"status": ""}`, 400, "validation_error", "status"},
			{"status not text", `{"status": true}`, 400, "validation_error", "status"},
			{"campaign unknown", `{"campaign_id": "camp_` + hex32() + `"}`, 400, "validation_error", "campaign_id"},
			{"campaign malformed", `{"campaign_id": "nope"}`, 400, "validation_error", "campaign_id"},
			{"campaign empty", `{"campaign_id": ""}`, 400, "validation_error", "campaign_id"},
			{"campaign of another merchant", `{"campaign_id": "` + bCamp + `"}`, 400, "validation_error", "campaign_id"},
			{"campaign not text", `{"campaign_id": 1}`, 400, "validation_error", "campaign_id"},
			{"metadata array", `{"metadata": [1]}`, 400, "validation_error", "metadata"},
			{"metadata text", `{"metadata": "x"}`, 400, "validation_error", "metadata"},
			{"metadata number", `{"metadata": 1}`, 400, "validation_error", "metadata"},
			{"metadata NUL", `{"metadata": {"k": "\u0000"}}`, 400, "validation_error", "metadata.k"},
			{"external_id too long", `{"external_id": "` + long + `"}`, 400, "validation_error", "external_id"},
			{"external_id not text", `{"external_id": 7}`, 400, "validation_error", "external_id"},
			{"valid field with a refused one", `{"name": "Zé", "status": "gone"}`, 400, "validation_error", "status"},
			{"malformed JSON", `{"name": `, 400, "validation_error", ""},
			{"array body", `[]`, 400, "validation_error", ""},
			{"two objects", `{} {}`, 400, "validation_error", ""},
		} {
			r := a.do(t, http.MethodPatch, path, tt.body)
			wantError(t, r, tt.status, tt.code, tt.field)
		}
		if after := a.get(t, path); !jsonEqual(after.json, before.json) {
			t.Errorf("refused PATCHes changed the member: %s, was %s", after.raw, before.raw)
		}
	})

	t.Run("not found", func(t *testing.T) {
		for _, p := range []string{
			"mem_" + hex32(), uuid.NewString(), "mem_123", "nope", "camp_" + strings.TrimPrefix(id, "mem_"),
			bob.prefID, bob.id.String(),
		} {
			wantError(t, a.do(t, http.MethodPatch, "/api/v1/members/"+p, `{"name": "X"}`), http.StatusNotFound, "not_found", "")
		}
		// Merchant B's member is untouched.
		wantFields(t, b.get(t, "/api/v1/members/"+bob.prefID), map[string]any{"data.name": "Bob"})
		// B cannot patch A's member either.
		wantError(t, b.do(t, http.MethodPatch, path, `{"name": "X"}`), http.StatusNotFound, "not_found", "")
	})

	t.Run("bare uuid path", func(t *testing.T) {
		r := a.do(t, http.MethodPatch, "/api/v1/members/"+bareUUID(t, id), `{"name": "Ana B"}`)
		wantStatus(t, r, http.StatusOK)
		wantFields(t, r, map[string]any{"data.id": id, "data.name": "Ana B"})
	})
}
