package postgres

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/merchant"
)

// DashboardUserStore keeps the dashboard's users, their invitations and the
// sign-in attempts that throttle password guessing.
type DashboardUserStore struct{ pool *pgxpool.Pool }

// NewDashboardUserStore returns a DashboardUserStore on pool.
func NewDashboardUserStore(pool *pgxpool.Pool) *DashboardUserStore {
	return &DashboardUserStore{pool: pool}
}

const dashboardUserColumns = `merchant_id, id, email, password_hash, role, session_version, created_at`

func scanDashboardUser(row pgx.Row) (*merchant.DashboardUser, error) {
	u := &merchant.DashboardUser{}
	err := row.Scan(&u.MerchantID, &u.ID, &u.Email, &u.PasswordHash, &u.Role, &u.SessionVersion, &u.CreatedAt)
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

// SetPassword replaces the user's password hash and bumps their session
// version, which signs out every session signed in under the old one; it
// returns the new version (apperr.NotFound for no such user).
func (s *DashboardUserStore) SetPassword(ctx context.Context, merchantID, id uuid.UUID, hash string) (int64, error) {
	var version int64
	err := s.pool.QueryRow(ctx, `UPDATE dashboard_users
  SET password_hash = $3, session_version = session_version + 1, updated_at = now()
  WHERE merchant_id = $1 AND id = $2 RETURNING session_version`, merchantID, id, hash).Scan(&version)
	return version, notFound(err, "dashboard user not found")
}

// SetRole gives the merchant's user role: apperr.NotFound for no such
// user, merchant.ErrLastOwner when it would demote the last owner.
func (s *DashboardUserStore) SetRole(ctx context.Context, merchantID, id uuid.UUID, role string) error {
	if !merchant.ValidRole(role) {
		return apperr.Errorf(apperr.Invalid, "role must be owner or viewer")
	}
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if err := keepAnOwner(ctx, tx, merchantID, id, role == merchant.RoleOwner); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `UPDATE dashboard_users SET role = $3, updated_at = now()
  WHERE merchant_id = $1 AND id = $2`, merchantID, id, role)
		return err
	})
}

// RemoveUser deletes the merchant's user: their sessions find no user at
// their next request and are signed out. apperr.NotFound for no such user,
// merchant.ErrLastOwner for the last owner.
func (s *DashboardUserStore) RemoveUser(ctx context.Context, merchantID, id uuid.UUID) error {
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if err := keepAnOwner(ctx, tx, merchantID, id, false); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `DELETE FROM dashboard_users WHERE merchant_id = $1 AND id = $2`, merchantID, id)
		return err
	})
}

// keepAnOwner locks the merchant's owners (in id order, so that concurrent
// changes queue rather than deadlock) and the user id, and refuses with
// merchant.ErrLastOwner when id is the only owner and stays not one. Under
// the locks, two owners removing or demoting each other at once are
// serialized: the second sees one owner left.
func keepAnOwner(ctx context.Context, tx pgx.Tx, merchantID, id uuid.UUID, staysOwner bool) error {
	rows, err := tx.Query(ctx, `SELECT id FROM dashboard_users WHERE merchant_id = $1 AND role = 'owner'
  ORDER BY id FOR UPDATE`, merchantID)
	if err != nil {
		return err
	}
	owners, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
	if err != nil {
		return err
	}
	var role string
	if err := tx.QueryRow(ctx, `SELECT role FROM dashboard_users WHERE merchant_id = $1 AND id = $2 FOR UPDATE`,
		merchantID, id).Scan(&role); err != nil {
		return notFound(err, "dashboard user not found")
	}
	if role == merchant.RoleOwner && !staysOwner && len(owners) <= 1 {
		return merchant.ErrLastOwner
	}
	return nil
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

// ListInvites returns the merchant's pending invitations (unaccepted,
// unexpired at now), oldest first.
func (s *DashboardUserStore) ListInvites(ctx context.Context, merchantID uuid.UUID, now time.Time) ([]merchant.Invite, error) {
	rows, err := s.pool.Query(ctx, `SELECT merchant_id, id, email, role, expires_at, created_at FROM dashboard_invites
  WHERE merchant_id = $1 AND accepted_at IS NULL AND expires_at > $2 ORDER BY created_at, id`, merchantID, now)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (merchant.Invite, error) {
		var in merchant.Invite
		err := row.Scan(&in.MerchantID, &in.ID, &in.Email, &in.Role, &in.ExpiresAt, &in.CreatedAt)
		return in, err
	})
}

// CancelInvite deletes the merchant's pending invitation: its link is not
// found from then on. apperr.NotFound when there is no such pending
// invitation (another merchant's, or already accepted).
func (s *DashboardUserStore) CancelInvite(ctx context.Context, merchantID, id uuid.UUID) error {
	tag, err := s.pool.Exec(ctx, `DELETE FROM dashboard_invites WHERE merchant_id = $1 AND id = $2 AND accepted_at IS NULL`,
		merchantID, id)
	if err == nil && tag.RowsAffected() == 0 {
		return apperr.Errorf(apperr.NotFound, "invitation not found")
	}
	return err
}

// AcceptInvite uses the invitation of a token once, creating its user with
// the password hash: apperr.NotFound when the token is unknown, used,
// cancelled or expired, apperr.Conflict when the e-mail already has a user.
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

// The classes of the two-key advisory locks of sign-in attempts, one per
// kind of key; the two-key space does not overlap the one-key locks of
// the scheduler's leader and the migrations.
const (
	lockSignInEmail  int32 = 0x73696765 // "sige"
	lockSignInClient int32 = 0x73696763 // "sigc"
)

// ClaimSignInAttempt records an attempt to check a password of email from
// clientKey at now, unless either already has limit attempts since since
// (failures, and attempts still being checked): then apperr.RateLimited.
// It runs under transaction-scoped advisory locks on the e-mail and then
// the client key (always in that order, so that no two claims deadlock),
// so concurrent claims on every API replica count each other: at most
// limit pass, however many arrive at once. The caller forgets the
// attempt when the password was right (ForgetSignInAttempt); otherwise it
// stays, as a failure.
func (s *DashboardUserStore) ClaimSignInAttempt(ctx context.Context, email, clientKey string, now, since time.Time, limit int) (int64, error) {
	email = strings.ToLower(strings.TrimSpace(email))
	var id int64
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, hashtext($2))`, lockSignInEmail, email); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, hashtext($2))`, lockSignInClient, clientKey); err != nil {
			return err
		}
		err := tx.QueryRow(ctx, `INSERT INTO dashboard_sign_in_attempts (email, client_key, at)
  SELECT $1, $2, $3
  WHERE (SELECT count(*) FROM dashboard_sign_in_attempts WHERE email = $1 AND at > $4) < $5
    AND (SELECT count(*) FROM dashboard_sign_in_attempts WHERE client_key = $2 AND at > $4) < $5
  RETURNING id`, email, clientKey, now, since, limit).Scan(&id)
		if errors.Is(err, pgx.ErrNoRows) {
			return apperr.Errorf(apperr.RateLimited, "too many failed sign-in attempts")
		}
		return err
	})
	return id, err
}

// ForgetSignInAttempt deletes a claimed attempt whose password was right:
// a success does not count against the e-mail or the address.
func (s *DashboardUserStore) ForgetSignInAttempt(ctx context.Context, id int64) error {
	_, err := s.pool.Exec(ctx, `DELETE FROM dashboard_sign_in_attempts WHERE id = $1`, id)
	return err
}
