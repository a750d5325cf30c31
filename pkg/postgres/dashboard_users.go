package postgres

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/audit"
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

// FindUserByEmail returns the merchant's user of an e-mail (any case), or
// apperr.NotFound. Another merchant's users are not looked at.
func (s *DashboardUserStore) FindUserByEmail(ctx context.Context, merchantID uuid.UUID, email string) (*merchant.DashboardUser, error) {
	u, err := scanDashboardUser(s.pool.QueryRow(ctx, `SELECT `+dashboardUserColumns+`
  FROM dashboard_users WHERE merchant_id = $1 AND lower(email) = lower($2)`, merchantID, email))
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
// version, which signs out every session signed in under the old one,
// with the password.changed event; it returns the new version
// (apperr.NotFound for no such user).
func (s *DashboardUserStore) SetPassword(ctx context.Context, merchantID, id uuid.UUID, hash string) (int64, error) {
	var version int64
	err := InTx(ctx, s.pool, func(tx pgx.Tx) error {
		err := tx.QueryRow(ctx, `UPDATE dashboard_users
  SET password_hash = $3, session_version = session_version + 1, updated_at = now()
  WHERE merchant_id = $1 AND id = $2 RETURNING session_version`, merchantID, id, hash).Scan(&version)
		if err != nil {
			return notFound(err, "dashboard user not found")
		}
		return writeAudit(ctx, tx, merchantID, audit.PasswordChanged, userTarget(id), nil)
	})
	return version, err
}

// userTarget is the audit target of a dashboard user.
func userTarget(id uuid.UUID) audit.Target {
	return audit.Target{Type: audit.TargetDashboardUser, ID: id.String()}
}

// SetRole gives the merchant's user role, writing
// dashboard_user.role_changed (from, to, the user's e-mail) when it is a
// change: apperr.NotFound for no such user, merchant.ErrLastOwner when it
// would demote the last owner.
func (s *DashboardUserStore) SetRole(ctx context.Context, merchantID, id uuid.UUID, role string) error {
	if !merchant.ValidRole(role) {
		return apperr.Errorf(apperr.Invalid, "role must be owner or viewer")
	}
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		from, err := keepAnOwner(ctx, tx, merchantID, id, role == merchant.RoleOwner)
		if err != nil || from == role {
			return err
		}
		var email string
		if err := tx.QueryRow(ctx, `UPDATE dashboard_users SET role = $3, updated_at = now()
  WHERE merchant_id = $1 AND id = $2 RETURNING email`, merchantID, id, role).Scan(&email); err != nil {
			return err
		}
		return writeAudit(ctx, tx, merchantID, audit.DashboardUserRoleChanged, userTarget(id),
			map[string]any{"from": from, "to": role, "email": email})
	})
}

// RemoveUser deletes the merchant's user, writing dashboard_user.removed
// (their e-mail and role): their sessions find no user at their next
// request and are signed out. apperr.NotFound for no such user,
// merchant.ErrLastOwner for the last owner.
func (s *DashboardUserStore) RemoveUser(ctx context.Context, merchantID, id uuid.UUID) error {
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := keepAnOwner(ctx, tx, merchantID, id, false); err != nil {
			return err
		}
		var email, role string
		if err := tx.QueryRow(ctx, `DELETE FROM dashboard_users WHERE merchant_id = $1 AND id = $2 RETURNING email, role`,
			merchantID, id).Scan(&email, &role); err != nil {
			return err
		}
		return writeAudit(ctx, tx, merchantID, audit.DashboardUserRemoved, userTarget(id),
			map[string]any{"email": email, "role": role})
	})
}

