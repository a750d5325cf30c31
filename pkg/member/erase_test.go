package member_test

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/member"
)

func TestErase(t *testing.T) {
	id := uuid.MustParse("0b5c3e9e-2f4a-4c1e-9d1a-7e2f0c9a1b2c")
	at := time.Date(2027, 3, 2, 10, 0, 0, 0, time.UTC)
	m := &member.Member{ID: id, Email: "Ana@Example.com", Name: "Ana Souza", ExternalID: "cus_1", CouponCode: "LOJ-ANA-7KQ2",
		Status: member.StatusBlocked, Metadata: map[string]any{"phone": "+55 11 99999-0000"}, Document: "529.982.247-25",
		Phone: "+55 11 99999-0000"}
	got := member.Erase(m, at)
	want := *m
	want.Email, want.Name, want.ExternalID, want.Document, want.Phone = "erased-mem_0b5c3e9e2f4a4c1e9d1a7e2f0c9a1b2c@erased.invalid", "", "", "", ""
	want.Metadata, want.ErasedAt = map[string]any{}, at
	if !reflect.DeepEqual(*got, want) {
		t.Errorf("Erase = %+v, want %+v", *got, want)
	}
	if m.Name != "Ana Souza" || m.IsErased() {
		t.Errorf("Erase changed its argument: %+v", m)
	}
	if !got.IsErased() || !member.ValidEmail(got.Email) {
		t.Errorf("erased member: IsErased %v, e-mail %q valid %v", got.IsErased(), got.Email, member.ValidEmail(got.Email))
	}
	// Again: nothing changes, the first erasure's time stays.
	if again := member.Erase(got, at.Add(time.Hour)); !reflect.DeepEqual(*again, *got) {
		t.Errorf("erasing again = %+v, want %+v", *again, *got)
	}
	view := got.AdminView(1, 2, 3, 4)
	if view.ErasedAt == nil || *view.ErasedAt != "2027-03-02T10:00:00.000Z" || view.Name != "" || len(view.Metadata) != 0 {
		t.Errorf("admin view of an erased member: %+v", view)
	}
	if v := m.AdminView(0, 0, 0, 0); v.ErasedAt != nil {
		t.Errorf("erased_at of a member never erased = %q, want null", *v.ErasedAt)
	}
}

func TestCheckUpdate(t *testing.T) {
	erased := member.Erase(&member.Member{ID: uuid.New(), Email: "a@b.co", Name: "A"}, time.Now())
	name, status := "Ana", member.StatusBlocked
	for _, tt := range []struct {
		m    *member.Member
		upd  member.Update
		want apperr.Code
	}{
		{erased, member.Update{Name: &name}, apperr.InvalidState},
		{erased, member.Update{ExternalID: &name}, apperr.InvalidState},
		{erased, member.Update{Metadata: map[string]any{}}, apperr.InvalidState},
		{erased, member.Update{Status: &status}, ""},
		{&member.Member{Name: "A"}, member.Update{Name: &name}, ""},
	} {
		err := member.CheckUpdate(tt.m, tt.upd)
		if apperr.CodeOf(err) != tt.want {
			t.Errorf("CheckUpdate(erased %v, %+v) = %v, want code %q", tt.m.IsErased(), tt.upd, err, tt.want)
		}
		if err != nil && !strings.Contains(apperr.MessageOf(err), "erased") {
			t.Errorf("message %q does not say why", apperr.MessageOf(err))
		}
	}
}
