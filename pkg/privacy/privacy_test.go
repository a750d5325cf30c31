package privacy

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/event"
	"github.com/convida/convida/pkg/ids"
	"github.com/convida/convida/pkg/member"
	"github.com/convida/convida/pkg/outbox"
	"github.com/convida/convida/pkg/referral"
)

var at = time.Date(2027, 3, 2, 10, 0, 0, 0, time.UTC)

func ana() *member.Member {
	return &member.Member{ID: uuid.New(), MerchantID: uuid.New(), Email: "Ana@Example.com", Name: "Ana Souza",
		ExternalID: "cus_ana_1", Document: "529.982.247-25", Phone: "+55 11 98888-7777", CouponCode: "LOJ-ANA-7KQ2",
		Status: member.StatusActive, Metadata: map[string]any{"instagram": "@ana", "n": json.Number("12345678901234567890")},
		CreatedAt: at, UpdatedAt: at}
}

// TestEnvelope redacts the events that hold her: her member events, the
// referrals she made (her name and e-mail as the referrer, their buyers)
// and a referral she bought with (its buyer fields); the envelope's other
// fields and every amount stay exact.
func TestEnvelope(t *testing.T) {
	m := ana()
	s := NewSubject(m)
	made := referral.Referral{ID: uuid.New(), MemberID: m.ID, Source: "guru", OrderID: "o-1", RefereeEmail: "bruno@example.com",
		RefereeName: "Bruno Lima", RefereeExternalID: "111.444.777-35", CouponUsed: m.CouponCode, OrderValue: 9790,
		RewardAmount: 979, Status: referral.StatusPending, Notes: "checked with ana@example.com by phone",
		CreatedAt: at, UpdatedAt: at, WarrantyExpiresAt: at}
	bought := referral.Referral{ID: uuid.New(), MemberID: uuid.New(), Source: "yampi", OrderID: "o-2", RefereeEmail: "ANA@example.com",
		RefereeName: "Ana Souza", RefereeExternalID: "52998224725", OrderValue: 100, Status: referral.StatusApproved,
		CreatedAt: at, UpdatedAt: at, WarrantyExpiresAt: at}
	other := referral.Referral{ID: uuid.New(), MemberID: uuid.New(), RefereeEmail: "carla@example.com", RefereeName: "Carla",
		CreatedAt: at, UpdatedAt: at, WarrantyExpiresAt: at}
	s.Referrals[made.ID], s.Referrals[bought.ID] = true, true

	memberEvent, _ := member.Updated(m, member.Figures{Pending: 979})
	madeEvent, _ := outbox.NewRecord(m.MerchantID, m.ID, event.ReferralCreated, made.AdminView(m.Name, m.Email), at)
	boughtEvent, _ := outbox.NewRecord(m.MerchantID, bought.MemberID, event.ReferralApproved, bought.AdminView("Davi", "davi@example.com"), at)
	otherEvent, _ := outbox.NewRecord(m.MerchantID, other.MemberID, event.ReferralCreated, other.AdminView("Davi", "davi@example.com"), at)
	personal := []string{"ana@example.com", "Ana Souza", "cus_ana_1", "529.982.247-25", "52998224725", "98888-7777", "@ana",
		"bruno@example.com", "Bruno Lima", "111.444.777-35"}
	for _, rec := range []outbox.Record{memberEvent, madeEvent, boughtEvent} {
		out, changed, err := s.Envelope(rec.Payload)
		if err != nil || !changed {
			t.Fatalf("%s: changed %v, err %v", rec.Type, changed, err)
		}
		for _, v := range personal {
			if strings.Contains(strings.ToLower(string(out)), strings.ToLower(v)) {
				t.Errorf("%s still holds %q: %s", rec.Type, v, out)
			}
		}
		var before, after outbox.Envelope
		_ = json.Unmarshal(rec.Payload, &before)
		_ = json.Unmarshal(out, &after)
		if after.ID != before.ID || after.Type != before.Type || after.CreatedAt != before.CreatedAt || after.MerchantID != before.MerchantID {
			t.Errorf("%s: envelope %+v, want %+v's id, type, time and merchant", rec.Type, after, before)
		}
	}
	out, _, _ := s.Envelope(memberEvent.Payload)
	var env struct{ Data member.AdminView }
	_ = json.Unmarshal(out, &env)
	if env.Data.Email != member.ErasedEmail(m.ID) || env.Data.Wallet.Pending != 979 || env.Data.CouponCode != m.CouponCode || len(env.Data.Metadata) != 0 {
		t.Errorf("her member event after redaction: %+v", env.Data)
	}
	out, _, _ = s.Envelope(madeEvent.Payload)
	var ref struct{ Data referral.View }
	_ = json.Unmarshal(out, &ref)
	if ref.Data.OrderValue != 9790 || ref.Data.RewardAmount != 979 || ref.Data.OrderID != "o-1" || ref.Data.Member.ID != ids.Format(ids.Member, m.ID) ||
		ref.Data.Notes != "checked with "+member.ErasedEmail(m.ID)+" by phone" {
		t.Errorf("her referral after redaction: %+v", ref.Data)
	}
	if out, changed, err := s.Envelope(otherEvent.Payload); err != nil || changed || string(out) != string(otherEvent.Payload) {
		t.Errorf("an event about others: changed %v, err %v, %s", changed, err, out)
	}
	if _, _, err := s.Envelope([]byte(`{"id":`)); err == nil {
		t.Error("a broken envelope: no error")
	}
}

func TestText(t *testing.T) {
	m := ana()
	s := NewSubject(m)
	got, changed := s.Text("ANA SOUZA (ana@example.COM, doc 529.982.247-25, cus_ana_1) called; Anastasia did not")
	want := Erased + " (" + member.ErasedEmail(m.ID) + ", doc " + Erased + ", " + Erased + ") called; Anastasia did not"
	if got != want || !changed {
		t.Errorf("Text = %q (changed %v), want %q", got, changed, want)
	}
	if got, changed := s.Text("nothing of hers"); got != "nothing of hers" || changed {
		t.Errorf("Text of unrelated notes = %q, %v", got, changed)
	}
	short := NewSubject(&member.Member{ID: m.ID, Name: "Al"})
	if got, _ := short.Text("Alberto"); got != "Alberto" {
		t.Errorf("a 2-letter name replaced inside a word: %q", got)
	}
}

func TestNeedlesAndDocument(t *testing.T) {
	s := NewSubject(ana())
	got := s.Needles()
	if strings.Join(got, "|") != "ana@example.com|529.982.247-25|52998224725" || s.DocumentDigits() != "52998224725" {
		t.Errorf("needles %q, digits %q", got, s.DocumentDigits())
	}
	short := NewSubject(&member.Member{Email: "a@b.co", Document: "123-4"})
	if len(short.Needles()) != 1 || short.DocumentDigits() != "" {
		t.Errorf("a document of 4 digits is looked for: %q %q", short.Needles(), short.DocumentDigits())
	}
	if keys := DeliveryKeys("guru", "o-1"); strings.Join(keys, " ") != "guru:o-1:sale guru:o-1:refund" {
		t.Errorf("DeliveryKeys = %q", keys)
	}
}
