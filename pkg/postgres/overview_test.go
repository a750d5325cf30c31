package postgres_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/postgres"
	"github.com/convida/convida/pkg/referral"
	"github.com/convida/convida/pkg/report"
)

// overviewRows writes rows straight into the tables, each at a chosen
// instant, so a test can put them on either side of a day's boundary.
type overviewRows struct {
	t        *testing.T
	pool     *pgxpool.Pool
	merchant uuid.UUID
	n        int
}

// referral stores a referral of the member, created at the instant, with
// a reward of a tenth of the order value, credited unless it was rejected
// at once (as a self-referral is), and returns its id.
func (w *overviewRows) referral(memberID uuid.UUID, at string, status string, orderValue int64) uuid.UUID {
	w.t.Helper()
	w.n++
	id := uuid.New()
	created := mustTime(w.t, at)
	if _, err := w.pool.Exec(context.Background(), `INSERT INTO referrals (merchant_id, id, member_id, source, order_id,
  order_value, reward_amount, status, warranty_expires_at, created_at, updated_at,
  credit_txn_id)
VALUES ($1, $2, $3, 'guru', $4, $5::bigint, $5::bigint / 10, $6, $7, $7, $7,
  CASE WHEN $6::text = 'rejected' THEN NULL ELSE gen_random_uuid() END)`,
		w.merchant, id, memberID, "order-"+id.String(), orderValue, status, created); err != nil {
		w.t.Fatalf("insert referral: %v", err)
	}
	return id
}

// entry stores a ledger entry of the member.
func (w *overviewRows) entry(memberID uuid.UUID, at, typ string, amount int64) {
	w.t.Helper()
	if _, err := w.pool.Exec(context.Background(), `INSERT INTO ledger_entries (merchant_id, id, member_id, type, amount,
  pending_delta, available_delta, pending_after, available_after, description, reference_type, reference_id,
  transaction_id, command_id, created_at)
VALUES ($1, gen_random_uuid(), $2, $3, $4, 0, 0, 0, 0, '', 'referral', gen_random_uuid(), gen_random_uuid(),
  gen_random_uuid()::text, $5)`, w.merchant, memberID, typ, amount, mustTime(w.t, at)); err != nil {
		w.t.Fatalf("insert ledger entry: %v", err)
	}
}

// redemption stores a redemption of the member.
func (w *overviewRows) redemption(memberID uuid.UUID, at, status string, amount int64) {
	w.t.Helper()
	if _, err := w.pool.Exec(context.Background(), `INSERT INTO redemptions (merchant_id, id, member_id, amount, type,
  status, transaction_id, debit_txn_id, created_at, updated_at)
VALUES ($1, gen_random_uuid(), $2, $3, 'store_credit', $4, gen_random_uuid(), gen_random_uuid(), $5, $5)`,
		w.merchant, memberID, amount, status, mustTime(w.t, at)); err != nil {
		w.t.Fatalf("insert redemption: %v", err)
	}
}

// wallet stores the member's wallet with that pending balance.
func (w *overviewRows) wallet(memberID uuid.UUID, pending int64) {
	w.t.Helper()
	if _, err := w.pool.Exec(context.Background(), `INSERT INTO wallets (merchant_id, member_id, pending, total_earned)
VALUES ($1, $2, $3, $3)`, w.merchant, memberID, pending); err != nil {
		w.t.Fatalf("insert wallet: %v", err)
	}
}

func (w *overviewRows) exec(sql string, args ...any) {
	w.t.Helper()
	if _, err := w.pool.Exec(context.Background(), sql, args...); err != nil {
		w.t.Fatalf("%s: %v", sql, err)
	}
}

func mustTime(t *testing.T, s string) time.Time {
	t.Helper()
	at, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return at
}

