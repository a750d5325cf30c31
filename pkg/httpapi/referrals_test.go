package httpapi_test

import (
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/ids"
	"github.com/convida/convida/pkg/ledger"
)

var referralKeys = []string{"id", "member_id", "member", "referee_email", "referee_name", "referee_external_id",
	"order_id", "order_value", "reward_amount", "status", "rejection_reason", "unrecovered_amount", "review_required", "review_reasons", "coupon_used",
	"notes", "warranty_expires_at", "source", "created_at", "updated_at"}

// TestListReferrals covers GET /referrals and GET /referrals/{id} after
// crediting through the ledger: every filter and bound, order, pagination
// and tenant isolation.
func TestListReferrals(t *testing.T) {
	t.Parallel()
	env := mustCatalogEnv(t)
	a, b := env.mustTenant(t), env.mustTenant(t)

	r := a.get(t, "/api/v1/referrals")
	wantOnePage(t, r, nil)

	a.mustCampaign(t, map[string]any{"name": "Padrão", "reward_type": "fixed", "reward_value": 1000})
	b.mustCampaign(t, map[string]any{"name": "De B", "reward_type": "fixed", "reward_value": 700})
	ana := a.mustMember(t, "ana@example.com", "Ana Souza")
	bia := a.mustMember(t, "bia@example.com", "Bia Lima")
	bob := b.mustMember(t, "bob@example.com", "Bob")

	// Each referral's created_at is the ledger's clock when it is applied.
	credit := func(tn *tenant, m member, order, when string) {
		env.at(ts(when))
		tn.mustLedger(t, tn.sale(ledger.CmdCreditSale, m, order, 10000))
	}
	credit(a, ana, "o1", "2026-11-18T10:00:00Z")
	credit(a, bia, "o2", "2026-11-19T23:59:59.999Z")
	credit(a, ana, "o3", "2026-11-20T00:00:00Z")
	credit(a, ana, "o4", "2026-11-20T12:00:00Z")
	credit(a, bia, "o5", "2026-11-21T00:00:00Z")
	// o6: Ana buys with her own coupon, so it is created rejected.
	env.at(ts("2026-11-21T08:00:00Z"))
	self := a.sale(ledger.CmdCreditSale, ana, "o6", 10000)
	self.Sale.BuyerEmail = ana.email
	a.mustLedger(t, self)
	// o7 and o8 in one batch: the same created_at, ordered by id.
	env.at(ts("2026-11-22T09:00:00Z"))
	a.mustLedger(t, a.sale(ledger.CmdCreditSale, bia, "o7", 10000), a.sale(ledger.CmdCreditSale, ana, "o8", 10000))
	credit(b, bob, "o1", "2026-11-20T12:00:00Z")
	// o1 approved (released), o2 cancelled (refunded).
	a.mustLedger(t, a.release(t, ana, "o1"))
	env.at(ts("2026-11-23T00:00:00Z"))
	a.mustLedger(t, a.sale(ledger.CmdRefund, bia, "o2", 10000))

	ref := map[string]string{}
	for _, o := range []struct {
		m     member
		order string
	}{{ana, "o1"}, {bia, "o2"}, {ana, "o3"}, {ana, "o4"}, {bia, "o5"}, {ana, "o6"}, {bia, "o7"}, {ana, "o8"}} {
		ref[o.order] = ids.Format(ids.Referral, a.referralID(t, o.m, o.order))
	}
	bRef := ids.Format(ids.Referral, b.referralID(t, bob, "o1"))
	tied := []string{ref["o7"], ref["o8"]}
	sort.Sort(sort.Reverse(sort.StringSlice(tied)))
	refs := func(orders ...string) []string {
		out := []string{}
		for _, o := range orders {
			if o == "tied" {
				out = append(out, tied...)
				continue
			}
			out = append(out, ref[o])
		}
		return out
	}
	all := refs("tied", "o6", "o5", "o4", "o3", "o2", "o1")

	a.wantListCases(t, "/api/v1/referrals", []listCase{
		{"all, newest first, ties by id", "", all},
		{"member", q("member_id", ana.prefID), refs("o8", "o6", "o4", "o3", "o1")},
		{"member as bare uuid", q("member_id", ana.id.String()), refs("o8", "o6", "o4", "o3", "o1")},
		{"other member", q("member_id", bia.prefID), refs("o7", "o5", "o2")},
		{"unknown member", q("member_id", "mem_"+hex32()), []string{}},
		{"another merchant's member", q("member_id", bob.prefID), []string{}},
		{"pending", q("status", "pending"), refs("tied", "o5", "o4", "o3")},
		{"approved", q("status", "approved"), refs("o1")},
		{"rejected", q("status", "rejected"), refs("o6")},
		{"cancelled", q("status", "cancelled"), refs("o2")},
		{"after a date: from its first instant", q("created_after", "2026-11-20"), refs("tied", "o6", "o5", "o4", "o3")},
		{"before a date: through its last instant", q("created_before", "2026-11-20"), refs("o4", "o3", "o2", "o1")},
		{"before the previous date", q("created_before", "2026-11-19"), refs("o2", "o1")},
		{"one day", q("created_after", "2026-11-20", "created_before", "2026-11-20"), refs("o4", "o3")},
		{"after a timestamp: inclusive", q("created_after", "2026-11-20T12:00:00Z"), refs("tied", "o6", "o5", "o4")},
		{"after a timestamp with millis", q("created_after", "2026-11-20T12:00:00.001Z"), refs("tied", "o6", "o5")},
		{"before a timestamp: exclusive", q("created_before", "2026-11-20T12:00:00Z"), refs("o3", "o2", "o1")},
		{"after a timestamp with an offset", q("created_after", "2026-11-20T09:00:00-03:00"), refs("tied", "o6", "o5", "o4")},
		{"before a timestamp with a positive offset", q("created_before", "2026-11-20T13:00:00+01:00"), refs("o3", "o2", "o1")},
		{"unencoded + of an offset", "?created_before=2026-11-20T13:00:00+01:00", refs("o3", "o2", "o1")},
		{"timestamp interval", q("created_after", "2026-11-19T23:59:59.999Z", "created_before", "2026-11-20T00:00:00.001Z"), refs("o3", "o2")},
		{"inverted interval matches nothing", q("created_after", "2026-11-21", "created_before", "2026-11-19"), []string{}},
		{"far past and future", q("created_after", "0001-01-01", "created_before", "9999-12-31"), all},
		{"none held for review", q("review_required", "true"), []string{}},
		{"not held for review", q("review_required", "false"), all},
		{"everything at once", q("member_id", ana.prefID, "status", "pending", "created_after", "2026-11-20", "created_before", "2026-11-21"), refs("o4", "o3")},
	})

	t.Run("shape, and each item is GET /referrals/{id}", func(t *testing.T) {
		t.Parallel()
		r := a.get(t, "/api/v1/referrals"+q("member_id", ana.prefID, "status", "approved"))
		wantKeys(t, r, "data.0", referralKeys...)
		wantKeys(t, r, "data.0.member", "id", "name", "email")
		wantFields(t, r, map[string]any{
			"data.0.id": ref["o1"], "data.0.member_id": ana.prefID, "data.0.member.id": ana.prefID,
			"data.0.member.name": "Ana Souza", "data.0.member.email": "ana@example.com",
			"data.0.order_id": "o1", "data.0.order_value": 10000, "data.0.reward_amount": 1000,
			"data.0.status": "approved", "data.0.rejection_reason": nil, "data.0.source": "guru", "data.0.review_required": false,
			"data.0.referee_email": "bruno.o1@example.com", "data.0.coupon_used": ana.coupon,
			"data.0.created_at": "2026-11-18T10:00:00.000Z", "data.0.warranty_expires_at": reTimestamp,
		})
		wantLen(t, r, "data.0.review_reasons", 0)
		rejected := a.get(t, "/api/v1/referrals/"+ref["o6"])
		wantFields(t, rejected, map[string]any{"data.status": "rejected", "data.rejection_reason": "self_referral"})

		all := a.get(t, "/api/v1/referrals")
		for i, id := range listIDs(t, all) {
			for _, p := range []string{id, bareUUID(t, id)} {
				one := a.get(t, "/api/v1/referrals/"+p)
				wantStatus(t, one, http.StatusOK)
				wantKeys(t, one, "", "data")
				item, _ := at(all.json, "data."+strconv.Itoa(i))
				if !jsonEqual(item, one.json.(map[string]any)["data"]) {
					t.Errorf("list item %d = %v, want GET /referrals/%s = %s", i, item, p, one.raw)
				}
			}
		}
	})

	t.Run("pagination", func(t *testing.T) {
		t.Parallel()
		var walked []string
		for p := 1; p <= 3; p++ {
			r := a.get(t, "/api/v1/referrals"+q("per_page", "3", "page", strconv.Itoa(p)))
			wantPage(t, r, p, 3, 8, 3)
			walked = append(walked, listIDs(t, r)...)
		}
		if !slices.Equal(walked, all) {
			t.Errorf("pages of 3 = %v, want %v", walked, all)
		}
		r := a.get(t, "/api/v1/referrals"+q("per_page", "3", "page", "4"))
		wantLen(t, r, "data", 0)
		wantPage(t, r, 4, 3, 8, 3)
		r = a.get(t, "/api/v1/referrals"+q("per_page", "2", "page", "2", "status", "pending"))
		if got := listIDs(t, r); !slices.Equal(got, refs("o5", "o4")) {
			t.Errorf("pending page 2 = %v, want %v", got, refs("o5", "o4"))
		}
		wantPage(t, r, 2, 2, 5, 3)
	})

	t.Run("tenant isolation", func(t *testing.T) {
		t.Parallel()
		r := b.get(t, "/api/v1/referrals")
		if got := listIDs(t, r); !slices.Equal(got, []string{bRef}) {
			t.Errorf("merchant B sees %v, want only %s", got, bRef)
		}
		if got := listIDs(t, b.get(t, "/api/v1/referrals"+q("member_id", ana.prefID))); len(got) != 0 {
			t.Errorf("merchant B filtering by A's member sees %v, want none", got)
		}
		wantError(t, b.get(t, "/api/v1/referrals/"+ref["o1"]), http.StatusNotFound, "not_found", "")
		wantError(t, a.get(t, "/api/v1/referrals/"+bRef), http.StatusNotFound, "not_found", "")
	})

	t.Run("not found", func(t *testing.T) {
		t.Parallel()
		for _, p := range []string{"ref_" + hex32(), uuid.NewString(), "ref_1", "nope", "mem_" + strings.TrimPrefix(ref["o1"], "ref_")} {
			wantError(t, a.get(t, "/api/v1/referrals/"+p), http.StatusNotFound, "not_found", "")
		}
	})

	t.Run("bad parameters", func(t *testing.T) {
		t.Parallel()
		for _, tt := range []struct{ query, field string }{
			{q("status", "paid"), "status"},
			{q("review_required", "yes"), "review_required"},
			{q("review_required", "1"), "review_required"},
			{q("status", "PENDING"), "status"},
			{q("member_id", "nope"), "member_id"},
			{q("member_id", "mem_123"), "member_id"},
			{q("member_id", "camp_"+hex32()), "member_id"},
			{q("created_after", "2026-13-01"), "created_after"},
			{q("created_after", "2026-02-30"), "created_after"},
			{q("created_after", "20-11-2026"), "created_after"},
			{q("created_after", "yesterday"), "created_after"},
			{q("created_after", "2026-11-20T10:00:00"), "created_after"},
			{q("created_after", "2026-11-20 10:00:00Z"), "created_after"},
			{q("created_after", "1732060800"), "created_after"},
			{q("created_before", "2026-11-20T25:00:00Z"), "created_before"},
			{q("created_before", "2026-11"), "created_before"},
			{q("created_before", "2026-11-20T10:00:00+99:00"), "created_before"},
			{q("page", "0"), "page"},
			{q("per_page", "101"), "per_page"},
			{"?created_after=%00", "created_after"},
		} {
			wantError(t, a.get(t, "/api/v1/referrals"+tt.query), http.StatusBadRequest, "validation_error", tt.field)
		}
	})
}
