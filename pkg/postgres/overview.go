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

	"github.com/convida/convida/pkg/merchant"
	"github.com/convida/convida/pkg/referral"
	"github.com/convida/convida/pkg/report"
)

// OverviewReads answers the dashboard's overview: the figures, the daily
// series, the top lists, the recent referrals and the to-do counts of one
// merchant. It writes nothing. Every range aggregate reads referrals,
// ledger entries and redemptions through the covering indexes of migration
// 00010 (index-only scans), so its cost grows with the rows of the range,
// not with the merchant's history.
type OverviewReads struct{ pool *pgxpool.Pool }

// NewOverviewReads returns an OverviewReads.
func NewOverviewReads(pool *pgxpool.Pool) *OverviewReads { return &OverviewReads{pool: pool} }

// Overview returns everything the overview page shows for the merchant, the
// range r and the chart's metric. It reads on two connections at once, each
// a pipelined batch of statements: the figures and top lists (a scan of the
// range's referrals and one of its releases) beside the rest (the series,
// another scan of the range, the recent referrals, the to-do counts), so
// the page waits for the longer of the two rather than their sum. A merchant
// with no activity gets zero figures, a zero-filled series and empty
// lists. An empty metric is report.MetricReferrals; an unknown metric or
// an invalid range is apperr.Invalid.
func (s *OverviewReads) Overview(ctx context.Context, merchantID uuid.UUID, r report.Range, metric report.Metric) (*report.Overview, error) {
	if err := r.Validate(); err != nil {
		return nil, err
	}
	seriesSQL, err := seriesQuery(metric)
	if err != nil {
		return nil, err
	}
	if metric == "" {
		metric = report.MetricReferrals
	}
	o := &report.Overview{Range: r, Metric: metric}
	rangeArgs := []any{merchantID, r.From, r.To}

	figures := &pgx.Batch{}
	figures.Queue(referralFiguresSQL, append(rangeArgs, report.TopN)...).Query(func(rows pgx.Rows) error {
		return scanReferralFigures(rows, o)
	})
	figures.Queue(walletFiguresSQL, rangeArgs...).QueryRow(func(row pgx.Row) error {
		f := &o.Figures
		return row.Scan(&f.RewardsReleased, &f.Redeemed, &f.RedeemedCompleted, &f.PendingInWarranty)
	})
	done := make(chan error, 1)
	go func() { done <- s.pool.SendBatch(ctx, figures).Close() }()

	rest := &pgx.Batch{}
	rest.Queue(seriesSQL, merchantID, r.From, r.To, r.Zone.String()).Query(func(rows pgx.Rows) (err error) {
		o.Series, err = collectSeries(rows, r.Zone)
		return err
	})
	rest.Queue(recentReferralsSQL, merchantID, report.RecentN).Query(func(rows pgx.Rows) (err error) {
		o.Recent, err = pgx.CollectRows(rows, scanListedReferral)
		return err
	})
	rest.Queue(toDoSQL, merchantID).QueryRow(func(row pgx.Row) error {
		return row.Scan(&o.ToDo.IntegrationsMissing, &o.ToDo.WebhooksFailing, &o.ToDo.WebhooksDisabled, &o.ToDo.ReviewWaiting)
	})
	err = s.pool.SendBatch(ctx, rest).Close()
	if err = cmp.Or(<-done, err); err != nil {
		return nil, fmt.Errorf("overview: %w", err)
	}
	return o, nil
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
	rows, err := s.pool.Query(ctx, q, merchantID, r.From, r.To, r.Zone.String())
	if err != nil {
		return nil, err
	}
	return collectSeries(rows, r.Zone)
}

