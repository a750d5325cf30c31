package postgres

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/convida/convida/pkg/provider"
	"github.com/convida/convida/pkg/referral"
	"github.com/convida/convida/pkg/report"
)

// OverviewReads answers the dashboard's overview: the figures, the daily
// series, the top lists, the recent referrals and the to-do counts of one
// merchant. It writes nothing. Every range aggregate reads referrals and
// redemptions through the covering indexes of migration 00010 (index-only
// scans; the few rejected or cancelled referrals by referrals_status), so
// its cost grows with the rows of the range, not with the merchant's
// history. The reward figures follow the credits of the range's referrals
// (report.Figures), so released, reversed and cancelled add up with the
// pending rest to what was credited.
type OverviewReads struct{ pool *pgxpool.Pool }

// NewOverviewReads returns an OverviewReads.
func NewOverviewReads(pool *pgxpool.Pool) *OverviewReads { return &OverviewReads{pool: pool} }

// Overview returns everything the overview page shows for the merchant, the
// range r and the chart's metric. It reads on two connections at once, each
// a pipelined batch of statements, each half about as long as the other:
// the top lists (a scan of the range's sales aggregated by member) and the
// wallet figures beside the rest (a scan of the range's referrals by day
// and status, which yields the referral figures and the series of the
// referral metrics, the series of another metric, the recent referrals, the
// to-do counts), so the page waits for the longer of the two rather than
// their sum. A merchant with no activity gets zero figures, a zero-filled
// series and empty lists. An empty metric is report.MetricReferrals; an
// unknown metric or an invalid range is apperr.Invalid.
func (s *OverviewReads) Overview(ctx context.Context, merchantID uuid.UUID, r report.Range, metric report.Metric) (*report.Overview, error) {
	if err := r.Validate(); err != nil {
		return nil, err
	}
	metric, err := report.ParseMetric(string(metric))
	if err != nil {
		return nil, err
	}
	o := &report.Overview{Range: r, Metric: metric}
	starts := dayStarts(r)
	rangeArgs := []any{merchantID, r.From, r.To}

	tops := &pgx.Batch{}
	tops.Queue(topListsSQL, append(rangeArgs, report.TopN)...).Query(func(rows pgx.Rows) error {
		return scanTopLists(rows, o)
	})
	tops.Queue(walletFiguresSQL, rangeArgs...).QueryRow(func(row pgx.Row) error {
		f := &o.Figures
		return row.Scan(&f.Redeemed, &f.RedeemedCompleted, &f.PendingInWarranty)
	})
	done := make(chan error, 1)
	go func() { done <- s.pool.SendBatch(ctx, tops).Close() }()

	rest := &pgx.Batch{}
	rest.Queue(dailyReferralsSQL, merchantID, r.From, r.To, starts).Query(func(rows pgx.Rows) error {
		return scanDailyReferrals(rows, o, starts)
	})
	// After dailyReferralsSQL, which sets RewardsReleased's first part.
	rest.Queue(takenBackSQL, rangeArgs...).QueryRow(func(row pgx.Row) error {
		f := &o.Figures
		var unrecovered int64
		err := row.Scan(&f.RewardsCancelled, &f.RewardsReversed, &unrecovered)
		f.RewardsReleased += unrecovered
		return err
	})
	if _, daily := dailyReferralMetrics[metric]; !daily {
		q, err := seriesQuery(metric)
		if err != nil {
			return nil, err
		}
		rest.Queue(q, merchantID, r.From, r.To, starts).Query(func(rows pgx.Rows) (err error) {
			o.Series, err = collectSeries(rows, starts)
			return err
		})
	}
	queueCurrent(rest, merchantID, &o.Recent, &o.ToDo)
	err = s.pool.SendBatch(ctx, rest).Close()
	if err = cmp.Or(<-done, err); err != nil {
		return nil, fmt.Errorf("overview: %w", err)
	}
	return o, nil
}

