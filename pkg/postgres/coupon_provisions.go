package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/bounds"
	"github.com/convida/convida/pkg/redemption"
)

// CouponStore keeps the provisioning of members' codes as coupons at the
// platforms (table coupon_provisions, migration 00008): the request path
// records that a coupon is wanted, in the transaction of the change that
// wants it; the dispatcher's provisioner claims due rows under a lease and
// writes each outcome.
type CouponStore struct{ pool *pgxpool.Pool }

var _ redemption.Coupons = (*CouponStore)(nil)

// NewCouponStore returns a CouponStore.
func NewCouponStore(pool *pgxpool.Pool) *CouponStore { return &CouponStore{pool: pool} }

// wantCoupons asks, in tx, for the coupons at every platform of the
// merchant's members that where selects (a condition on members m, with
// its argument as $2): a new row is pending at version 1; an existing one
// moves to the next version and is pending again, its coupon id kept so
// that the coupon is updated rather than created. It returns how many
// members it asked for.
func wantCoupons(ctx context.Context, tx pgx.Tx, merchantID uuid.UUID, where string, arg any) (int64, error) {
	// A new row of a campaign without a referee discount (or of an erased
	// member, whose code gives none) has nothing to provision: it is written not_configured at once, so the dispatcher
	// never claims it (a member created in such a campaign costs it no
	// work). An existing row is always asked for again: its coupon may
	// carry an earlier discount that must be switched off.
	tag, err := tx.Exec(ctx, `INSERT INTO coupon_provisions (merchant_id, member_id, platform, status, error, next_attempt_at)
SELECT m.merchant_id, m.id, p.platform,
  CASE WHEN no_discount THEN 'not_configured' ELSE 'pending' END,
  CASE WHEN no_discount THEN $4 END,
  CASE WHEN no_discount THEN NULL ELSE now() END
FROM members m
JOIN campaigns c ON c.merchant_id = m.merchant_id AND c.id = m.campaign_id
CROSS JOIN LATERAL (SELECT c.referee_discount_type IS NULL OR c.referee_discount_value <= 0 OR m.erased_at IS NOT NULL AS no_discount) d
CROSS JOIN unnest($3::text[]) AS p (platform)
WHERE m.merchant_id = $1 AND `+where+`
ON CONFLICT (merchant_id, member_id, platform) DO UPDATE SET
  wanted_version = coupon_provisions.wanted_version + 1, status = 'pending', error = NULL, attempts = 0,
  next_attempt_at = now(), updated_at = now()`, merchantID, arg, redemption.CouponPlatforms, redemption.NoRefereeDiscount)
	return tag.RowsAffected() / int64(len(redemption.CouponPlatforms)), err
}

// wantMemberCoupons asks for the coupons of one member (wantCoupons).
func wantMemberCoupons(ctx context.Context, tx pgx.Tx, merchantID, memberID uuid.UUID) (int64, error) {
	return wantCoupons(ctx, tx, merchantID, "m.id = $2", memberID)
}

// wantCampaignCoupons asks for the coupons of every member of a campaign
// (wantCoupons), when its referee discount changed.
func wantCampaignCoupons(ctx context.Context, tx pgx.Tx, merchantID, campaignID uuid.UUID) error {
	_, err := wantCoupons(ctx, tx, merchantID, "m.campaign_id = $2", campaignID)
	return err
}

// rewantCoupons asks again, in tx, for the merchant's coupons at platform
// that are not_configured or failed (its settings changed), unless the
// member's campaign gives no referee discount: new settings change nothing
// for those.
func rewantCoupons(ctx context.Context, tx pgx.Tx, merchantID uuid.UUID, platform string) error {
	_, err := tx.Exec(ctx, `UPDATE coupon_provisions cp SET wanted_version = cp.wanted_version + 1, status = 'pending',
  error = NULL, attempts = 0, next_attempt_at = now(), updated_at = now()
FROM members m JOIN campaigns c ON c.merchant_id = m.merchant_id AND c.id = m.campaign_id
WHERE cp.merchant_id = $1 AND cp.platform = $2 AND cp.status IN ('not_configured', 'failed')
  AND m.merchant_id = cp.merchant_id AND m.id = cp.member_id
  AND (c.referee_discount_type IS NOT NULL AND c.referee_discount_value > 0 OR cp.coupon_id IS NOT NULL)`,
		merchantID, platform)
	return err
}