// referralFiguresSQL reads, in one index-only scan of merchant $1's
// referrals created in [$2, $3), the referral figures (rows of kind
// 'status', one per status present) and the $4 top members and top
// creators (kinds 'member' and 'creator'): one hash aggregate per grouping
// set, where separate statements would scan the range three times. See
// report.Figures and report.Leader for the definitions.
const referralFiguresSQL = `WITH g AS MATERIALIZED (
  SELECT GROUPING(member_id) = 0 AS per_member, status, member_id, count(*) AS n,
    count(*) FILTER (WHERE status IN ('pending', 'approved')) AS sales,
    COALESCE(sum(order_value) FILTER (WHERE status IN ('pending', 'approved')), 0)::bigint AS revenue,
    COALESCE(sum(reward_amount) FILTER (WHERE credit_txn_id IS NOT NULL), 0)::bigint AS credited
  FROM referrals WHERE merchant_id = $1 AND created_at >= $2 AND created_at < $3
  GROUP BY GROUPING SETS ((status), (member_id))
)
SELECT 'status', g.status, NULL::uuid, '', '', '', g.n, g.sales, g.revenue, g.credited FROM g WHERE NOT g.per_member
UNION ALL
SELECT 'member', '', t.member_id, m.name, m.email, '', t.n, t.sales, t.revenue, 0
FROM (SELECT * FROM g WHERE g.per_member AND g.sales > 0 ORDER BY g.revenue DESC, g.member_id LIMIT $4) t
JOIN members m ON m.merchant_id = $1 AND m.id = t.member_id
UNION ALL
SELECT 'creator', '', t.member_id, m.name, m.email, t.display_name, t.n, t.sales, t.revenue, 0
FROM (SELECT g.*, p.display_name FROM g JOIN creator_profiles p ON p.merchant_id = $1 AND p.member_id = g.member_id
      WHERE g.per_member AND g.sales > 0 ORDER BY g.sales DESC, g.revenue DESC, g.member_id LIMIT $4) t
JOIN members m ON m.merchant_id = $1 AND m.id = t.member_id`

