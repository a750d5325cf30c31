package member

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/event"
	"github.com/convida/convida/pkg/outbox"
)

func TestMemberEvents(t *testing.T) {
	t.Parallel()
	m := &Member{ID: uuid.New(), MerchantID: uuid.New(), Email: "ana@example.com", Name: "Ana",
		CouponCode: "LOJ-ANA-K7PX", CampaignID: uuid.New(), Status: StatusActive,
		CreatedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), UpdatedAt: time.Date(2026, 1, 3, 3, 4, 5, 0, time.UTC)}
	figures := Figures{Pending: 1500, Available: 979, TotalEarned: 2479, TotalReferrals: 3}
	tests := []struct {
		name       string
		emit       func() (outbox.Record, error)
		wantType   string
		wantFigure Figures
	}{
		{"a new member has neither wallet nor referrals", func() (outbox.Record, error) { return Created(m) },
			event.MemberCreated, Figures{}},
		{"an update reports the figures of its transaction", func() (outbox.Record, error) { return Updated(m, figures) },
			event.MemberUpdated, figures},
		{"an erasure reports the member as erased, with its figures", func() (outbox.Record, error) {
			return Erased(Erase(m, m.UpdatedAt), figures)
		}, event.MemberErased, figures},
	}
	for _, tt := range tests {
		rec, err := tt.emit()
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if rec.Type != tt.wantType || rec.MerchantID != m.MerchantID || rec.MemberID != m.ID || !rec.CreatedAt.Equal(m.UpdatedAt) {
			t.Errorf("%s: record %s for %s/%s at %s, want %s for %s/%s at %s", tt.name, rec.Type, rec.MerchantID, rec.MemberID,
				rec.CreatedAt, tt.wantType, m.MerchantID, m.ID, m.UpdatedAt)
		}
		var env struct {
			Type string    `json:"type"`
			Data AdminView `json:"data"`
		}
		if err := json.Unmarshal(rec.Payload, &env); err != nil {
			t.Fatalf("%s: payload: %v", tt.name, err)
		}
		f := tt.wantFigure
		want := m.AdminView(f.Pending, f.Available, f.TotalEarned, f.TotalReferrals)
		got := env.Data
		if env.Type != tt.wantType || got.ID != want.ID || got.Wallet != want.Wallet || got.Stats != want.Stats ||
			got.UpdatedAt != want.UpdatedAt || got.CouponCode != want.CouponCode || got.Metadata == nil {
			t.Errorf("%s: data = %+v, want %+v", tt.name, got, want)
		}
		if erased := tt.wantType == event.MemberErased; erased != (got.ErasedAt != nil) || erased && (got.Email != ErasedEmail(m.ID) || got.Name != "") {
			t.Errorf("%s: email %q, name %q, erased_at %v", tt.name, got.Email, got.Name, got.ErasedAt)
		}
	}
}