// Current returns what the overview shows whatever its range: the
// merchant's report.RecentN newest referrals and the to-do counts, in one
// round trip (a few milliseconds: both read indexes). A page that keeps an
// overview for a while reads these afresh, so that a referral just
// reviewed leaves the to-do at once.
func (s *OverviewReads) Current(ctx context.Context, merchantID uuid.UUID) ([]referral.Listed, report.ToDo, error) {
	var recent []referral.Listed
	var todo report.ToDo
	b := &pgx.Batch{}
	queueCurrent(b, merchantID, &recent, &todo)
	if err := s.pool.SendBatch(ctx, b).Close(); err != nil {
		return nil, report.ToDo{}, fmt.Errorf("overview: %w", err)
	}
	return recent, todo, nil
}

// queueCurrent queues the reads of Current into b.
func queueCurrent(b *pgx.Batch, merchantID uuid.UUID, recent *[]referral.Listed, todo *report.ToDo) {
	b.Queue(recentReferralsSQL, merchantID, report.RecentN).Query(func(rows pgx.Rows) (err error) {
		*recent, err = pgx.CollectRows(rows, scanListedReferral)
		return err
	})
	b.Queue(toDoSQL, merchantID).QueryRow(func(row pgx.Row) error {
		s := &todo.Start
		var noAccountToken, noWebhookSecret []string
		if err := row.Scan(&noAccountToken, &noWebhookSecret, &todo.WebhooksFailing, &todo.WebhooksDisabled, &todo.ReviewWaiting,
			&s.PlatformConnected, &s.CampaignCreated, &s.FirstMember, &s.FirstSaleCredited, &s.WebhookEndpoint); err != nil {
			return err
		}
		todo.IntegrationsMissing = missingWebhook(noAccountToken, noWebhookSecret)
		return nil
	})
}

// Series returns one value per calendar day of r for the metric, zero
// when nothing happened that day: what the chart redraws when only the
// metric changes. An unknown metric or an invalid range is apperr.Invalid.
func (s *OverviewReads) Series(ctx context.Context, merchantID uuid.UUID, r report.Range, metric report.Metric) ([]report.Point, error) {
	if err := r.Validate(); err != nil {
		return nil, err
	}
	q, err := seriesQuery(metric)
	if err != nil {
		return nil, err
	}
	starts := dayStarts(r)
	rows, err := s.pool.Query(ctx, q, merchantID, r.From, r.To, starts)
	if err != nil {
		return nil, err
	}
	return collectSeries(rows, starts)
}

// dayStarts is the midnight of each calendar day of r in its zone: the
// thresholds width_bucket sorts a row's created_at into (bucket i, from 1,
// is day i-1). Computed here rather than with AT TIME ZONE in SQL, which
// costs a zone conversion per row (a third of the series' time at 75,000
// rows); a day is 23 or 25 hours long across a DST change all the same.
func dayStarts(r report.Range) []time.Time {
	var starts []time.Time
	for d := r.From.In(r.Zone); d.Before(r.To); {
		starts = append(starts, d)
		y, m, day := d.Date()
		d = time.Date(y, m, day+1, 0, 0, 0, 0, r.Zone)
	}
	return starts
}

// dailyReferralsSQL aggregates merchant $1's referrals created in [$2, $3)
// by day (the bucket of $4, the range's day starts) and status, in one
// index-only scan: a few hundred rows from which scanDailyReferrals makes
// the referral figures and the series of the referral metrics. See
// report.Figures for the definitions.
const dailyReferralsSQL = `SELECT width_bucket(created_at, $4::timestamptz[]), status, count(*),
  COALESCE(sum(order_value), 0)::bigint, COALESCE(sum(reward_amount) FILTER (WHERE credit_txn_id IS NOT NULL), 0)::bigint
FROM referrals WHERE merchant_id = $1 AND created_at >= $2 AND created_at < $3
GROUP BY 1, 2`