// RequestCoupons asks for the member's coupons at every platform again
// (POST /members/{id}/provision-coupon): created when missing, updated to
// the campaign's discount otherwise. Repeating it is safe: each call is
// one more version, and the coupon is never duplicated. An unknown member
// is apperr.NotFound.
func (s *CouponStore) RequestCoupons(ctx context.Context, merchantID, memberID uuid.UUID) error {
	return InTx(ctx, s.pool, func(tx pgx.Tx) error {
		n, err := wantMemberCoupons(ctx, tx, merchantID, memberID)
		if err == nil && n == 0 {
			return apperr.Errorf(apperr.NotFound, "member not found")
		}
		return err
	})
}

// CouponStates returns the provisioning states of the merchant's members,
// by member and platform. A member or platform never asked for is absent.
func (s *CouponStore) CouponStates(ctx context.Context, merchantID uuid.UUID, memberIDs []uuid.UUID) (map[uuid.UUID]map[string]redemption.CouponState, error) {
	rows, err := s.pool.Query(ctx, `SELECT member_id, platform, status, COALESCE(coupon_id, ''), COALESCE(error, '')
FROM coupon_provisions WHERE merchant_id = $1 AND member_id = ANY($2)`, merchantID, memberIDs)
	if err != nil {
		return nil, err
	}
	out := map[uuid.UUID]map[string]redemption.CouponState{}
	var (
		member   uuid.UUID
		platform string
		st       redemption.CouponState
	)
	_, err = pgx.ForEachRow(rows, []any{&member, &platform, &st.Status, &st.CouponID, &st.Error}, func() error {
		if out[member] == nil {
			out[member] = map[string]redemption.CouponState{}
		}
		out[member][platform] = st
		return nil
	})
	return out, err
}

// ClaimCoupons leases up to limit due rows for lease (FOR UPDATE SKIP
// LOCKED: several dispatchers share the work) and returns them with the
// member's code and campaign discount as they stand now; an erased
// member's code has no discount, so its coupon is switched off. A row whose lease
// ran out (its dispatcher died) is due again.
func (s *CouponStore) ClaimCoupons(ctx context.Context, limit int, lease time.Duration) ([]redemption.CouponJob, error) {
	token := uuid.New()
	rows, err := s.pool.Query(ctx, `WITH due AS (
  SELECT merchant_id, member_id, platform FROM coupon_provisions
  WHERE next_attempt_at <= now() AND (lease_until IS NULL OR lease_until < now())
  ORDER BY next_attempt_at LIMIT $1 FOR UPDATE SKIP LOCKED
)
UPDATE coupon_provisions cp SET lease_token = $2, lease_until = now() + $3 * interval '1 millisecond'
FROM due, members m, campaigns c
WHERE cp.merchant_id = due.merchant_id AND cp.member_id = due.member_id AND cp.platform = due.platform
  AND m.merchant_id = cp.merchant_id AND m.id = cp.member_id
  AND c.merchant_id = m.merchant_id AND c.id = m.campaign_id
RETURNING cp.merchant_id, cp.member_id, cp.platform, cp.wanted_version, cp.attempts, COALESCE(cp.coupon_id, ''),
  m.coupon_code, CASE WHEN m.erased_at IS NULL THEN COALESCE(c.referee_discount_type, '') ELSE '' END,
  CASE WHEN m.erased_at IS NULL THEN c.referee_discount_value ELSE 0 END,
  COALESCE(cp.provisioned_discount_type, ''), cp.provisioned_discount_value`, limit, token, lease.Milliseconds())
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (redemption.CouponJob, error) {
		j := redemption.CouponJob{LeaseToken: token}
		err := row.Scan(&j.MerchantID, &j.MemberID, &j.Platform, &j.Version, &j.Attempts, &j.CouponID,
			&j.Code, &j.Discount.Type, &j.Discount.Value, &j.Carried.Type, &j.Carried.Value)
		return j, err
	})
}

