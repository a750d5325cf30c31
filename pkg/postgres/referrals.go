package postgres

import (
	"context"
	"iter"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/convida/convida/pkg/referral"
	"github.com/convida/convida/pkg/report"
)

// ReferralReads answers the admin reads of referrals: the merchant-wide
// list and a single referral, each with its referrer's name and email. It
// writes nothing.
type ReferralReads struct{ pool *pgxpool.Pool }

var _ referral.Finder = (*ReferralReads)(nil)

// NewReferralReads returns a ReferralReads.
func NewReferralReads(pool *pgxpool.Pool) *ReferralReads { return &ReferralReads{pool: pool} }

// referralFilterWhere selects the referrals of merchant $1 matching $2 (the
// referrer, NULL for any), $3 (status, empty for any), the half-open
// creation interval [$4, $5) (either NULL for unbounded), $6
// (review_required, NULL for any; true reads the referrals_review index)
// and coming after the cursor ($7, $8), NULL for the start. Without a
// referrer it runs on referrals_recent, with one on referrals_member;
// either way as an index-only scan until the page is chosen.
const referralFilterWhere = `r.merchant_id = $1 AND ($2::uuid IS NULL OR r.member_id = $2)
  AND ($3 = '' OR r.status = $3)
  AND ($4::timestamptz IS NULL OR r.created_at >= $4)
  AND ($5::timestamptz IS NULL OR r.created_at < $5)
  AND ($6::boolean IS NULL OR r.review_required = $6)
  AND ($7::timestamptz IS NULL OR (r.created_at, r.id) < ($7, $8::uuid))`

// referralFilterArgs are the parameters of referralFilterWhere for f, with
// the status taken from status rather than f (the tabs count every status).
func referralFilterArgs(merchantID uuid.UUID, f referral.Filter, status string, after *cursor) []any {
	return append([]any{merchantID, nilIfZero(f.MemberID), status, nilIfZeroTime(f.CreatedAfter),
		nilIfZeroTime(f.CreatedBefore), f.ReviewRequired}, cursorArgs(after)...)
}

// referralPageSQL reads a page of referralFilterWhere ($9 offset, $10 limit)
// with each referrer's name and email; only the page's rows are joined.
const referralPageSQL = `SELECT ` + referralColumns + `, m.name, m.email
FROM (SELECT r.id FROM referrals r WHERE ` + referralFilterWhere + `
      ORDER BY r.created_at DESC, r.id DESC OFFSET $9 LIMIT $10) p
JOIN referrals r ON r.merchant_id = $1 AND r.id = p.id
JOIN members m ON m.merchant_id = r.merchant_id AND m.id = r.member_id
ORDER BY r.created_at DESC, r.id DESC`

var referralTabsSQL = tabsSQL("referrals", "r", referralFilterWhere,
	referral.StatusPending, referral.StatusApproved, referral.StatusRejected, referral.StatusCancelled)

// ListReferrals returns a page of the merchant's referrals matching f,
// newest first with ties broken by id, and the number matching f, exact,
// in one round trip.
func (s *ReferralReads) ListReferrals(ctx context.Context, merchantID uuid.UUID, f referral.Filter) ([]referral.Listed, int, error) {
	var list []referral.Listed
	total := 0
	b := &pgx.Batch{}
	b.Queue(referralPageSQL, append(referralFilterArgs(merchantID, f, f.Status, nil), f.Offset, f.Limit)...).Query(
		func(rows pgx.Rows) (err error) {
			list, err = pgx.CollectRows(rows, scanListedReferral)
			return err
		})
	b.Queue(`SELECT count(*) FROM referrals r WHERE `+referralFilterWhere, referralFilterArgs(merchantID, f, f.Status, nil)...).
		QueryRow(func(row pgx.Row) error { return row.Scan(&total) })
	if err := s.pool.SendBatch(ctx, b).Close(); err != nil {
		return nil, 0, err
	}
	return list, total, nil
}

// ReferralsPage returns a page of the merchant's referrals matching f, as
// ListReferrals does, and the referrals matching f counted by status up to
// report.TabCap (the page's tabs; f.Status chooses the tab, not the counts), in
// one round trip.
func (s *ReferralReads) ReferralsPage(ctx context.Context, merchantID uuid.UUID, f referral.Filter) ([]referral.Listed, report.Tabs, error) {
	var list []referral.Listed
	tabs := newTabs(referral.StatusPending, referral.StatusApproved, referral.StatusRejected, referral.StatusCancelled)
	b := &pgx.Batch{}
	b.Queue(referralPageSQL, append(referralFilterArgs(merchantID, f, f.Status, nil), f.Offset, f.Limit)...).Query(
		func(rows pgx.Rows) (err error) {
			list, err = pgx.CollectRows(rows, scanListedReferral)
			return err
		})
	b.Queue(referralTabsSQL, referralFilterArgs(merchantID, f, "", nil)...).Query(collectTabs(tabs))
	if err := s.pool.SendBatch(ctx, b).Close(); err != nil {
		return nil, nil, err
	}
	return list, tabs, nil
}