// TestOverviewBucketsDaysInTheMerchantZone: the range is whole calendar
// days in America/Sao_Paulo (UTC−3), so a sale at 23:59 local on the
// range's last day counts and one a minute before its first day does not,
// whatever their UTC date; the figures follow report's definitions, the
// series has a value for every day (zeros included), and another
// merchant's rows count nowhere.
func TestOverviewBucketsDaysInTheMerchantZone(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a, other := mustTwoTenants(t, 4, 1)
	w := &overviewRows{t: t, pool: a.pool, merchant: a.merchant.ID}
	ana, bia, cris, dora := a.members[0].ID, a.members[1].ID, a.members[2].ID, a.members[3].ID

	// The range: Nov 1–4 local = [Nov 1 03:00Z, Nov 5 03:00Z).
	outBefore := w.referral(ana, "2026-11-01T02:59:00Z", referral.StatusApproved, 10000) // Oct 31, 23:59 local
	w.referral(ana, "2026-11-01T03:00:00Z", referral.StatusApproved, 20000)              // Nov 1, 00:00 local
	w.referral(bia, "2026-11-02T12:00:00Z", referral.StatusPending, 5000)
	w.referral(bia, "2026-11-05T02:59:00Z", referral.StatusRejected, 7000) // Nov 4, 23:59 local
	w.referral(cris, "2026-11-04T10:00:00Z", referral.StatusCancelled, 3000)
	w.referral(cris, "2026-11-04T11:00:00Z", referral.StatusApproved, 4000)
	w.referral(dora, "2026-11-04T12:00:00Z", referral.StatusPending, 1000)
	newest := w.referral(dora, "2026-11-05T03:00:00Z", referral.StatusPending, 90000) // Nov 5 local
	w.entry(ana, "2026-11-01T02:59:00Z", "release", 1000)
	w.entry(ana, "2026-11-02T13:00:00Z", "release", 1000)
	w.entry(bia, "2026-11-05T02:59:00Z", "cancel", 500)
	w.redemption(ana, "2026-11-02T10:00:00Z", "completed", 300)
	w.redemption(ana, "2026-11-02T11:00:00Z", "failed", 400)
	w.redemption(bia, "2026-11-04T10:00:00Z", "pending", 100)
	w.redemption(bia, "2026-10-31T10:00:00Z", "completed", 999)
	w.wallet(bia, 1200)
	w.wallet(cris, 50)
	// Cris and Dora are creators; Guru is configured, Yampi is not; one
	// endpoint fails, one was switched off by the dispatcher.
	w.exec(`INSERT INTO creator_profiles (merchant_id, member_id, display_name, token_hash, token_enc)
VALUES ($1, $2, 'Cris Cria', '\x01', '\x01'), ($1, $3, 'Dora Dá', '\x02', '\x02')`, a.merchant.ID, cris, dora)
	// Guru's webhook is checked with the account token, saved; Yampi's and
	// Kiwify's with the webhook secret, saved only for Kiwify.
	w.exec(`INSERT INTO integration_settings (merchant_id, provider, account_token_enc, webhook_secret_enc)
VALUES ($1, 'guru', '\x01', NULL), ($1, 'yampi', NULL, NULL), ($1, 'kiwify', NULL, '\x01')`, a.merchant.ID)
	w.exec(`INSERT INTO webhook_endpoints (merchant_id, id, url, events, secret_sealed, is_active, failing_since, disabled_reason)
VALUES ($1, gen_random_uuid(), 'https://a.example', '{}', '\x01', true, now(), ''),
       ($1, gen_random_uuid(), 'https://b.example', '{}', '\x01', false, now(), 'failing for 3 days'),
       ($1, gen_random_uuid(), 'https://c.example', '{}', '\x01', false, NULL, ''),
       ($1, gen_random_uuid(), 'https://d.example', '{}', '\x01', true, NULL, '')`, a.merchant.ID)
	// The other merchant's sale inside the range counts nowhere.
	(&overviewRows{t: t, pool: a.pool, merchant: other.merchant.ID}).referral(other.members[0].ID, "2026-11-02T12:00:00Z", referral.StatusApproved, 777)

	zone, err := report.LoadZone("")
	if err != nil {
		t.Fatal(err)
	}
	r, err := report.Days("2026-11-01", "2026-11-04", zone)
	if err != nil {
		t.Fatal(err)
	}
	reads := postgres.NewOverviewReads(a.pool)
	o, err := reads.Overview(ctx, a.merchant.ID, r, report.MetricReferrals)
	if err != nil {
		t.Fatalf("Overview: %v", err)
	}

	f := o.Figures
	wantCounts := map[string]int64{"pending": 2, "approved": 2, "rejected": 1, "cancelled": 1}
	if f.ReferralsTotal != 6 || !maps.Equal(f.Referrals, wantCounts) {
		t.Errorf("referrals = %d %v, want 6 %v", f.ReferralsTotal, f.Referrals, wantCounts)
	}
	for _, c := range []struct {
		name      string
		got, want int64
	}{
		{"referred revenue (pending and approved)", f.ReferredRevenue, 20000 + 5000 + 4000 + 1000},
		{"rewards credited (not the rejected one's)", f.RewardsCredited, 2000 + 500 + 300 + 400 + 100},
		{"rewards released (of the approved referrals; the release entries do not count)", f.RewardsReleased, 2000 + 400},
		{"redeemed (not failed)", f.Redeemed, 300 + 100},
		{"redeemed and completed", f.RedeemedCompleted, 300},
		{"pending in warranty (now, any range)", f.PendingInWarranty, 1250},
	} {
		if c.got != c.want {
			t.Errorf("%s = %d, want %d", c.name, c.got, c.want)
		}
	}

	wantDays := []string{"2026-11-01", "2026-11-02", "2026-11-03", "2026-11-04"}
	checkSeries := func(metric report.Metric, points []report.Point, want []int64) {
		t.Helper()
		if len(points) != len(want) {
			t.Fatalf("%s series = %v, want %d days", metric, points, len(want))
		}
		for i, p := range points {
			if day := p.Day.Format(time.DateOnly); day != wantDays[i] || p.Day.Location() != zone || p.Day.Hour() != 0 || p.Value != want[i] {
				t.Errorf("%s day %d = %s %v %d, want %s midnight in %s, %d", metric, i, day, p.Day.Location(), p.Value, wantDays[i], zone, want[i])
			}
		}
	}
	checkSeries(report.MetricReferrals, o.Series, []int64{1, 1, 0, 4})
	def, err := reads.Overview(ctx, a.merchant.ID, r, "")
	if err != nil {
		t.Fatalf("Overview without a metric: %v", err)
	}
	if def.Metric != report.MetricReferrals {
		t.Errorf("Overview without a metric: metric %q, want referrals", def.Metric)
	}
	checkSeries(report.MetricReferrals, def.Series, []int64{1, 1, 0, 4})
	for metric, want := range map[report.Metric][]int64{
		report.MetricReferredRevenue: {20000, 5000, 0, 5000},
		report.MetricRewardsCredited: {2000, 500, 0, 800},
		report.MetricRewardsReleased: {2000, 0, 0, 400},
		report.MetricRedeemed:        {0, 300, 0, 100},
	} {
		points, err := reads.Series(ctx, a.merchant.ID, r, metric)
		if err != nil {
			t.Fatalf("Series(%s): %v", metric, err)
		}
		checkSeries(metric, points, want)
		// The overview's own series (from the figures' scan for the
		// referral metrics) is the same.
		ov, err := reads.Overview(ctx, a.merchant.ID, r, metric)
		if err != nil {
			t.Fatalf("Overview(%s): %v", metric, err)
		}
		checkSeries(metric, ov.Series, want)
	}
	if _, err := reads.Series(ctx, a.merchant.ID, r, "drop table"); !apperr.Is(err, apperr.Invalid) {
		t.Errorf("Series of an unknown metric: %v, want validation_error", err)
	}
	if _, err := reads.Overview(ctx, a.merchant.ID, report.Range{}, report.MetricReferrals); !apperr.Is(err, apperr.Invalid) {
		t.Errorf("Overview of a zero range: %v, want validation_error", err)
	}

	leaders := func(ls []report.Leader) []report.Leader {
		for i := range ls {
			ls[i].Name, ls[i].Email = "", ""
		}
		return ls
	}
	wantTop := []report.Leader{{MemberID: ana, Sales: 1, Revenue: 20000}, {MemberID: bia, Sales: 1, Revenue: 5000},
		{MemberID: cris, Sales: 1, Revenue: 4000}, {MemberID: dora, Sales: 1, Revenue: 1000}}
	if got := leaders(o.TopMembers); !slices.Equal(got, wantTop) {
		t.Errorf("top members = %+v, want %+v", got, wantTop)
	}
	wantCreators := []report.Leader{{MemberID: cris, DisplayName: "Cris Cria", Sales: 1, Revenue: 4000},
		{MemberID: dora, DisplayName: "Dora Dá", Sales: 1, Revenue: 1000}}
	if got := leaders(o.TopCreators); !slices.Equal(got, wantCreators) {
		t.Errorf("top creators = %+v, want %+v", got, wantCreators)
	}
	if len(o.Recent) != 8 || o.Recent[0].ID != newest || o.Recent[7].ID != outBefore || o.Recent[0].MemberEmail != a.members[3].Email {
		t.Errorf("recent = %d referrals, first %v (%s), last %v; want 8, newest %v of %s first, %v last",
			len(o.Recent), o.Recent[0].ID, o.Recent[0].MemberEmail, o.Recent[len(o.Recent)-1].ID, newest, a.members[3].Email, outBefore)
	}
	wantToDo := report.ToDo{IntegrationsMissing: []string{"yampi"}, WebhooksFailing: 1, WebhooksDisabled: 1}
	if !slices.Equal(o.ToDo.IntegrationsMissing, wantToDo.IntegrationsMissing) || o.ToDo.WebhooksFailing != 1 ||
		o.ToDo.WebhooksDisabled != 1 || o.ToDo.ReviewWaiting != 0 {
		t.Errorf("to-do = %+v, want %+v", o.ToDo, wantToDo)
	}

	if want := (report.Start{PlatformConnected: true, CampaignCreated: true, FirstMember: true, FirstSaleCredited: true, WebhookEndpoint: true}); o.ToDo.Start != want {
		t.Errorf("guided start = %+v, want %+v", o.ToDo.Start, want)
	}

	// The other merchant sees its own sale and nothing of A's.
	ob, err := reads.Overview(ctx, other.merchant.ID, r, report.MetricReferredRevenue)
	if err != nil {
		t.Fatal(err)
	}
	if ob.Figures.ReferralsTotal != 1 || ob.Figures.ReferredRevenue != 777 || ob.Figures.PendingInWarranty != 0 ||
		len(ob.Recent) != 1 || len(ob.TopCreators) != 0 || len(ob.ToDo.IntegrationsMissing) != 0 {
		t.Errorf("other merchant's overview = %+v, want only its own sale, and no platform it does not use called refusing", ob)
	}
	if ob.ToDo.Start.PlatformConnected || ob.ToDo.Start.WebhookEndpoint || !ob.ToDo.Start.FirstSaleCredited {
		t.Errorf("other merchant's guided start = %+v, want no platform and no endpoint (A's count nowhere), a credited sale", ob.ToDo.Start)
	}
}

