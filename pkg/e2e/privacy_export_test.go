package e2e

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/ids"
	"github.com/convida/convida/pkg/member"
)

// TestMemberExport: the export holds every record of the member, as many
// as the database has of each kind, her data and nobody else's
// (wantHerDataOnly), and after an erasure what is left.
func TestMemberExport(t *testing.T) {
	t.Parallel()
	run := startPrivacyRun(t)
	s, m := run.s, run.tn.merchant.ID
	path := "/api/v1/members/" + run.memberID + "/export"
	r := run.api(t, "GET", path, nil, 200, "")
	if r.header.Get("Cache-Control") != "no-store" || !strings.HasPrefix(r.header.Get("Content-Disposition"), "attachment") {
		t.Errorf("export headers: Cache-Control %q, Content-Disposition %q", r.header.Get("Cache-Control"), r.header.Get("Content-Disposition"))
	}
	doc := r.data()
	count := func(table, where string) int {
		return s.count(`SELECT count(*) FROM `+table+` WHERE merchant_id = $1 AND `+where, m, run.helena.ID)
	}
	idsOf := func(key string) []string {
		var out []string
		list, _ := doc[key].([]any)
		for _, x := range list {
			out = append(out, fmt.Sprint(x.(map[string]any)["id"]))
		}
		return out
	}
	for key, want := range map[string]int{
		"transactions":        count("ledger_entries", "member_id = $2"),
		"wallet_transactions": count("wallet_transactions", "member_id = $2"),
		"referrals":           count("referrals", "member_id = $2"),
		"purchases":           count("referrals", "member_id <> $2 AND lower(referee_email) = 'helena.prado@example.com'"),
		"redemptions":         count("redemptions", "member_id = $2"),
	} {
		if got := len(idsOf(key)); got != want || want == 0 {
			t.Errorf("export %s: %d records, the database has %d (want some)", key, got, want)
		}
	}
	var entryIDs []string
	rows, _ := s.deps.Pool.Query(context.Background(), `SELECT id FROM ledger_entries WHERE merchant_id = $1 AND member_id = $2
ORDER BY created_at DESC, id DESC`, m, run.helena.ID)
	for rows.Next() {
		var id uuid.UUID
		_ = rows.Scan(&id)
		entryIDs = append(entryIDs, ids.Format(ids.Transaction, id))
	}
	rows.Close()
	if got := idsOf("transactions"); !slices.Equal(got, entryIDs) {
		t.Errorf("export transactions %v, want the ledger's %v newest first", got, entryIDs)
	}
	if got := idsOf("referrals"); !slices.Contains(got, run.refs["pv-1"]) || !slices.Contains(got, run.refs["880001"]) {
		t.Errorf("export referrals %v, want pv-1 and 880001", got)
	}
	if got := idsOf("purchases"); !slices.Equal(got, []string{run.refs["pv-3"]}) {
		t.Errorf("export purchases %v, want the referral of pv-3 she bought", got)
	}
	run.wantHerDataOnly(t, doc)
	her, _ := doc["member"].(map[string]any)
	creator, _ := doc["creator_profile"].(map[string]any)
	money, _ := doc["wallet"].(map[string]any)
	if her["email"] != run.helena.Email || her["external_id"] != "crm-helena-77" || her["erased_at"] != nil ||
		creator["display_name"] != "Helena Fit" || creator["token"] != nil ||
		money["available"] != 500.0 || money["total_redeemed"] != 500.0 || money["cancelled"] != 1000.0 {
		t.Errorf("export member %v, creator %v, wallet %v", her, creator, money)
	}

	// Unknown and malformed: the documented errors.
	run.api(t, "GET", "/api/v1/members/mem_"+strings.Repeat("0", 32)+"/export", nil, 404, "not_found")
	run.api(t, "GET", path+"?x=%FF", nil, 400, "validation_error")
	run.api(t, "POST", "/api/v1/members/mem_"+strings.Repeat("0", 32)+"/erase", nil, 404, "not_found")
	run.api(t, "POST", "/api/v1/members/"+ids.Format(ids.Member, run.bruno.ID)+"/erase?x=%FF", nil, 400, "validation_error")

	// Erased: the member as erased, her records kept, her purchases and
	// creator profile gone.
	run.api(t, "POST", "/api/v1/members/"+run.memberID+"/erase", nil, 200, "")
	doc = run.api(t, "GET", path, nil, 200, "").data()
	her, _ = doc["member"].(map[string]any)
	if her["email"] != member.ErasedEmail(run.helena.ID) || her["erased_at"] == nil || doc["creator_profile"] != nil ||
		len(idsOf("purchases")) != 0 || len(idsOf("referrals")) != 2 || len(idsOf("transactions")) != len(entryIDs) {
		t.Errorf("export after the erasure: %v", doc)
	}
	run.c.v.WantExercised(t, ex("exportMember", 200), ex("exportMember", 400), ex("exportMember", 404),
		ex("eraseMember", 200), ex("eraseMember", 400), ex("eraseMember", 404))
}