// FinishCoupon writes the outcome of a claimed job and ends its lease. A
// coupon id is kept whatever happens next, and every id a member's coupon
// had is kept for FindMemberByCouponID. When provisioning was asked for
// again meanwhile (a newer version), the row stays pending and due now,
// for the newer version. It does nothing when the job's lease was lost (it
// ran out and another dispatcher claimed the row): that one writes its own.
func (s *CouponStore) FinishCoupon(ctx context.Context, j redemption.CouponJob, o redemption.CouponOutcome) error {
	var next *time.Duration
	if o.Status == redemption.CouponPending {
		next = &o.RetryIn
	}
	var retryMs *int64
	if next != nil {
		ms := next.Milliseconds()
		retryMs = &ms
	}
	var carriesType *string
	var carriesValue int64
	if o.Carries != nil {
		carriesType, carriesValue = &o.Carries.Type, o.Carries.Value
	}
	// The coupon's id is kept in coupon_ids too (migration 00020), even
	// under a lost lease: the platform holds a coupon with it either way.
	_, err := s.pool.Exec(ctx, `WITH kept AS (
  INSERT INTO coupon_ids (merchant_id, platform, coupon_id, member_id)
  SELECT $1, $3, $5, $2 WHERE char_length($5) BETWEEN 1 AND 255
  ON CONFLICT (merchant_id, platform, coupon_id) DO UPDATE SET member_id = EXCLUDED.member_id, recorded_at = now()
  WHERE coupon_ids.member_id <> EXCLUDED.member_id
)
UPDATE coupon_provisions SET
  coupon_id = COALESCE(NULLIF($5, ''), coupon_id),
  provisioned_version = CASE WHEN $6 = 'provisioned' THEN $4 ELSE provisioned_version END,
  provisioned_discount_type = CASE WHEN $11::text IS NULL THEN provisioned_discount_type ELSE NULLIF($11, '') END,
  provisioned_discount_value = CASE WHEN $11::text IS NULL THEN provisioned_discount_value ELSE $12 END,
  status = CASE WHEN wanted_version = $4 THEN $6 ELSE 'pending' END,
  error = CASE WHEN wanted_version = $4 THEN NULLIF($7, '') END,
  attempts = CASE WHEN wanted_version = $4 THEN $8 ELSE 0 END,
  next_attempt_at = CASE WHEN wanted_version <> $4 THEN now()
    WHEN $9::bigint IS NOT NULL THEN now() + $9 * interval '1 millisecond' END,
  lease_token = NULL, lease_until = NULL, updated_at = now()
WHERE merchant_id = $1 AND member_id = $2 AND platform = $3 AND lease_token = $10`,
		j.MerchantID, j.MemberID, j.Platform, j.Version, o.CouponID, o.Status, o.Error, o.Attempts, retryMs, j.LeaseToken,
		carriesType, carriesValue)
	return err
}

// ReleaseCoupon ends a job's lease without an outcome (its dispatcher is
// stopping and does not know what the platform did): the row is due again
// at once, and the next try adopts a coupon the platform made meanwhile.
func (s *CouponStore) ReleaseCoupon(ctx context.Context, j redemption.CouponJob) error {
	_, err := s.pool.Exec(ctx, `UPDATE coupon_provisions SET lease_token = NULL, lease_until = NULL
WHERE merchant_id = $1 AND member_id = $2 AND platform = $3 AND lease_token = $4`,
		j.MerchantID, j.MemberID, j.Platform, j.LeaseToken)
	return err
}

// FindMemberByCouponID finds the member whose coupon at platform got the
// id couponID (Yampi's promocode_id of an order) from any provisioning,
// the current or an earlier one (table coupon_ids, migration 00020): her
// id and her referral code, the coupon's code. It is apperr.NotFound when
// no coupon of the merchant's members had that id.
func (s *CouponStore) FindMemberByCouponID(ctx context.Context, merchantID uuid.UUID, platform, couponID string) (uuid.UUID, string, error) {
	var memberID uuid.UUID
	var code string
	err := s.pool.QueryRow(ctx, `SELECT m.id, m.coupon_code FROM coupon_ids ci
JOIN members m ON m.merchant_id = ci.merchant_id AND m.id = ci.member_id
WHERE ci.merchant_id = $1 AND ci.platform = $2 AND ci.coupon_id = $3`, merchantID, platform, couponID).Scan(&memberID, &code)
	if errors.Is(err, pgx.ErrNoRows) {
		return uuid.Nil, "", apperr.Errorf(apperr.NotFound, "no member's %s coupon has the id %s", platform, bounds.Cut(couponID, 60))
	}
	return memberID, code, err
}
