package postgres

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/convida/convida/pkg/referral"
)

// ReferralReads answers the admin reads of referrals: the merchant-wide
// list and a single referral, each with its referrer's name and email. It
// writes nothing.
type ReferralReads struct{ pool *pgxpool.Pool }

// NewReferralReads returns a ReferralReads.
func NewReferralReads(pool *pgxpool.Pool) *ReferralReads { return &ReferralReads{pool: pool} }

// referralFilterWhere selects the referrals of merchant $1 matching $2 (the
// referrer, NULL for any), $3 (status, empty for any), the half-open
// creation interval [$4, $5) (either NULL for unbounded) and $6
// (review_required, NULL for any; true reads the referrals_review index).
const referralFilterWhere = `r.merchant_id = $1 AND ($2::uuid IS NULL OR r.member_id = $2)
  AND ($3 = '' OR r.status = $3)
  AND ($4::timestamptz IS NULL OR r.created_at >= $4)
  AND ($5::timestamptz IS NULL OR r.created_at < $5)
  AND ($6::boolean IS NULL OR r.review_required = $6)`

// ListReferrals returns a page of the merchant's referrals matching f,
// newest first with ties broken by id, and the number matching f.
func (s *ReferralReads) ListReferrals(ctx context.Context, merchantID uuid.UUID, f referral.Filter) ([]referral.Listed, int, error) {
	args := []any{merchantID, nilIfZero(f.MemberID), f.Status, nilIfZeroTime(f.CreatedAfter), nilIfZeroTime(f.CreatedBefore),
		f.ReviewRequired}
	rows, err := s.pool.Query(ctx, `SELECT `+referralColumns+`, m.name, m.email, count(*) OVER ()
FROM referrals r JOIN members m ON m.merchant_id = r.merchant_id AND m.id = r.member_id
WHERE `+referralFilterWhere+`
ORDER BY r.created_at DESC, r.id DESC OFFSET $7 LIMIT $8`, append(args, f.Offset, f.Limit)...)
	if err != nil {
		return nil, 0, err
	}
	total := 0
	list, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (referral.Listed, error) {
		var l referral.Listed
		var creditTxn *uuid.UUID
		err := row.Scan(append(referralDest(&l.Referral, &creditTxn), &l.MemberName, &l.MemberEmail, &total)...)
		if creditTxn != nil {
			l.CreditTxnID = *creditTxn
		}
		return l, err
	})
	if err != nil {
		return nil, 0, err
	}
	if len(list) == 0 && f.Offset > 0 {
		err = s.pool.QueryRow(ctx, `SELECT count(*) FROM referrals r WHERE `+referralFilterWhere, args...).Scan(&total)
	}
	return list, total, err
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