// dailyReferralMetrics are the metrics dailyReferralsSQL yields the series
// of.
var dailyReferralMetrics = map[report.Metric]bool{
	report.MetricReferrals: true, report.MetricReferredRevenue: true, report.MetricRewardsCredited: true,
}

// scanDailyReferrals reads the rows of dailyReferralsSQL into o's referral
// figures and, when o's metric is a referral metric, its series.
func scanDailyReferrals(rows pgx.Rows, o *report.Overview, starts []time.Time) error {
	f := &o.Figures
	f.Referrals = map[string]int64{referral.StatusPending: 0, referral.StatusApproved: 0,
		referral.StatusRejected: 0, referral.StatusCancelled: 0}
	values := make([]int64, len(starts))
	var bucket int
	var status string
	var n, revenue, credited int64
	_, err := pgx.ForEachRow(rows, []any{&bucket, &status, &n, &revenue, &credited}, func() error {
		sale := status == referral.StatusPending || status == referral.StatusApproved
		f.Referrals[status] += n
		f.ReferralsTotal += n
		f.RewardsCredited += credited
		if status == referral.StatusApproved {
			f.RewardsReleased += credited
		}
		if sale {
			f.ReferredRevenue += revenue
		}
		if bucket < 1 || bucket > len(values) {
			return fmt.Errorf("overview: day bucket %d outside the range's %d days", bucket, len(values))
		}
		switch o.Metric {
		case report.MetricReferrals:
			values[bucket-1] += n
		case report.MetricReferredRevenue:
			if sale {
				values[bucket-1] += revenue
			}
		case report.MetricRewardsCredited:
			values[bucket-1] += credited
		}
		return nil
	})
	if dailyReferralMetrics[o.Metric] {
		o.Series = points(starts, values)
	}
	return err
}

// topListsSQL reads, in one index-only scan of merchant $1's sales (pending
// or approved referrals) created in [$2, $3) aggregated by member, the $4
// top members by referred revenue (kind 'member') and the $4 top creators
// by sales (kind 'creator'). See report.Leader for the definitions.
const topListsSQL = `WITH g AS MATERIALIZED (
  SELECT member_id, count(*) AS sales, COALESCE(sum(order_value), 0)::bigint AS revenue
  FROM referrals WHERE merchant_id = $1 AND created_at >= $2 AND created_at < $3 AND status IN ('pending', 'approved')
  GROUP BY member_id
)
SELECT 'member', t.member_id, m.name, m.email, '', t.sales, t.revenue
FROM (SELECT * FROM g ORDER BY g.revenue DESC, g.member_id LIMIT $4) t
JOIN members m ON m.merchant_id = $1 AND m.id = t.member_id
UNION ALL
SELECT 'creator', t.member_id, m.name, m.email, t.display_name, t.sales, t.revenue
FROM (SELECT g.*, p.display_name FROM g JOIN creator_profiles p ON p.merchant_id = $1 AND p.member_id = g.member_id
      ORDER BY g.sales DESC, g.revenue DESC, g.member_id LIMIT $4) t
JOIN members m ON m.merchant_id = $1 AND m.id = t.member_id`

// scanTopLists reads the rows of topListsSQL into o.
func scanTopLists(rows pgx.Rows, o *report.Overview) error {
	var kind string
	var l report.Leader
	_, err := pgx.ForEachRow(rows, []any{&kind, &l.MemberID, &l.Name, &l.Email, &l.DisplayName, &l.Sales, &l.Revenue}, func() error {
		if kind == "member" {
			o.TopMembers = append(o.TopMembers, l)
		} else {
			o.TopCreators = append(o.TopCreators, l)
		}
		return nil
	})
	// The joins after each LIMIT may reorder the rows: the order is set here.
	slices.SortFunc(o.TopMembers, func(a, b report.Leader) int {
		return cmp.Or(cmp.Compare(b.Revenue, a.Revenue), bytes.Compare(a.MemberID[:], b.MemberID[:]))
	})
	slices.SortFunc(o.TopCreators, func(a, b report.Leader) int {
		return cmp.Or(cmp.Compare(b.Sales, a.Sales), cmp.Compare(b.Revenue, a.Revenue), bytes.Compare(a.MemberID[:], b.MemberID[:]))
	})
	return err
}