// scanReferralFigures reads the rows of referralFiguresSQL into o.
func scanReferralFigures(rows pgx.Rows, o *report.Overview) error {
	f := &o.Figures
	f.Referrals = map[string]int64{referral.StatusPending: 0, referral.StatusApproved: 0,
		referral.StatusRejected: 0, referral.StatusCancelled: 0}
	var kind, status string
	var memberID *uuid.UUID
	var l report.Leader
	var n, credited int64
	_, err := pgx.ForEachRow(rows, []any{&kind, &status, &memberID, &l.Name, &l.Email, &l.DisplayName, &n, &l.Sales,
		&l.Revenue, &credited}, func() error {
		switch kind {
		case "status":
			f.Referrals[status] = n
			f.ReferralsTotal += n
			f.ReferredRevenue += l.Revenue
			f.RewardsCredited += credited
		case "member":
			l.MemberID = *memberID
			o.TopMembers = append(o.TopMembers, l)
		case "creator":
			l.MemberID = *memberID
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

// walletFiguresSQL computes the figures of merchant $1 that are not read
// from referrals: the releases and redemptions of [$2, $3) and the pending
// sum of the wallets now.
const walletFiguresSQL = `SELECT
  (SELECT COALESCE(sum(amount), 0)::bigint FROM ledger_entries
   WHERE merchant_id = $1 AND created_at >= $2 AND created_at < $3 AND type = 'release'),
  d.redeemed, d.completed,
  (SELECT COALESCE(sum(pending), 0)::bigint FROM wallets WHERE merchant_id = $1)
FROM (SELECT COALESCE(sum(amount) FILTER (WHERE status <> 'failed'), 0)::bigint AS redeemed,
        COALESCE(sum(amount) FILTER (WHERE status = 'completed'), 0)::bigint AS completed
      FROM redemptions WHERE merchant_id = $1 AND created_at >= $2 AND created_at < $3) d`

// seriesSource is where a metric's daily values come from: a table, the
// aggregate of a day and the rows it counts. Constants only: nothing here
// comes from a request.
type seriesSource struct{ table, value, where string }

var seriesSources = map[report.Metric]seriesSource{
	report.MetricReferrals:       {"referrals", "count(*)", "true"},
	report.MetricReferredRevenue: {"referrals", "sum(order_value)", "status IN ('pending', 'approved')"},
	report.MetricRewardsCredited: {"referrals", "sum(reward_amount)", "credit_txn_id IS NOT NULL"},
	report.MetricRewardsReleased: {"ledger_entries", "sum(amount)", "type = 'release'"},
	report.MetricRedeemed:        {"redemptions", "sum(amount)", "status <> 'failed'"},
}

// seriesQuery is the statement of the metric's series for merchant $1,
// [$2, $3) and the zone named $4: every calendar day of the range in the
// zone from generate_series, left-joined to the day's aggregate, the rows
// bucketed by the day of their created_at in the zone (for a referral, the
// time Convida recorded the sale).
func seriesQuery(metric report.Metric) (string, error) {
	m, err := report.ParseMetric(string(metric))
	if err != nil {
		return "", err
	}
	src := seriesSources[m]
	return `SELECT d.day::date, COALESCE(v.value, 0)::bigint
FROM generate_series(($2::timestamptz AT TIME ZONE $4)::date, ($3::timestamptz AT TIME ZONE $4)::date - 1,
  interval '1 day') AS d(day)
LEFT JOIN (
  SELECT (created_at AT TIME ZONE $4)::date AS day, ` + src.value + ` AS value FROM ` + src.table + `
  WHERE merchant_id = $1 AND created_at >= $2 AND created_at < $3 AND ` + src.where + `
  GROUP BY 1
) v ON v.day = d.day::date
ORDER BY d.day`, nil
}

// collectSeries reads (date, value) rows, each date made that day's
// midnight in zone.
func collectSeries(rows pgx.Rows, zone *time.Location) ([]report.Point, error) {
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (report.Point, error) {
		var p report.Point
		var day time.Time
		err := row.Scan(&day, &p.Value)
		p.Day = time.Date(day.Year(), day.Month(), day.Day(), 0, 0, 0, 0, zone)
		return p, err
	})
}

// recentReferralsSQL is the merchant's $2 newest referrals with their
// referrers: the page of referrals is found on the index first, so only
// its rows are joined.
const recentReferralsSQL = `SELECT ` + referralColumns + `, m.name, m.email
FROM (SELECT id FROM referrals WHERE merchant_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2) p
JOIN referrals r ON r.merchant_id = $1 AND r.id = p.id
JOIN members m ON m.merchant_id = r.merchant_id AND m.id = r.member_id
ORDER BY r.created_at DESC, r.id DESC`

// toDoSQL counts merchant $1's to-do items (report.ToDo). A provider is
// configured when the credential its webhooks are checked with is saved.
var toDoSQL = `SELECT
  ARRAY(SELECT p FROM unnest(ARRAY['` + merchant.ProviderGuru + `', '` + merchant.ProviderYampi + `']) AS p
        WHERE NOT EXISTS (SELECT 1 FROM integration_settings i WHERE i.merchant_id = $1 AND i.provider = p
          AND CASE p WHEN '` + merchant.ProviderGuru + `' THEN i.account_token_enc IS NOT NULL
                     ELSE i.webhook_secret_enc IS NOT NULL END)
        ORDER BY p),
  (SELECT count(*) FROM webhook_endpoints WHERE merchant_id = $1 AND is_active AND failing_since IS NOT NULL),
  (SELECT count(*) FROM webhook_endpoints WHERE merchant_id = $1 AND NOT is_active AND disabled_reason <> ''),
  ` + reviewWaitingSQL()

// reviewWaitingSQL is the to-do's count of pending referrals flagged for
// review, for merchant $1 (on the referrals_review index).
func reviewWaitingSQL() string {
	return `(SELECT count(*) FROM referrals WHERE merchant_id = $1 AND status = 'pending' AND review_required)`
}
