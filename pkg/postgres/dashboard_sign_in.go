package postgres

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/audit"
	"github.com/convida/convida/pkg/merchant"
)

// FindUsersByEmail returns every user of an e-mail (any case), of
// whichever merchant, oldest first: the sign-in compares the password
// with each, and offers the merchants whose password matched.
func (s *DashboardUserStore) FindUsersByEmail(ctx context.Context, email string) ([]merchant.DashboardUser, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+dashboardUserColumns+`
  FROM dashboard_users WHERE lower(email) = lower($1) ORDER BY created_at, merchant_id`, strings.TrimSpace(email))
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (merchant.DashboardUser, error) {
		u, err := scanDashboardUser(row)
		if err != nil {
			return merchant.DashboardUser{}, err
		}
		return *u, nil
	})
}

// The classes of the two-key advisory locks of sign-in attempts, one per
// kind of key; the two-key space does not overlap the one-key locks of
// the scheduler's leader and the migrations.
const (
	lockSignInEmail  int32 = 0x73696765 // "sige"
	lockSignInClient int32 = 0x73696763 // "sigc"
)

// ClaimSignInAttempt records an attempt to check a password of email from
// clientKey at now, unless the limits refuse it (merchant.SignInLimits):
// then apperr.RateLimited. The attempts that count are the failures and
// the attempts still being checked. The address's own count refuses
// alone; the e-mail's count refuses only together with a failure of the
// same e-mail from the same address, so a clean address is never locked
// out of an e-mail however many others guess it.
//
// It runs under transaction-scoped advisory locks on the e-mail and then
// the client key (always in that order, so that no two claims deadlock),
// so concurrent claims on every API replica count each other: however
// many arrive at once, no limit is passed. The caller forgets the attempt
// when the password was right (ForgetSignInAttempt); otherwise it stays,
// as a failure.
func (s *DashboardUserStore) ClaimSignInAttempt(ctx context.Context, email, clientKey string, now time.Time, limits merchant.SignInLimits) (int64, error) {
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
  WHERE (SELECT count(*) FROM dashboard_sign_in_attempts WHERE client_key = $2 AND at > $4) < $5
    AND ((SELECT count(*) FROM dashboard_sign_in_attempts WHERE email = $1 AND at > $6) < $7
      OR NOT EXISTS (SELECT FROM dashboard_sign_in_attempts WHERE email = $1 AND client_key = $2 AND at > $8))
  RETURNING id`, email, clientKey, now,
			now.Add(-limits.AddressWindow), limits.PerAddress,
			now.Add(-limits.EmailWindow), limits.PerEmail,
			now.Add(-limits.Tainted)).Scan(&id)
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

// RecordSignIn writes the sign_in.succeeded event of the user u, by the
// actor ctx carries (the user, whose password was right), with details
// (nil for none). A sign-in changes no row of its own here (the session
// is the session store's), so the event is written alone.
func (s *DashboardUserStore) RecordSignIn(ctx context.Context, u *merchant.DashboardUser, details map[string]any) error {
	return InTx(ctx, s.pool, func(tx pgx.Tx) error {
		return writeAudit(ctx, tx, u.MerchantID, audit.SignInSucceeded, userTarget(u.ID), details)
	})
}

// RecordFailedSignIn writes sign_in.failed in the trail of each user's
// merchant (the users of the e-mail tried, whose passwords all failed),
// each naming its own user as the target: by an anonymous actor from the
// address ctx carries (whoever typed the e-mail is not known to be the
// user), with the e-mail tried as merchant.EmailDigest, never in clear.
func (s *DashboardUserStore) RecordFailedSignIn(ctx context.Context, users []merchant.DashboardUser, emailDigest string) error {
	if len(users) == 0 {
		return nil
	}
	_, ip := audit.ActorFrom(ctx)
	ctx = audit.WithActor(ctx, audit.Anonymous, ip)
	return InTx(ctx, s.pool, func(tx pgx.Tx) error {
		for _, u := range users {
			if err := writeAudit(ctx, tx, u.MerchantID, audit.SignInFailed, userTarget(u.ID),
				map[string]any{"email_sha256": emailDigest}); err != nil {
				return err
			}
		}
		return nil
	})
}