// takenBackSQL splits the credits of merchant $1's referrals created in
// [$2, $3) that were taken back (rejected or cancelled referrals) into
// cancelled while pending and reversed after release, by the status of
// their credit transaction; and sums what the reversals could not
// recover (already redeemed: still released). Rejected and cancelled
// referrals are a few percent (referrals_status), each joined to its
// transaction by key.
const takenBackSQL = `SELECT
  COALESCE(sum(r.reward_amount) FILTER (WHERE t.status = 'cancelled'), 0)::bigint,
  COALESCE(sum(r.reward_amount - r.unrecovered_amount) FILTER (WHERE t.status = 'reversed'), 0)::bigint,
  COALESCE(sum(r.unrecovered_amount) FILTER (WHERE t.status = 'reversed'), 0)::bigint
FROM referrals r JOIN wallet_transactions t ON t.merchant_id = r.merchant_id AND t.id = r.credit_txn_id
WHERE r.merchant_id = $1 AND r.status IN ('rejected', 'cancelled') AND r.created_at >= $2 AND r.created_at < $3`

// walletFiguresSQL computes the figures of merchant $1 that are not read
// from referrals: the redemptions of [$2, $3) and the pending sum of the
// wallets now.
const walletFiguresSQL = `SELECT
  d.redeemed, d.completed,
  (SELECT COALESCE(sum(pending), 0)::bigint FROM wallets WHERE merchant_id = $1)
FROM (SELECT COALESCE(sum(amount) FILTER (WHERE status <> 'failed'), 0)::bigint AS redeemed,
        COALESCE(sum(amount) FILTER (WHERE status = 'completed'), 0)::bigint AS completed
      FROM redemptions WHERE merchant_id = $1 AND created_at >= $2 AND created_at < $3) d`

// seriesSource is where a metric's daily values come from: a table (or a
// subquery with merchant_id and created_at), the aggregate of a day and
// the rows it counts. Constants only: nothing here
// comes from a request.
type seriesSource struct{ table, value, where string }

var seriesSources = map[report.Metric]seriesSource{
	report.MetricReferrals:       {"referrals", "count(*)", "true"},
	report.MetricReferredRevenue: {"referrals", "sum(order_value)", "status IN ('pending', 'approved')"},
	report.MetricRewardsCredited: {"referrals", "sum(reward_amount)", "credit_txn_id IS NOT NULL"},
	// The credits of approved referrals, and what reversals left released.
	report.MetricRewardsReleased: {`(SELECT merchant_id, created_at, reward_amount AS amount FROM referrals
  WHERE status = 'approved' AND credit_txn_id IS NOT NULL
  UNION ALL SELECT merchant_id, created_at, unrecovered_amount FROM referrals
  WHERE status IN ('rejected', 'cancelled') AND unrecovered_amount > 0) AS released`, "sum(amount)", "true"},
	report.MetricRedeemed: {"redemptions", "sum(amount)", "status <> 'failed'"},
}

// seriesQuery is the statement of the metric's series for merchant $1 and
// [$2, $3): the rows bucketed by the day of their created_at ($4, the
// range's day starts: dayStarts; for a referral, the time Convida recorded
// the sale), one row per day with something; collectSeries fills the other
// days with zero.
func seriesQuery(metric report.Metric) (string, error) {
	m, err := report.ParseMetric(string(metric))
	if err != nil {
		return "", err
	}
	src := seriesSources[m]
	return `SELECT width_bucket(created_at, $4::timestamptz[]), COALESCE(` + src.value + `, 0)::bigint FROM ` + src.table + `
WHERE merchant_id = $1 AND created_at >= $2 AND created_at < $3 AND ` + src.where + `
GROUP BY 1`, nil
}

