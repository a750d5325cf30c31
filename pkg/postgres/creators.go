package postgres

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/audit"
	"github.com/convida/convida/pkg/creator"
	"github.com/convida/convida/pkg/ids"
	"github.com/convida/convida/pkg/referral"
	"github.com/convida/convida/pkg/secretbox"
)

// CreatorStore keeps creator profiles (decisions 21–22). The token is kept
// sealed with the secretbox, so that the admin API can show it again, and as
// its SHA-256, the only key the public operations look it up by: an equality
// on a hash reveals nothing of the token through timing.
type CreatorStore struct {
	pool *pgxpool.Pool
	box  *secretbox.Box
}

// The contracts the API and the dashboard share.
var (
	_ creator.Store         = (*CreatorStore)(nil)
	_ referral.CreatorSales = (*CreatorStore)(nil)
)

// NewCreatorStore returns a CreatorStore sealing tokens with box.
func NewCreatorStore(pool *pgxpool.Pool, box *secretbox.Box) *CreatorStore {
	return &CreatorStore{pool: pool, box: box}
}

var errCreatorNotFound = apperr.Errorf(apperr.NotFound, "creator not found")

const creatorColumns = `merchant_id, member_id, display_name, niche, instagram_username, token_enc, created_at, updated_at`

// scanCreator reads creatorColumns and opens the token.
func (s *CreatorStore) scanCreator(row pgx.Row) (*creator.Profile, error) {
	p := &creator.Profile{}
	var sealed []byte
	if err := row.Scan(&p.MerchantID, &p.MemberID, &p.DisplayName, &p.Niche, &p.InstagramUsername, &sealed,
		&p.CreatedAt, &p.UpdatedAt); err != nil {
		return nil, notFound(err, "creator not found")
	}
	token, err := creatorTokenColumn.open(s.box, sealed, p.MerchantID, p.MemberID.String())
	if err != nil {
		return nil, err
	}
	p.Token = token
	return p, nil
}

// PutCreator creates the member's creator profile with a fresh token, or
// updates its display name, niche and Instagram username keeping its token.
// It returns the profile as stored and whether it was created. A member
// that does not exist is apperr.NotFound.
func (s *CreatorStore) PutCreator(ctx context.Context, in creator.Profile) (p *creator.Profile, created bool, err error) {
	token := creator.NewToken()
	row := s.pool.QueryRow(ctx, `INSERT INTO creator_profiles AS c (merchant_id, member_id, display_name, niche,
  instagram_username, token_hash, token_enc) VALUES ($1, $2, $3, $4, $5, $6, $7)
ON CONFLICT (merchant_id, member_id) DO UPDATE SET display_name = EXCLUDED.display_name, niche = EXCLUDED.niche,
  instagram_username = EXCLUDED.instagram_username, updated_at = now()
RETURNING `+creatorColumns+`, xmax = 0`, in.MerchantID, in.MemberID, in.DisplayName, in.Niche, in.InstagramUsername,
		creator.HashToken(token), creatorTokenColumn.seal(s.box, token, in.MerchantID, in.MemberID.String()))
	p = &creator.Profile{}
	var sealed []byte
	err = row.Scan(&p.MerchantID, &p.MemberID, &p.DisplayName, &p.Niche, &p.InstagramUsername, &sealed,
		&p.CreatedAt, &p.UpdatedAt, &created)
	if pgErrCode(err) == "23503" {
		return nil, false, apperr.Errorf(apperr.NotFound, "member not found")
	}
	if err != nil {
		return nil, false, err
	}
	if p.Token, err = creatorTokenColumn.open(s.box, sealed, p.MerchantID, p.MemberID.String()); err != nil {
		return nil, false, err
	}
	return p, created, nil
}

// FindCreator returns the member's creator profile (apperr.NotFound when it
// has none).
func (s *CreatorStore) FindCreator(ctx context.Context, merchantID, memberID uuid.UUID) (*creator.Profile, error) {
	return s.scanCreator(s.pool.QueryRow(ctx, `SELECT `+creatorColumns+` FROM creator_profiles
  WHERE merchant_id = $1 AND member_id = $2`, merchantID, memberID))
}

// FindCreatorByToken returns the profile whose token is token, of whichever
// merchant (apperr.NotFound for an unknown, rotated or deleted token).
func (s *CreatorStore) FindCreatorByToken(ctx context.Context, token string) (*creator.Profile, error) {
	return s.scanCreator(s.pool.QueryRow(ctx, `SELECT `+creatorColumns+` FROM creator_profiles
  WHERE token_hash = $1`, creator.HashToken(token)))
}

// RotateCreatorToken gives the profile a fresh token; the old one stops
// working at once. It returns the profile with its new token.
//
// It writes audit.CreatorTokenRotated (never the token) with the actor ctx
// carries, in the same transaction.
func (s *CreatorStore) RotateCreatorToken(ctx context.Context, merchantID, memberID uuid.UUID) (p *creator.Profile, err error) {
	token := creator.NewToken()
	err = InTx(ctx, s.pool, func(tx pgx.Tx) error {
		p, err = s.scanCreator(tx.QueryRow(ctx, `UPDATE creator_profiles SET token_hash = $3, token_enc = $4, updated_at = now()
  WHERE merchant_id = $1 AND member_id = $2 RETURNING `+creatorColumns,
			merchantID, memberID, creator.HashToken(token), creatorTokenColumn.seal(s.box, token, merchantID, memberID.String())))
		if err != nil {
			return err
		}
		return writeAudit(ctx, tx, merchantID, audit.CreatorTokenRotated, creatorTarget(memberID), nil)
	})
	if err != nil {
		return nil, err
	}
	return p, nil
}

