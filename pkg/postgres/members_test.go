package postgres_test

import (
	"bytes"
	"context"
	"slices"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/member"
	"github.com/convida/convida/pkg/postgres"
)

// wantIDsDesc checks that listed holds the created ids in the order
// PostgreSQL gives uuid DESC: the tie-break of every list.
func wantIDsDesc(t *testing.T, what string, listed, created []uuid.UUID) {
	t.Helper()
	want := append([]uuid.UUID(nil), created...)
	sort.Slice(want, func(i, j int) bool { return bytes.Compare(want[i][:], want[j][:]) > 0 })
	if !slices.Equal(listed, want) {
		t.Errorf("%s = %v, want by id descending %v", what, listed, want)
	}
}

// TestMemberListTieBreak: members created at the same instant are listed
// by id, descending, so pages never overlap or skip.
func TestMemberListTieBreak(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := mustTenants(t, 7)[0]
	same := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	if _, err := s.pool.Exec(ctx, `UPDATE members SET created_at = $2 WHERE merchant_id = $1`, s.merchant.ID, same); err != nil {
		t.Fatal(err)
	}

	ms := postgres.NewMemberStore(s.pool)
	var memberIDs []uuid.UUID
	for _, m := range s.members {
		memberIDs = append(memberIDs, m.ID)
	}
	var walked []uuid.UUID
	for off := 0; off < 7; off += 3 {
		page, total, err := ms.ListMembers(ctx, s.merchant.ID, member.Filter{Offset: off, Limit: 3})
		if err != nil || total != 7 {
			t.Fatalf("ListMembers(offset %d) = %d, %v; want total 7", off, total, err)
		}
		for _, l := range page {
			walked = append(walked, l.ID)
		}
	}
	wantIDsDesc(t, "members", walked, memberIDs)
}

// TestMemberTenantScope: the member methods of one merchant miss the rows
// of another.
func TestMemberTenantScope(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a, b := mustTwoTenants(t, 2, 1)
	ms := postgres.NewMemberStore(a.pool)

	name := "Mallory"
	if _, err := ms.UpdateMember(ctx, b.merchant.ID, a.members[0].ID, member.Update{Name: &name}); !apperr.Is(err, apperr.NotFound) {
		t.Errorf("UpdateMember of another merchant's member = %v, want not_found", err)
	}
	// A campaign of another merchant cannot be assigned (the foreign key
	// includes merchant_id).
	if _, err := ms.UpdateMember(ctx, a.merchant.ID, a.members[0].ID, member.Update{CampaignID: &b.campaign.ID}); !apperr.Is(err, apperr.Invalid) {
		t.Errorf("UpdateMember to another merchant's campaign = %v, want validation_error", err)
	}
	list, total, err := ms.ListMembers(ctx, b.merchant.ID, member.Filter{CampaignID: a.campaign.ID, Limit: 20})
	if err != nil || total != 0 || len(list) != 0 {
		t.Errorf("ListMembers of B by A's campaign = %d, %d, %v; want none", len(list), total, err)
	}
	got, err := ms.FindMemberByID(ctx, a.merchant.ID, a.members[0].ID)
	if err != nil || got.Name != a.members[0].Name || got.CampaignID != a.campaign.ID {
		t.Errorf("A's member after B's attempts = %+v, %v; want unchanged", got, err)
	}
}

// TestListMembersSearch: the search is a case-insensitive substring whose
// LIKE wildcards and escape character are literal.
func TestListMembersSearch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := mustTenants(t, 0)[0]
	ms := postgres.NewMemberStore(s.pool)
	names := []string{`Ana Souza`, `100% Real`, `snake_case`, `back\slash`}
	byName := map[string]uuid.UUID{}
	for i, n := range names {
		m := &member.Member{MerchantID: s.merchant.ID, Email: "m" + strconv.Itoa(i) + "@example.com", Name: n, CampaignID: s.campaign.ID}
		if err := ms.CreateMember(ctx, m, s.merchant.CodePrefix); err != nil {
			t.Fatal(err)
		}
		byName[n] = m.ID
	}
	tests := []struct {
		search string
		want   []string
	}{
		{"%", []string{`100% Real`}},
		{"_", []string{`snake_case`}},
		{`\`, []string{`back\slash`}},
		{`\s`, []string{`back\slash`}},
		{"e_c", []string{`snake_case`}},
		{"a_a", nil},
		{"SOUZA", []string{`Ana Souza`}},
		{"M3@EXAMPLE", []string{`back\slash`}},
		{"%%", nil},
	}
	for _, tt := range tests {
		list, total, err := ms.ListMembers(ctx, s.merchant.ID, member.Filter{Search: tt.search, Limit: 20})
		if err != nil {
			t.Fatalf("search %q: %v", tt.search, err)
		}
		var got []string
		for _, l := range list {
			got = append(got, l.Name)
		}
		if total != len(tt.want) || len(got) != len(tt.want) {
			t.Errorf("search %q = %q (total %d), want %q", tt.search, got, total, tt.want)
			continue
		}
		for i := range got {
			if got[i] != tt.want[i] {
				t.Errorf("search %q = %q, want %q", tt.search, got, tt.want)
			}
		}
	}
}
