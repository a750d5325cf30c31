package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"golang.org/x/crypto/bcrypt"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/merchant"
	"github.com/convida/convida/pkg/secretbox"
)

// MerchantStore keeps merchants, their API keys and integration settings.
type MerchantStore struct {
	pool *pgxpool.Pool
	box  *secretbox.Box
}

// NewMerchantStore returns a MerchantStore sealing secrets with box.
func NewMerchantStore(pool *pgxpool.Pool, box *secretbox.Box) *MerchantStore {
	return &MerchantStore{pool: pool, box: box}
}

// CreateMerchant stores a new merchant with a bcrypt hash of its dashboard
// password. Empty CodePrefix and ReferralParam get their defaults.
func (s *MerchantStore) CreateMerchant(ctx context.Context, m *merchant.Merchant, password string) error {
	hash, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.DefaultCost)
	if err != nil {
		return err
	}
	if m.ID == uuid.Nil {
		m.ID = uuid.New()
	}
	if m.CodePrefix == "" {
		m.CodePrefix = merchant.DefaultCodePrefix(m.Name)
	}
	if m.ReferralParam == "" {
		m.ReferralParam = "cupom"
	}
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, `INSERT INTO merchants (id, name, store_url, code_prefix, referral_param,
  dashboard_email, dashboard_password_hash) VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING created_at`,
			m.ID, m.Name, m.StoreURL, m.CodePrefix, m.ReferralParam, m.DashboardEmail, string(hash)).Scan(&m.CreatedAt); err != nil {
			return err
		}
		// The dashboard login is the merchant's first owner. An e-mail that
		// already signs in to another merchant keeps that one (the sign-in
		// form asks for no merchant), so this merchant then has no owner
		// until one is invited.
		_, err := tx.Exec(ctx, `INSERT INTO dashboard_users (merchant_id, id, email, password_hash, role)
  SELECT $1, $2, $3, $4, 'owner' WHERE $3 <> '' ON CONFLICT DO NOTHING`,
			m.ID, uuid.New(), m.DashboardEmail, string(hash))
		return err
	})
}

// FindMerchantByID returns the merchant, or apperr.NotFound.
func (s *MerchantStore) FindMerchantByID(ctx context.Context, id uuid.UUID) (*merchant.Merchant, error) {
	m := &merchant.Merchant{}
	var perSecond, burst *int
	err := s.pool.QueryRow(ctx, `SELECT id, name, store_url, code_prefix, referral_param, dashboard_email,
  rate_limit_per_second, rate_limit_burst, created_at FROM merchants WHERE id = $1`, id).Scan(
		&m.ID, &m.Name, &m.StoreURL, &m.CodePrefix, &m.ReferralParam, &m.DashboardEmail, &perSecond, &burst, &m.CreatedAt)
	if err != nil {
		return nil, notFound(err, "merchant not found")
	}
	if perSecond != nil {
		m.RateLimitPerSecond = *perSecond
	}
	if burst != nil {
		m.RateLimitBurst = *burst
	}
	return m, nil
}

// CreateKey issues a new API key for the merchant and returns it in plain
// text: the only time it is ever available.
func (s *MerchantStore) CreateKey(ctx context.Context, merchantID uuid.UUID) (string, *merchant.Key, error) {
	plain, hash, prefix := merchant.NewKey()
	k := &merchant.Key{ID: uuid.New(), MerchantID: merchantID, Prefix: prefix}
	err := s.pool.QueryRow(ctx, `INSERT INTO api_keys (merchant_id, id, key_hash, prefix) VALUES ($1, $2, $3, $4)
  RETURNING created_at`, merchantID, k.ID, hash, prefix).Scan(&k.CreatedAt)
	if err != nil {
		if pgErrCode(err) == "23503" {
			return "", nil, apperr.Errorf(apperr.NotFound, "merchant not found")
		}
		return "", nil, err
	}
	return plain, k, nil
}

// RevokeKey revokes the merchant's unrevoked keys whose prefix is prefix and
// returns how many it revoked (apperr.NotFound when none).
func (s *MerchantStore) RevokeKey(ctx context.Context, merchantID uuid.UUID, prefix string) (int64, error) {
	tag, err := s.pool.Exec(ctx, `UPDATE api_keys SET revoked_at = now()
  WHERE merchant_id = $1 AND prefix = $2 AND revoked_at IS NULL`, merchantID, prefix)
	if err != nil {
		return 0, err
	}
	if tag.RowsAffected() == 0 {
		return 0, apperr.Errorf(apperr.NotFound, "no active key with that prefix")
	}
	return tag.RowsAffected(), nil
}

// RevokeKeyByID revokes one of the merchant's keys; apperr.NotFound when
// the merchant has no unrevoked key of that id.
func (s *MerchantStore) RevokeKeyByID(ctx context.Context, merchantID, id uuid.UUID) error {
	tag, err := s.pool.Exec(ctx, `UPDATE api_keys SET revoked_at = now()
  WHERE merchant_id = $1 AND id = $2 AND revoked_at IS NULL`, merchantID, id)
	if err == nil && tag.RowsAffected() == 0 {
		return apperr.Errorf(apperr.NotFound, "no active key with that id")
	}
	return err
}

