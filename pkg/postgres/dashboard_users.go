package postgres

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/merchant"
)

// DashboardUserStore keeps the dashboard's users, their invitations and the
// failed sign-ins that throttle password guessing.
type DashboardUserStore struct{ pool *pgxpool.Pool }

// NewDashboardUserStore returns a DashboardUserStore on pool.
func NewDashboardUserStore(pool *pgxpool.Pool) *DashboardUserStore {
	return &DashboardUserStore{pool: pool}
}

const dashboardUserColumns = `merchant_id, id, email, password_hash, role, created_at`

func scanDashboardUser(row pgx.Row) (*merchant.DashboardUser, error) {
	u := &merchant.DashboardUser{}
	err := row.Scan(&u.MerchantID, &u.ID, &u.Email, &u.PasswordHash, &u.Role, &u.CreatedAt)
	return u, err
}

// FindUserByEmail returns the user of an e-mail (any case), or
// apperr.NotFound.
func (s *DashboardUserStore) FindUserByEmail(ctx context.Context, email string) (*merchant.DashboardUser, error) {
	u, err := scanDashboardUser(s.pool.QueryRow(ctx, `SELECT `+dashboardUserColumns+`
  FROM dashboard_users WHERE lower(email) = lower($1)`, email))
	if err != nil {
		return nil, notFound(err, "dashboard user not found")
	}
	return u, nil
}

// FindUser returns the merchant's user, or apperr.NotFound.
func (s *DashboardUserStore) FindUser(ctx context.Context, merchantID, id uuid.UUID) (*merchant.DashboardUser, error) {
	u, err := scanDashboardUser(s.pool.QueryRow(ctx, `SELECT `+dashboardUserColumns+`
  FROM dashboard_users WHERE merchant_id = $1 AND id = $2`, merchantID, id))
	if err != nil {
		return nil, notFound(err, "dashboard user not found")
	}
	return u, nil
}

// ListUsers returns the merchant's users, oldest first.
func (s *DashboardUserStore) ListUsers(ctx context.Context, merchantID uuid.UUID) ([]merchant.DashboardUser, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+dashboardUserColumns+`
  FROM dashboard_users WHERE merchant_id = $1 ORDER BY created_at, id`, merchantID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var users []merchant.DashboardUser
	for rows.Next() {
		u, err := scanDashboardUser(rows)
		if err != nil {
			return nil, err
		}
		users = append(users, *u)
	}
	return users, rows.Err()
}

// SetPassword replaces the user's password hash.
func (s *DashboardUserStore) SetPassword(ctx context.Context, merchantID, id uuid.UUID, hash string) error {
	tag, err := s.pool.Exec(ctx, `UPDATE dashboard_users SET password_hash = $3, updated_at = now()
  WHERE merchant_id = $1 AND id = $2`, merchantID, id, hash)
	if err == nil && tag.RowsAffected() == 0 {
		return apperr.Errorf(apperr.NotFound, "dashboard user not found")
	}
	return err
}

// CreateInvite stores an invitation whose token hashes to tokenHash.
func (s *DashboardUserStore) CreateInvite(ctx context.Context, in *merchant.Invite, tokenHash []byte) error {
	if in.ID == uuid.Nil {
		in.ID = uuid.New()
	}
	return s.pool.QueryRow(ctx, `INSERT INTO dashboard_invites (merchant_id, id, email, role, token_hash, expires_at)
  VALUES ($1, $2, $3, $4, $5, $6) RETURNING created_at`,
		in.MerchantID, in.ID, in.Email, in.Role, tokenHash, in.ExpiresAt).Scan(&in.CreatedAt)
}

// FindInvite returns the unaccepted, unexpired invitation of a token, or
// apperr.NotFound.
func (s *DashboardUserStore) FindInvite(ctx context.Context, tokenHash []byte, now time.Time) (*merchant.Invite, error) {
	in := &merchant.Invite{}
	err := s.pool.QueryRow(ctx, `SELECT merchant_id, id, email, role, expires_at, created_at FROM dashboard_invites
  WHERE token_hash = $1 AND accepted_at IS NULL AND expires_at > $2`, tokenHash, now).Scan(
		&in.MerchantID, &in.ID, &in.Email, &in.Role, &in.ExpiresAt, &in.CreatedAt)
	if err != nil {
		return nil, notFound(err, "invitation not found or expired")
	}
	return in, nil
}

// AcceptInvite uses the invitation of a token once, creating its user with
// the password hash: apperr.NotFound when the token is unknown, used or
// expired, apperr.Conflict when the e-mail already has a user.
func (s *DashboardUserStore) AcceptInvite(ctx context.Context, tokenHash []byte, passwordHash string, now time.Time) (*merchant.DashboardUser, error) {
	var u *merchant.DashboardUser
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var in merchant.Invite
		err := tx.QueryRow(ctx, `UPDATE dashboard_invites SET accepted_at = $2
  WHERE token_hash = $1 AND accepted_at IS NULL AND expires_at > $2 RETURNING merchant_id, email, role`,
			tokenHash, now).Scan(&in.MerchantID, &in.Email, &in.Role)
		if err != nil {
			return notFound(err, "invitation not found or expired")
		}
		u, err = scanDashboardUser(tx.QueryRow(ctx, `INSERT INTO dashboard_users (merchant_id, id, email, password_hash, role)
  VALUES ($1, $2, $3, $4, $5) RETURNING `+dashboardUserColumns, in.MerchantID, uuid.New(), in.Email, passwordHash, in.Role))
		if isUniqueViolation(err, "") {
			return apperr.Errorf(apperr.Conflict, "a user with that e-mail already exists")
		}
		return err
	})
	return u, err
}

// RecordSignInFailure counts one failed sign-in of email from clientIP.
func (s *DashboardUserStore) RecordSignInFailure(ctx context.Context, email, clientIP string, at time.Time) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO dashboard_sign_in_failures (email, client_ip, at) VALUES (lower($1), $2, $3)`,
		email, clientIP, at)
	return err
}

// SignInFailures returns the failed sign-ins since since for email and for
// clientIP, and forgets those older than since.
func (s *DashboardUserStore) SignInFailures(ctx context.Context, email, clientIP string, since time.Time) (byEmail, byIP int, err error) {
	if _, err := s.pool.Exec(ctx, `DELETE FROM dashboard_sign_in_failures WHERE at < $1`, since); err != nil {
		return 0, 0, err
	}
	err = s.pool.QueryRow(ctx, `SELECT
  (SELECT count(*) FROM dashboard_sign_in_failures WHERE email = lower($1) AND at >= $3),
  (SELECT count(*) FROM dashboard_sign_in_failures WHERE client_ip = $2 AND at >= $3)`,
		email, clientIP, since).Scan(&byEmail, &byIP)
	return byEmail, byIP, err
}