// collectSeries reads (day bucket, value) rows into one point per day of
// starts, zero for the days without a row.
func collectSeries(rows pgx.Rows, starts []time.Time) ([]report.Point, error) {
	values := make([]int64, len(starts))
	var bucket int
	var value int64
	_, err := pgx.ForEachRow(rows, []any{&bucket, &value}, func() error {
		if bucket < 1 || bucket > len(values) {
			return fmt.Errorf("series: day bucket %d outside the range's %d days", bucket, len(values))
		}
		values[bucket-1] = value
		return nil
	})
	if err != nil {
		return nil, err
	}
	return points(starts, values), nil
}

// points pairs each day start with its value.
func points(starts []time.Time, values []int64) []report.Point {
	out := make([]report.Point, len(starts))
	for i, d := range starts {
		out[i] = report.Point{Day: d, Value: values[i]}
	}
	return out
}

// recentReferralsSQL is the merchant's $2 newest referrals with their
// referrers: the page of referrals is found on the index first, so only
// its rows are joined.
const recentReferralsSQL = `SELECT ` + referralColumns + `, m.name, m.email
FROM (SELECT id FROM referrals WHERE merchant_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2) p
JOIN referrals r ON r.merchant_id = $1 AND r.id = p.id
JOIN members m ON m.merchant_id = r.merchant_id AND m.id = r.member_id
ORDER BY r.created_at DESC, r.id DESC`

// toDoSQL counts merchant $1's to-do items (report.ToDo) and ticks its
// guided start (report.Start; each an EXISTS on an index's first entry).
// Its first two columns are the platforms whose settings the merchant
// saved without an account token, and without a webhook secret: which of
// the two a platform's webhook needs is its descriptor's (missingWebhook).
var toDoSQL = `SELECT
  ARRAY(SELECT provider FROM integration_settings WHERE merchant_id = $1 AND account_token_enc IS NULL),
  ARRAY(SELECT provider FROM integration_settings WHERE merchant_id = $1 AND webhook_secret_enc IS NULL),
  (SELECT count(*) FROM webhook_endpoints WHERE merchant_id = $1 AND is_active AND failing_since IS NOT NULL),
  (SELECT count(*) FROM webhook_endpoints WHERE merchant_id = $1 AND NOT is_active AND disabled_reason <> ''),
  ` + reviewWaitingSQL() + `,
  EXISTS (SELECT 1 FROM integration_settings WHERE merchant_id = $1
          AND (account_token_enc IS NOT NULL OR webhook_secret_enc IS NOT NULL)),
  EXISTS (SELECT 1 FROM campaigns WHERE merchant_id = $1),
  EXISTS (SELECT 1 FROM members WHERE merchant_id = $1),
  EXISTS (SELECT 1 FROM referrals WHERE merchant_id = $1 AND credit_txn_id IS NOT NULL),
  EXISTS (SELECT 1 FROM webhook_endpoints WHERE merchant_id = $1)`

// missingWebhook names, in the descriptors' order, the platforms whose
// saved settings lack the credential their webhook is checked with: the
// merchant uses them, and their sales are refused. A platform the merchant
// saved nothing for is not listed: it is not in use.
func missingWebhook(noAccountToken, noWebhookSecret []string) []string {
	missing := []string{}
	for _, d := range provider.All() {
		s, _ := d.Setting(d.Webhook.Setting)
		if (s.Role == provider.AccountToken && slices.Contains(noAccountToken, d.Name)) ||
			(s.Role == provider.WebhookSecret && slices.Contains(noWebhookSecret, d.Name)) {
			missing = append(missing, d.Name)
		}
	}
	return missing
}

// reviewWaitingSQL is the to-do's count of pending referrals flagged for
// review, for merchant $1 (on the referrals_review index).
func reviewWaitingSQL() string {
	return `(SELECT count(*) FROM referrals WHERE merchant_id = $1 AND status = 'pending' AND review_required)`
}