// wantHerDataOnly checks Helena's export (doc) against the privacy run:
// the buyers of the sales she referred appear masked, with no document;
// her purchase shows her order and her own buyer fields and names nobody
// else — not Bruno, whose code she bought with, nor his reward; and no
// other person's e-mail, name or document is anywhere in it. Bruno's
// export shows her, his buyer, masked.
func (run *privacyRun) wantHerDataOnly(t *testing.T, doc map[string]any) {
	t.Helper()
	byID := func(doc map[string]any, key string) map[string]map[string]any {
		out := map[string]map[string]any{}
		list, _ := doc[key].([]any)
		for _, x := range list {
			r := x.(map[string]any)
			out[fmt.Sprint(r["id"])] = r
		}
		return out
	}
	made := byID(doc, "referrals")
	for order, want := range map[string][2]string{"pv-1": {"i***@example.com", "Igor N."}, "880001": {"j***@example.com", "Julia R."}} {
		r := made[run.refs[order]]
		if r["referee_email"] != want[0] || r["referee_name"] != want[1] || r["referee_external_id"] != "" {
			t.Errorf("her referral of %s shows its buyer as %v %v %v, want %s, %s and no document",
				order, r["referee_email"], r["referee_name"], r["referee_external_id"], want[0], want[1])
		}
	}
	bought := byID(doc, "purchases")[run.refs["pv-3"]]
	if keys := slices.Sorted(maps.Keys(bought)); !slices.Equal(keys, []string{"created_at", "id", "order_id", "order_value",
		"referee_email", "referee_external_id", "referee_name", "source"}) {
		t.Errorf("her purchase has the fields %v: it must name no referrer, reward, status or notes", keys)
	}
	if bought["referee_email"] != "Helena.Prado@Example.com" || bought["referee_external_id"] != "39053344705" ||
		bought["order_id"] != "pv-3" || bought["order_value"] != 10000.0 {
		t.Errorf("her purchase: %v", bought)
	}
	others := slices.Concat(herBuyersData, []string{"bruno", strings.ToLower(run.bruno.CouponCode), ids.Format(ids.Member, run.bruno.ID)})
	if found := holding(jsonText(doc), others); len(found) > 0 {
		t.Errorf("her export holds other people's data %q: %s", found, jsonText(doc))
	}

	brunos := run.api(t, "GET", "/api/v1/members/"+ids.Format(ids.Member, run.bruno.ID)+"/export", nil, 200, "").data()
	sold := byID(brunos, "referrals")[run.refs["pv-3"]]
	if sold["referee_email"] != "H***@Example.com" || sold["referee_name"] != "Helena P." || sold["referee_external_id"] != "" {
		t.Errorf("Bruno's referral shows its buyer as %v %v %v, want H***@Example.com, Helena P. and no document",
			sold["referee_email"], sold["referee_name"], sold["referee_external_id"])
	}
	if found := holding(jsonText(brunos), slices.Concat(herData, []string{"helena prado", run.memberID})); len(found) > 0 {
		t.Errorf("Bruno's export holds Helena's data %q", found)
	}
}
