package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/portalaccess"
)

// PortalTokens keeps the links into the member's portal (portal_tokens,
// migration 00030) by the SHA-256 of each token (portalaccess.Tokens).
type PortalTokens struct{ pool *pgxpool.Pool }

var _ portalaccess.Tokens = (*PortalTokens)(nil)

// NewPortalTokens returns a PortalTokens.
func NewPortalTokens(pool *pgxpool.Pool) *PortalTokens { return &PortalTokens{pool: pool} }

// CreateToken stores g under hash.
func (s *PortalTokens) CreateToken(ctx context.Context, g portalaccess.Grant, hash []byte) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO portal_tokens (token_hash, kind, merchant_id, member_id, return_url, locale,
  created_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
		hash, string(g.Kind), g.MerchantID, g.MemberID, g.ReturnURL, g.Locale, g.CreatedAt, g.ExpiresAt)
	return err
}

// UseToken returns the grant of a token of kind valid at now, marking a
// single-use one used in the same statement: of two requests with the
// same token, one gets the grant.
func (s *PortalTokens) UseToken(ctx context.Context, kind portalaccess.Kind, hash []byte, now time.Time) (*portalaccess.Grant, error) {
	g := portalaccess.Grant{Kind: kind}
	var err error
	if kind.SingleUse() {
		err = s.pool.QueryRow(ctx, `UPDATE portal_tokens SET used_at = $3
  WHERE token_hash = $1 AND kind = $2 AND used_at IS NULL AND expires_at > $3
  RETURNING merchant_id, member_id, return_url, locale, created_at, expires_at`, hash, string(kind), now).
			Scan(&g.MerchantID, &g.MemberID, &g.ReturnURL, &g.Locale, &g.CreatedAt, &g.ExpiresAt)
	} else {
		err = s.pool.QueryRow(ctx, `SELECT merchant_id, member_id, return_url, locale, created_at, expires_at
  FROM portal_tokens WHERE token_hash = $1 AND kind = $2 AND expires_at > $3`, hash, string(kind), now).
			Scan(&g.MerchantID, &g.MemberID, &g.ReturnURL, &g.Locale, &g.CreatedAt, &g.ExpiresAt)
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, apperr.Errorf(apperr.NotFound, "the link is unknown, expired or already used")
	}
	if err != nil {
		return nil, err
	}
	return &g, nil
}
