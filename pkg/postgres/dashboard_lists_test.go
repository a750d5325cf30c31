package postgres_test

import (
	"context"
	"maps"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/convida/convida/pkg/inbound"
	"github.com/convida/convida/pkg/member"
	"github.com/convida/convida/pkg/postgres"
	"github.com/convida/convida/pkg/redemption"
	"github.com/convida/convida/pkg/referral"
	"github.com/convida/convida/pkg/report"
)

// TestDashboardMembersPagePrefixSearchAndTabs: the search box matches a
// prefix of the name, the email or the referral code, whatever the case,
// its wildcards literal; the tabs count every status of the search.
func TestDashboardMembersPagePrefixSearchAndTabs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := mustTenants(t, 4)[0]
	ms := postgres.NewMemberStore(s.pool)
	w := &overviewRows{t: t, pool: s.pool, merchant: s.merchant.ID}
	w.exec(`UPDATE members SET name = 'Marta Lima', email = 'marta@example.com', status = 'blocked' WHERE id = $1`, s.members[0].ID)
	w.exec(`UPDATE members SET name = 'Mário Souza', email = 'mario@example.com' WHERE id = $1`, s.members[1].ID)
	w.exec(`UPDATE members SET name = 'Ana 100%', email = 'ana@mar.example.com', coupon_code = 'LOJ-ANA-MARX' WHERE id = $1`, s.members[2].ID)
	w.exec(`UPDATE members SET name = 'Beto', email = 'beto@example.com' WHERE id = $1`, s.members[3].ID)

	for _, c := range []struct {
		prefix string
		want   []uuid.UUID
		tabs   report.Tabs
	}{
		// Marta by her name, Mário by his email.
		{"mar", []uuid.UUID{s.members[0].ID, s.members[1].ID}, report.Tabs{"active": 1, "inactive": 0, "blocked": 1}},
		{"MÁR", []uuid.UUID{s.members[1].ID}, report.Tabs{"active": 1, "inactive": 0, "blocked": 0}},
		{"loj-ana-mar", []uuid.UUID{s.members[2].ID}, report.Tabs{"active": 1, "inactive": 0, "blocked": 0}},
		{"ana 100%", []uuid.UUID{s.members[2].ID}, report.Tabs{"active": 1, "inactive": 0, "blocked": 0}},
		{"a%", nil, report.Tabs{"active": 0, "inactive": 0, "blocked": 0}},
		{"lima", nil, report.Tabs{"active": 0, "inactive": 0, "blocked": 0}},
	} {
		list, tabs, err := ms.MembersPage(ctx, s.merchant.ID, member.Filter{Prefix: c.prefix, Status: "active", Limit: 20})
		if err != nil {
			t.Fatalf("MembersPage(%q): %v", c.prefix, err)
		}
		if !maps.Equal(tabs, c.tabs) {
			t.Errorf("prefix %q: tabs %v, want %v", c.prefix, tabs, c.tabs)
		}
		var got []uuid.UUID
		for _, l := range list {
			got = append(got, l.ID)
		}
		// The page shows the active tab only.
		var want []uuid.UUID
		for _, id := range c.want {
			if id != s.members[0].ID {
				want = append(want, id)
			}
		}
		if len(got) != len(want) || (len(want) == 1 && got[0] != want[0]) {
			t.Errorf("prefix %q, active tab: %v, want %v", c.prefix, got, want)
		}
	}
}