// TestOverviewDaysAcrossDST: in a zone with daylight saving time, the day
// it ends is 25 hours long, and a sale late that evening is that day's
// (the days are the zone's calendar days, not 24-hour steps from the
// range's start).
func TestOverviewDaysAcrossDST(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a := mustTenants(t, 1)[0]
	w := &overviewRows{t: t, pool: a.pool, merchant: a.merchant.ID}
	// New York leaves DST on Sunday 2026-11-01 at 02:00 (UTC−4 → UTC−5).
	w.referral(a.members[0].ID, "2026-11-01T03:30:00Z", referral.StatusApproved, 100) // Oct 31, 23:30 EDT
	w.referral(a.members[0].ID, "2026-11-02T04:30:00Z", referral.StatusApproved, 200) // Nov 1, 23:30 EST
	w.referral(a.members[0].ID, "2026-11-02T05:30:00Z", referral.StatusApproved, 400) // Nov 2, 00:30 EST
	zone, err := report.LoadZone("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	r, err := report.Days("2026-10-31", "2026-11-02", zone)
	if err != nil {
		t.Fatal(err)
	}
	reads := postgres.NewOverviewReads(a.pool)
	o, err := reads.Overview(ctx, a.merchant.ID, r, report.MetricReferredRevenue)
	if err != nil {
		t.Fatal(err)
	}
	bySeries, err := reads.Series(ctx, a.merchant.ID, r, report.MetricReferredRevenue)
	if err != nil {
		t.Fatal(err)
	}
	for name, series := range map[string][]report.Point{"overview": o.Series, "series": bySeries} {
		var got []string
		for _, p := range series {
			got = append(got, fmt.Sprintf("%s %02d:00 %d", p.Day.Format(time.DateOnly), p.Day.Hour(), p.Value))
		}
		want := []string{"2026-10-31 00:00 100", "2026-11-01 00:00 200", "2026-11-02 00:00 400"}
		if !slices.Equal(got, want) {
			t.Errorf("%s: %v, want %v", name, got, want)
		}
	}
}