// keepAnOwner locks the merchant's owners (in id order, so that concurrent
// changes queue rather than deadlock) and the user id, and refuses with
// merchant.ErrLastOwner when id is the only owner and stays not one. Under
// the locks, two owners removing or demoting each other at once are
// serialized: the second sees one owner left. It returns the user's role.
func keepAnOwner(ctx context.Context, tx pgx.Tx, merchantID, id uuid.UUID, staysOwner bool) (string, error) {
	rows, err := tx.Query(ctx, `SELECT id FROM dashboard_users WHERE merchant_id = $1 AND role = 'owner'
  ORDER BY id FOR UPDATE`, merchantID)
	if err != nil {
		return "", err
	}
	owners, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
	if err != nil {
		return "", err
	}
	var role string
	if err := tx.QueryRow(ctx, `SELECT role FROM dashboard_users WHERE merchant_id = $1 AND id = $2 FOR UPDATE`,
		merchantID, id).Scan(&role); err != nil {
		return "", notFound(err, "dashboard user not found")
	}
	if role == merchant.RoleOwner && !staysOwner && len(owners) <= 1 {
		return "", merchant.ErrLastOwner
	}
	return role, nil
}

// CreateInvite stores an invitation whose token hashes to tokenHash, with
// its dashboard_user.invited event: the target is the user the invitation
// creates when accepted (AcceptInvite gives them the invitation's id), the
// details the e-mail and the role, never the token.
func (s *DashboardUserStore) CreateInvite(ctx context.Context, in *merchant.Invite, tokenHash []byte) error {
	if in.ID == uuid.Nil {
		in.ID = uuid.New()
	}
	return InTx(ctx, s.pool, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, `INSERT INTO dashboard_invites (merchant_id, id, email, role, token_hash, expires_at)
  VALUES ($1, $2, $3, $4, $5, $6) RETURNING created_at`,
			in.MerchantID, in.ID, in.Email, in.Role, tokenHash, in.ExpiresAt).Scan(&in.CreatedAt); err != nil {
			return err
		}
		return writeAudit(ctx, tx, in.MerchantID, audit.DashboardUserInvited, userTarget(in.ID),
			map[string]any{"email": in.Email, "role": in.Role})
	})
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

// CancelInvite deletes the merchant's pending invitation, with its
// dashboard_user.invitation_cancelled event (the e-mail and the role, the
// target the user it would have made): its link is not found from then
// on. apperr.NotFound when there is no such pending invitation (another
// merchant's, or already accepted).
func (s *DashboardUserStore) CancelInvite(ctx context.Context, merchantID, id uuid.UUID) error {
	return InTx(ctx, s.pool, func(tx pgx.Tx) error {
		var email, role string
		err := tx.QueryRow(ctx, `DELETE FROM dashboard_invites WHERE merchant_id = $1 AND id = $2 AND accepted_at IS NULL
  RETURNING email, role`, merchantID, id).Scan(&email, &role)
		if err != nil {
			return notFound(err, "invitation not found")
		}
		return writeAudit(ctx, tx, merchantID, audit.DashboardUserInvitationCancelled, userTarget(id),
			map[string]any{"email": email, "role": role})
	})
}

// AcceptInvite uses the invitation of a token once, creating its user
// (whose id is the invitation's) with the password hash: apperr.NotFound
// when the token is unknown, used, cancelled or expired, apperr.Conflict
// when the e-mail is already a user of the same merchant (a user of
// another merchant is no matter: each merchant has its own).
func (s *DashboardUserStore) AcceptInvite(ctx context.Context, tokenHash []byte, passwordHash string, now time.Time) (*merchant.DashboardUser, error) {
	var u *merchant.DashboardUser
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var in merchant.Invite
		err := tx.QueryRow(ctx, `UPDATE dashboard_invites SET accepted_at = $2
  WHERE token_hash = $1 AND accepted_at IS NULL AND expires_at > $2 RETURNING merchant_id, id, email, role`,
			tokenHash, now).Scan(&in.MerchantID, &in.ID, &in.Email, &in.Role)
		if err != nil {
			return notFound(err, "invitation not found or expired")
		}
		// The user is given the invitation's id: the audit trail's
		// dashboard_user.invited names the user it became.
		u, err = scanDashboardUser(tx.QueryRow(ctx, `INSERT INTO dashboard_users (merchant_id, id, email, password_hash, role)
  VALUES ($1, $2, $3, $4, $5) RETURNING `+dashboardUserColumns, in.MerchantID, in.ID, in.Email, passwordHash, in.Role))
		if isUniqueViolation(err, "") {
			return apperr.Errorf(apperr.Conflict, "the merchant already has a user with that e-mail")
		}
		return err
	})
	return u, err
}