// TestDashboardReferralsPageAndExport: the tabs count the filter's
// referrals by status while the page shows the chosen tab; the export
// walks every referral of the filter once, newest first, across batches.
func TestDashboardReferralsPageAndExport(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a, b := mustTwoTenants(t, 2, 1)
	w := &overviewRows{t: t, pool: a.pool, merchant: a.merchant.ID}
	base := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	statuses := []string{referral.StatusPending, referral.StatusApproved, referral.StatusApproved, referral.StatusRejected}
	n := postgres.ExportBatch + 7 // more than one batch
	for i := range n {
		w.referral(a.members[i%2].ID, base.Add(time.Duration(i)*time.Minute).Format(time.RFC3339), statuses[i%4], 1000)
	}
	(&overviewRows{t: t, pool: a.pool, merchant: b.merchant.ID}).referral(b.members[0].ID, base.Format(time.RFC3339), "pending", 5)

	reads := postgres.NewReferralReads(a.pool)
	f := referral.Filter{MemberID: a.members[0].ID, Status: referral.StatusApproved, Limit: 10}
	list, tabs, err := reads.ReferralsPage(ctx, a.merchant.ID, f)
	if err != nil {
		t.Fatal(err)
	}
	// Member 0 has the even referrals: pending and approved alternate.
	wantTabs := report.Tabs{"pending": 0, "approved": 0, "rejected": 0, "cancelled": 0}
	for i := 0; i < n; i += 2 {
		wantTabs[statuses[i%4]]++
	}
	if !maps.Equal(tabs, wantTabs) {
		t.Errorf("tabs = %v, want %v", tabs, wantTabs)
	}
	if len(list) != 10 || list[0].Status != referral.StatusApproved || list[0].MemberID != a.members[0].ID || !list[0].CreatedAt.After(list[9].CreatedAt) {
		t.Errorf("page = %d referrals, first %+v; want 10 approved of member 0, newest first", len(list), list[0].Referral)
	}
	_, total, err := reads.ListReferrals(ctx, a.merchant.ID, f)
	if err != nil || total != wantTabs["approved"] {
		t.Errorf("ListReferrals total = %d, %v; want %d", total, err, wantTabs["approved"])
	}

	seen := map[uuid.UUID]bool{}
	var last time.Time
	for l, err := range reads.ReferralRows(ctx, a.merchant.ID, referral.Filter{}) {
		if err != nil {
			t.Fatal(err)
		}
		if seen[l.ID] || (!last.IsZero() && l.CreatedAt.After(last)) || l.MerchantID != a.merchant.ID {
			t.Fatalf("export: %v repeated, out of order or another merchant's", l.ID)
		}
		seen[l.ID], last = true, l.CreatedAt
	}
	if len(seen) != n {
		t.Errorf("export = %d referrals, want %d", len(seen), n)
	}
	// A consumer that stops early stops the reads.
	count := 0
	for range reads.ReferralRows(ctx, a.merchant.ID, referral.Filter{}) {
		count++
		if count == 3 {
			break
		}
	}
	if count != 3 {
		t.Errorf("stopped export yielded %d", count)
	}
}

// TestDashboardRedemptionsPage: the redemptions of a tab, with their
// member, newest first, and every status counted; another merchant's
// redemptions count nowhere.
func TestDashboardRedemptionsPage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a, b := mustTwoTenants(t, 1, 1)
	w := &overviewRows{t: t, pool: a.pool, merchant: a.merchant.ID}
	w.redemption(a.members[0].ID, "2026-11-02T10:00:00Z", "completed", 300)
	w.redemption(a.members[0].ID, "2026-11-02T11:00:00Z", "failed", 400)
	w.redemption(a.members[0].ID, "2026-11-03T11:00:00Z", "failed", 500)
	(&overviewRows{t: t, pool: a.pool, merchant: b.merchant.ID}).redemption(b.members[0].ID, "2026-11-02T10:00:00Z", "pending", 1)

	list, tabs, err := postgres.NewRedemptionReads(a.pool).RedemptionsPage(ctx, a.merchant.ID, redemption.Filter{Status: "failed", Limit: 20})
	if err != nil {
		t.Fatal(err)
	}
	if want := (report.Tabs{"pending": 0, "completed": 1, "failed": 2}); !maps.Equal(tabs, want) {
		t.Errorf("tabs = %v, want %v", tabs, want)
	}
	if len(list) != 2 || list[0].Amount != 500 || list[1].Amount != 400 || list[0].MemberEmail != a.members[0].Email {
		t.Errorf("failed tab = %+v, want 500 then 400 of %s", list, a.members[0].Email)
	}
}

// TestDashboardListDeliveries: the last n deliveries of one provider,
// newest first, without bodies; FindDelivery gives one with its body.
func TestDashboardListDeliveries(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := mustTenants(t, 0)[0]
	store := postgres.NewDeliveryStore(s.pool)
	at := time.Date(2026, 11, 2, 12, 0, 0, 0, time.UTC)
	var ds []inbound.Delivery
	for i, p := range []string{"guru", "yampi", "guru", "guru"} {
		ds = append(ds, inbound.Delivery{ID: uuid.New(), MerchantID: s.merchant.ID, Provider: p, Outcome: inbound.DeliveryAccepted,
			HTTPStatus: 200, Headers: map[string]string{"X-N": string(rune('0' + i))}, Body: []byte(`{"n":` + string(rune('0'+i)) + `}`),
			ReceivedAt: at.Add(time.Duration(i) * time.Minute)})
	}
	if err := store.RecordDeliveries(ctx, ds); err != nil {
		t.Fatal(err)
	}
	got, err := store.ListDeliveries(ctx, s.merchant.ID, "guru", 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].ID != ds[3].ID || got[1].ID != ds[2].ID || got[0].HTTPStatus != 200 {
		t.Errorf("last guru deliveries = %+v, want deliveries 3 and 2", got)
	}
	one, err := store.FindDelivery(ctx, s.merchant.ID, ds[3].ID)
	if err != nil || string(one.Body) != `{"n":3}` || one.Provider != "guru" {
		t.Errorf("FindDelivery = %+v, %v; want delivery 3 with its body", one, err)
	}
}
