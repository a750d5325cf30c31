package privacy

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/ids"
	"github.com/convida/convida/pkg/referral"
)

func TestMaskName(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, want string }{
		{"Bruno Lima", "Bruno L."},
		{"  Maria   da Silva ", "Maria S."},
		{"joão évora", "joão É."},
		{"Igor", "Igor"},
		{"", ""},
		{"   ", ""},
	} {
		if got := MaskName(c.in); got != c.want {
			t.Errorf("MaskName(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestMadeView: a referral she made shows its buyer masked, in its fields
// and in the merchant's notes; the rest of the administrative shape, her
// own name and e-mail as the referrer included, stays.
func TestMadeView(t *testing.T) {
	t.Parallel()
	r := referral.Referral{ID: uuid.New(), MemberID: uuid.New(), Source: "guru", OrderID: "o-1", RefereeEmail: "Bruno.Lima@Example.com",
		RefereeName: "Bruno Lima", RefereeExternalID: "111.444.777-35", CouponUsed: "LOJ-ANA-7KQ2", OrderValue: 9790,
		RewardAmount: 979, Status: referral.StatusRejected, RejectionReason: "other",
		Notes:     "BRUNO LIMA (bruno.lima@example.com, CPF 11144477735 / 111.444.777-35) asked to cancel; Ana agreed",
		CreatedAt: at, UpdatedAt: at, WarrantyExpiresAt: at}
	v := MadeView(referral.Listed{Referral: r, MemberName: "Ana Souza", MemberEmail: "ana@example.com"})
	if v.RefereeEmail != "B***@Example.com" || v.RefereeName != "Bruno L." || v.RefereeExternalID != "" {
		t.Errorf("buyer fields %q, %q, %q; want masked, no document", v.RefereeEmail, v.RefereeName, v.RefereeExternalID)
	}
	if want := "Bruno L. (B***@Example.com, CPF " + Withheld + " / " + Withheld + ") asked to cancel; Ana agreed"; v.Notes != want {
		t.Errorf("notes %q, want %q", v.Notes, want)
	}
	if v.Member.Name != "Ana Souza" || v.Member.Email != "ana@example.com" || v.OrderValue != 9790 || v.RewardAmount != 979 ||
		v.CouponUsed != r.CouponUsed || v.ID != ids.Format(ids.Referral, r.ID) {
		t.Errorf("the rest of the referral changed: %+v", v)
	}
	raw, _ := json.Marshal(v)
	for _, other := range []string{"bruno.lima", "lima", "11144477735", "111.444.777-35"} {
		if strings.Contains(strings.ToLower(string(raw)), other) {
			t.Errorf("the view still holds %q: %s", other, raw)
		}
	}
}

// TestPurchaseOf: a referral she bought with shows her order and her
// buyer fields, and nothing of its referrer: no member, code, reward,
// status or notes.
func TestPurchaseOf(t *testing.T) {
	t.Parallel()
	r := referral.Referral{ID: uuid.New(), MemberID: uuid.New(), Source: "yampi", OrderID: "880001", RefereeEmail: "ana@example.com",
		RefereeName: "Ana Souza", RefereeExternalID: "52998224725", CouponUsed: "LOJ-DAVI-7KQ2", OrderValue: 100, RewardAmount: 10,
		Status: referral.StatusApproved, Notes: "Davi called about it", CreatedAt: at, UpdatedAt: at, WarrantyExpiresAt: at}
	raw, _ := json.Marshal(PurchaseOf(r))
	want := `{"id":"` + ids.Format(ids.Referral, r.ID) + `","source":"yampi","order_id":"880001","order_value":100,` +
		`"referee_email":"ana@example.com","referee_name":"Ana Souza","referee_external_id":"52998224725","created_at":"2027-03-02T10:00:00.000Z"}`
	if string(raw) != want {
		t.Errorf("PurchaseOf = %s\nwant        %s", raw, want)
	}
}