// ListKeys returns the merchant's API keys, revoked ones included, oldest
// first: never a key, only its prefix and dates. A merchant without keys,
// or that does not exist, has none.
func (s *MerchantStore) ListKeys(ctx context.Context, merchantID uuid.UUID) ([]merchant.Key, error) {
	rows, err := s.pool.Query(ctx, `SELECT id, prefix, created_at, last_used_at, revoked_at FROM api_keys
  WHERE merchant_id = $1 ORDER BY created_at, id`, merchantID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var keys []merchant.Key
	for rows.Next() {
		k := merchant.Key{MerchantID: merchantID}
		var lastUsed, revoked *time.Time
		if err := rows.Scan(&k.ID, &k.Prefix, &k.CreatedAt, &lastUsed, &revoked); err != nil {
			return nil, err
		}
		if lastUsed != nil {
			k.LastUsedAt = *lastUsed
		}
		if revoked != nil {
			k.RevokedAt = *revoked
		}
		keys = append(keys, k)
	}
	return keys, rows.Err()
}

// Authenticate returns the merchant of a presented key, or
// apperr.Unauthorized for an unknown or revoked key. The lookup is an index
// probe on the key's SHA-256, so its timing reveals nothing of the key.
func (s *MerchantStore) Authenticate(ctx context.Context, plain string) (uuid.UUID, error) {
	var merchantID, keyID uuid.UUID
	var lastUsed *time.Time
	err := s.pool.QueryRow(ctx, `SELECT merchant_id, id, last_used_at FROM api_keys
  WHERE key_hash = $1 AND revoked_at IS NULL`, merchant.HashKey(plain)).Scan(&merchantID, &keyID, &lastUsed)
	if errors.Is(err, pgx.ErrNoRows) {
		return uuid.Nil, apperr.Errorf(apperr.Unauthorized, "missing or invalid API key")
	}
	if err != nil {
		return uuid.Nil, err
	}
	// last_used_at is a hint for operators; one write a minute is enough.
	if lastUsed == nil || time.Since(*lastUsed) > time.Minute {
		_, _ = s.pool.Exec(ctx, `UPDATE api_keys SET last_used_at = now() WHERE merchant_id = $1 AND id = $2`, merchantID, keyID)
	}
	return merchantID, nil
}

// PutIntegration replaces the merchant's settings for in.Provider; empty
// fields keep their stored value (the secrets are write-only). The
// members' coupons at the platform that were not configured or failed are
// asked for again in the same transaction: new credentials may be what
// they lacked.
func (s *MerchantStore) PutIntegration(ctx context.Context, merchantID uuid.UUID, in merchant.Integration) (*merchant.Integration, error) {
	err := InTx(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `
INSERT INTO integration_settings (merchant_id, provider, account_token_enc, webhook_secret_enc, user_token_enc,
  user_secret_key_enc, store_alias, api_url)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
ON CONFLICT (merchant_id, provider) DO UPDATE SET
  account_token_enc = COALESCE(EXCLUDED.account_token_enc, integration_settings.account_token_enc),
  webhook_secret_enc = COALESCE(EXCLUDED.webhook_secret_enc, integration_settings.webhook_secret_enc),
  user_token_enc = COALESCE(EXCLUDED.user_token_enc, integration_settings.user_token_enc),
  user_secret_key_enc = COALESCE(EXCLUDED.user_secret_key_enc, integration_settings.user_secret_key_enc),
  store_alias = COALESCE(NULLIF(EXCLUDED.store_alias, ''), integration_settings.store_alias),
  api_url = COALESCE(NULLIF(EXCLUDED.api_url, ''), integration_settings.api_url),
  updated_at = now()`,
			merchantID, in.Provider, accountTokenColumn.seal(s.box, in.AccountToken, merchantID, in.Provider),
			webhookSecretColumn.seal(s.box, in.WebhookSecret, merchantID, in.Provider),
			userTokenColumn.seal(s.box, in.UserToken, merchantID, in.Provider),
			userSecretKeyColumn.seal(s.box, in.UserSecretKey, merchantID, in.Provider), in.StoreAlias, in.APIURL); err != nil {
			return err
		}
		return rewantCoupons(ctx, tx, merchantID, in.Provider)
	})
	if err != nil {
		return nil, err
	}
	return s.FindIntegration(ctx, merchantID, in.Provider)
}

// FindIntegration returns the merchant's settings for provider with the
// secrets decrypted, or apperr.NotFound when none were saved.
func (s *MerchantStore) FindIntegration(ctx context.Context, merchantID uuid.UUID, provider string) (*merchant.Integration, error) {
	var sealed [4][]byte
	in := &merchant.Integration{Provider: provider}
	err := s.pool.QueryRow(ctx, `SELECT account_token_enc, webhook_secret_enc, user_token_enc, user_secret_key_enc,
  store_alias, api_url, updated_at FROM integration_settings WHERE merchant_id = $1 AND provider = $2`,
		merchantID, provider).Scan(&sealed[0], &sealed[1], &sealed[2], &sealed[3], &in.StoreAlias, &in.APIURL, &in.UpdatedAt)
	if err != nil {
		return nil, notFound(err, "integration not configured")
	}
	targets := []*string{&in.AccountToken, &in.WebhookSecret, &in.UserToken, &in.UserSecretKey}
	columns := []sealedColumn{accountTokenColumn, webhookSecretColumn, userTokenColumn, userSecretKeyColumn}
	for i, t := range targets {
		if *t, err = columns[i].open(s.box, sealed[i], merchantID, provider); err != nil {
			return nil, err
		}
	}
	if in.APIURL == "" {
		in.APIURL = merchant.DefaultAPIURL(provider)
	}
	return in, nil
}