// ReferralRows yields every referral of the merchant matching f (its
// Offset and Limit ignored), newest first, read ExportBatch at a time: the
// CSV export. The sequence ends at the first error, yielded.
func (s *ReferralReads) ReferralRows(ctx context.Context, merchantID uuid.UUID, f referral.Filter) iter.Seq2[referral.Listed, error] {
	return batches(ctx, func(ctx context.Context, after *cursor, limit int) ([]referral.Listed, error) {
		rows, err := s.pool.Query(ctx, referralPageSQL, append(referralFilterArgs(merchantID, f, f.Status, after), 0, limit)...)
		if err != nil {
			return nil, err
		}
		return pgx.CollectRows(rows, scanListedReferral)
	}, func(l referral.Listed) cursor { return cursor{l.CreatedAt, l.ID} })
}

// FindReferralByID returns the merchant's referral with its referrer, or
// apperr.NotFound.
func (s *ReferralReads) FindReferralByID(ctx context.Context, merchantID, id uuid.UUID) (*referral.Listed, error) {
	var l referral.Listed
	var creditTxn *uuid.UUID
	err := s.pool.QueryRow(ctx, `SELECT `+referralColumns+`, m.name, m.email
FROM referrals r JOIN members m ON m.merchant_id = r.merchant_id AND m.id = r.member_id
WHERE r.merchant_id = $1 AND r.id = $2`, merchantID, id).Scan(
		append(referralDest(&l.Referral, &creditTxn), &l.MemberName, &l.MemberEmail)...)
	if err != nil {
		return nil, notFound(err, "referral not found")
	}
	if creditTxn != nil {
		l.CreditTxnID = *creditTxn
	}
	return &l, nil
}

// scanListedReferral reads referralColumns, the referrer's name and email.
func scanListedReferral(row pgx.CollectableRow) (referral.Listed, error) {
	var l referral.Listed
	var creditTxn *uuid.UUID
	err := row.Scan(append(referralDest(&l.Referral, &creditTxn), &l.MemberName, &l.MemberEmail)...)
	if creditTxn != nil {
		l.CreditTxnID = *creditTxn
	}
	return l, err
}

// referralDest returns the scan destinations of referralColumns, in order.
func referralDest(r *referral.Referral, creditTxn **uuid.UUID) []any {
	return []any{&r.MerchantID, &r.ID, &r.MemberID, &r.Source, &r.OrderID, &r.RefereeEmail,
		&r.RefereeName, &r.RefereeExternalID, &r.CouponUsed, &r.OrderValue, &r.RewardAmount, &r.Status,
		&r.RejectionReason, &r.Notes, &r.UnrecoveredAmount, creditTxn, &r.WarrantyExpiresAt,
		&r.CreatedAt, &r.UpdatedAt, &r.ReviewRequired, &r.ReviewReasons}
}

// nilIfZeroTime maps the zero time to SQL NULL.
func nilIfZeroTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

// ListMemberReferrals returns every referral of the member, newest first.
func (s *WalletReads) ListMemberReferrals(ctx context.Context, merchantID, memberID uuid.UUID) ([]referral.Referral, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+referralColumns+` FROM referrals r
  WHERE r.merchant_id = $1 AND r.member_id = $2 ORDER BY r.created_at DESC, r.id DESC`, merchantID, memberID)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, scanReferral)
}

func scanReferral(row pgx.CollectableRow) (referral.Referral, error) {
	var r referral.Referral
	var creditTxn *uuid.UUID
	err := row.Scan(referralDest(&r, &creditTxn)...)
	if creditTxn != nil {
		r.CreditTxnID = *creditTxn
	}
	return r, err
}

// SchedulerStore finds the scheduler's due work (it implements
// scheduler.Store).
type SchedulerStore struct{ pool *pgxpool.Pool }

// NewSchedulerStore returns a SchedulerStore.
func NewSchedulerStore(pool *pgxpool.Pool) *SchedulerStore { return &SchedulerStore{pool: pool} }

// DueReferrals returns pending referrals whose warranty expired by now,
// except those held for review: only approve or reject decides them.
func (s *SchedulerStore) DueReferrals(ctx context.Context, now time.Time, limit int, skip []uuid.UUID) ([]referral.Due, error) {
	if skip == nil {
		skip = []uuid.UUID{}
	}
	rows, err := s.pool.Query(ctx, `SELECT merchant_id, member_id, id FROM referrals
WHERE status = 'pending' AND NOT review_required AND warranty_expires_at <= $1 AND NOT (id = ANY($3::uuid[]))
ORDER BY warranty_expires_at LIMIT $2`, now, limit, skip)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (referral.Due, error) {
		var d referral.Due
		err := row.Scan(&d.MerchantID, &d.MemberID, &d.ReferralID)
		return d, err
	})
}
