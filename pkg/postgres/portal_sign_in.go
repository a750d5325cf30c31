package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// PortalSignIns counts the e-mailed sign-in requests of the member's
// portal (portal_sign_in_attempts, migration 00030), per e-mail (by its
// digest) and per client address, across the API's replicas.
type PortalSignIns struct{ pool *pgxpool.Pool }

// NewPortalSignIns returns a PortalSignIns.
func NewPortalSignIns(pool *pgxpool.Pool) *PortalSignIns { return &PortalSignIns{pool: pool} }

// ClaimPortalSignIn records a request for emailHash from clientKey at now
// and reports true, unless the e-mail has had perEmail requests or the
// client perClient within window before now: then it records nothing and
// reports false. Two requests at the same instant may both pass a limit
// by one: a bound on mail, not on money.
func (s *PortalSignIns) ClaimPortalSignIn(ctx context.Context, emailHash, clientKey string, now time.Time,
	window time.Duration, perEmail, perClient int) (bool, error) {
	tag, err := s.pool.Exec(ctx, `INSERT INTO portal_sign_in_attempts (email_hash, client_key, at)
  SELECT $1, $2, $3
  WHERE (SELECT count(*) FROM portal_sign_in_attempts WHERE email_hash = $1 AND at > $4) < $5
    AND (SELECT count(*) FROM portal_sign_in_attempts WHERE client_key = $2 AND at > $4) < $6`,
		emailHash, clientKey, now, now.Add(-window), perEmail, perClient)
	if err != nil {
		return false, err
	}
	return tag.RowsAffected() == 1, nil
}