// DeleteCreator deletes the profile; the member stays, and its token stops
// working at once. It writes audit.CreatorDeleted with the actor ctx
// carries, in the same transaction.
func (s *CreatorStore) DeleteCreator(ctx context.Context, merchantID, memberID uuid.UUID) error {
	return InTx(ctx, s.pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `DELETE FROM creator_profiles WHERE merchant_id = $1 AND member_id = $2`, merchantID, memberID)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return errCreatorNotFound
		}
		return writeAudit(ctx, tx, merchantID, audit.CreatorDeleted, creatorTarget(memberID), nil)
	})
}

// creatorTarget names a creator profile in the audit trail by its member.
func creatorTarget(memberID uuid.UUID) audit.Target {
	return audit.Target{Type: audit.TargetMember, ID: ids.Format(ids.Member, memberID)}
}

// CreatorFigures counts the member's sales: those neither rejected nor
// cancelled, ever and since monthStart, and the approved ones.
func (s *CreatorStore) CreatorFigures(ctx context.Context, merchantID, memberID uuid.UUID, monthStart time.Time) (creator.Figures, error) {
	var f creator.Figures
	err := s.pool.QueryRow(ctx, `SELECT
  count(*) FILTER (WHERE status IN ('pending', 'approved')),
  count(*) FILTER (WHERE status = 'approved'),
  count(*) FILTER (WHERE status IN ('pending', 'approved') AND created_at >= $3)
FROM referrals WHERE merchant_id = $1 AND member_id = $2`, merchantID, memberID, monthStart).
		Scan(&f.TotalSales, &f.ApprovedSales, &f.MonthSales)
	return f, err
}

// ListCreatorSales returns a page of the member's referrals, newest first
// (ties broken by id), and how many it has in all.
func (s *CreatorStore) ListCreatorSales(ctx context.Context, merchantID, memberID uuid.UUID, offset, limit int) ([]referral.Referral, int, error) {
	var total int
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM referrals WHERE merchant_id = $1 AND member_id = $2`,
		merchantID, memberID).Scan(&total); err != nil {
		return nil, 0, err
	}
	rows, err := s.pool.Query(ctx, `SELECT `+referralColumns+` FROM referrals r
  WHERE r.merchant_id = $1 AND r.member_id = $2 ORDER BY r.created_at DESC, r.id DESC OFFSET $3 LIMIT $4`,
		merchantID, memberID, offset, limit)
	if err != nil {
		return nil, 0, err
	}
	sales, err := pgx.CollectRows(rows, scanReferral)
	return sales, total, err
}

// ListCreators returns a page of the merchant's creator profiles by
// display name (their tokens left sealed: a list shows none), each with
// its member and its sales since monthStart as CreatorFigures counts them,
// and how many profiles the merchant has.
func (s *CreatorStore) ListCreators(ctx context.Context, merchantID uuid.UUID, monthStart time.Time, offset, limit int) ([]creator.Listed, int, error) {
	rows, err := s.pool.Query(ctx, `WITH page AS (
  SELECT c.merchant_id, c.member_id, count(*) OVER () AS total FROM creator_profiles c WHERE c.merchant_id = $1
  ORDER BY lower(c.display_name), c.member_id OFFSET $3 LIMIT $4
)
SELECT c.merchant_id, c.member_id, c.display_name, c.niche, c.instagram_username, c.created_at, c.updated_at,
  m.name, m.email, m.campaign_id, ms.n, page.total
FROM page
JOIN creator_profiles c ON c.merchant_id = page.merchant_id AND c.member_id = page.member_id
JOIN members m ON m.merchant_id = c.merchant_id AND m.id = c.member_id
CROSS JOIN LATERAL (SELECT count(*) AS n FROM referrals r WHERE r.merchant_id = c.merchant_id
  AND r.member_id = c.member_id AND r.created_at >= $2 AND r.status IN ('pending', 'approved')) ms
ORDER BY lower(c.display_name), c.member_id`, merchantID, monthStart, offset, limit)
	if err != nil {
		return nil, 0, err
	}
	total := 0
	list, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (creator.Listed, error) {
		var l creator.Listed
		err := row.Scan(&l.MerchantID, &l.MemberID, &l.DisplayName, &l.Niche, &l.InstagramUsername, &l.CreatedAt,
			&l.UpdatedAt, &l.MemberName, &l.MemberEmail, &l.CampaignID, &l.MonthSales, &total)
		return l, err
	})
	if err != nil {
		return nil, 0, err
	}
	if len(list) == 0 && offset > 0 {
		err = s.pool.QueryRow(ctx, `SELECT count(*) FROM creator_profiles WHERE merchant_id = $1`, merchantID).Scan(&total)
	}
	return list, total, err
}
