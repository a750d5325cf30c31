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
	"github.com/convida/convida/pkg/audit"
	"github.com/convida/convida/pkg/merchant"
	"github.com/convida/convida/pkg/secretbox"
)

// MerchantStore keeps merchants, their API keys and integration settings.
type MerchantStore struct {
	pool *pgxpool.Pool
	box  *secretbox.Box
}

// The contracts the API and the dashboard share.
var (
	_ merchant.Finder           = (*MerchantStore)(nil)
	_ merchant.IntegrationStore = (*MerchantStore)(nil)
)

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
		// The dashboard login is the merchant's first owner, whether or not
		// the e-mail is a user of another merchant too: each merchant has
		// its own users, and the sign-in offers the e-mail's merchants.
		_, err := tx.Exec(ctx, `INSERT INTO dashboard_users (merchant_id, id, email, password_hash, role)
  SELECT $1, $2, $3, $4, 'owner' WHERE $3 <> ''`,
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
// text: the only time it is ever available. The key's api_key.created
// event (by the actor of ctx) is written with it.
func (s *MerchantStore) CreateKey(ctx context.Context, merchantID uuid.UUID) (string, *merchant.Key, error) {
	plain, hash, prefix := merchant.NewKey()
	k := &merchant.Key{ID: uuid.New(), MerchantID: merchantID, Prefix: prefix}
	err := InTx(ctx, s.pool, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, `INSERT INTO api_keys (merchant_id, id, key_hash, prefix) VALUES ($1, $2, $3, $4)
  RETURNING created_at`, merchantID, k.ID, hash, prefix).Scan(&k.CreatedAt); err != nil {
			return err
		}
		return writeAudit(ctx, tx, merchantID, audit.APIKeyCreated, keyTarget(k.ID), nil)
	})
	if err != nil {
		if pgErrCode(err) == "23503" {
			return "", nil, apperr.Errorf(apperr.NotFound, "merchant not found")
		}
		return "", nil, err
	}
	return plain, k, nil
}

// keyTarget is the audit target of an API key: its id, never the key.
func keyTarget(id uuid.UUID) audit.Target {
	return audit.Target{Type: audit.TargetAPIKey, ID: id.String()}
}

// RevokeKey revokes the merchant's unrevoked keys whose prefix is prefix and
// returns how many it revoked (apperr.NotFound when none), each with its
// api_key.revoked event.
func (s *MerchantStore) RevokeKey(ctx context.Context, merchantID uuid.UUID, prefix string) (int64, error) {
	var n int64
	err := InTx(ctx, s.pool, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `UPDATE api_keys SET revoked_at = now()
  WHERE merchant_id = $1 AND prefix = $2 AND revoked_at IS NULL RETURNING id`, merchantID, prefix)
		if err != nil {
			return err
		}
		revoked, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
		if err != nil {
			return err
		}
		if len(revoked) == 0 {
			return apperr.Errorf(apperr.NotFound, "no active key with that prefix")
		}
		for _, id := range revoked {
			if err := writeAudit(ctx, tx, merchantID, audit.APIKeyRevoked, keyTarget(id), nil); err != nil {
				return err
			}
		}
		n = int64(len(revoked))
		return nil
	})
	return n, err
}

// RevokeKeyByID revokes one of the merchant's keys, with its
// api_key.revoked event; apperr.NotFound when the merchant has no
// unrevoked key of that id.
func (s *MerchantStore) RevokeKeyByID(ctx context.Context, merchantID, id uuid.UUID) error {
	return InTx(ctx, s.pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE api_keys SET revoked_at = now()
  WHERE merchant_id = $1 AND id = $2 AND revoked_at IS NULL`, merchantID, id)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return apperr.Errorf(apperr.NotFound, "no active key with that id")
		}
		return writeAudit(ctx, tx, merchantID, audit.APIKeyRevoked, keyTarget(id), nil)
	})
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

// Authenticate returns the key a presented key is (its id, merchant and
// display prefix: never the key nor its hash), or apperr.Unauthorized for
// an unknown or revoked key. The lookup is an index probe on the key's
// SHA-256, so its timing reveals nothing of the key.
func (s *MerchantStore) Authenticate(ctx context.Context, plain string) (merchant.Key, error) {
	var k merchant.Key
	var lastUsed *time.Time
	err := s.pool.QueryRow(ctx, `SELECT merchant_id, id, prefix, last_used_at FROM api_keys
  WHERE key_hash = $1 AND revoked_at IS NULL`, merchant.HashKey(plain)).Scan(&k.MerchantID, &k.ID, &k.Prefix, &lastUsed)
	if errors.Is(err, pgx.ErrNoRows) {
		return merchant.Key{}, apperr.Errorf(apperr.Unauthorized, "missing or invalid API key")
	}
	if err != nil {
		return merchant.Key{}, err
	}
	// last_used_at is a hint for operators; one write a minute is enough.
	if lastUsed == nil || time.Since(*lastUsed) > time.Minute {
		_, _ = s.pool.Exec(ctx, `UPDATE api_keys SET last_used_at = now() WHERE merchant_id = $1 AND id = $2`, k.MerchantID, k.ID)
	}
	return k, nil
}

// PutIntegration saves in, cleaned by merchant.Integration.Clean, over
// the merchant's settings for in.Provider by merchant.Integration.Merge:
// empty fields keep their stored value (the secrets are write-only), and a
// new API URL or store alias drops the stored API credentials that in does
// not supply again. The row is read FOR UPDATE, merged and written in one
// transaction, so that concurrent saves apply one after the other. The
// members' coupons at the platform that were not configured or failed are
// asked for again in the same transaction: new credentials may be what
// they lacked.
func (s *MerchantStore) PutIntegration(ctx context.Context, merchantID uuid.UUID, in merchant.Integration) (*merchant.Integration, error) {
	err := InTx(ctx, s.pool, func(tx pgx.Tx) error {
		// An empty row first: two first saves then queue on its lock
		// rather than the second overwriting the first.
		if _, err := tx.Exec(ctx, `INSERT INTO integration_settings (merchant_id, provider) VALUES ($1, $2)
ON CONFLICT (merchant_id, provider) DO NOTHING`, merchantID, in.Provider); err != nil {
			return err
		}
		stored, err := s.scanIntegration(tx.QueryRow(ctx, sqlIntegration+` FOR UPDATE`, merchantID, in.Provider), merchantID, in.Provider)
		if err != nil {
			return err
		}
		saved := stored.Merge(in)
		seal := func(c sealedColumn, plain string) []byte { return c.seal(s.box, plain, merchantID, in.Provider) }
		if _, err := tx.Exec(ctx, `UPDATE integration_settings SET account_token_enc = $3, webhook_secret_enc = $4,
  user_token_enc = $5, user_secret_key_enc = $6, client_secret_enc = $7, basic_token_enc = $8, store_alias = $9,
  api_url = $10, client_id = $11, account_id = $12, auth_url = $13, checkout_url = $14, updated_at = now()
WHERE merchant_id = $1 AND provider = $2`,
			merchantID, in.Provider, seal(accountTokenColumn, saved.AccountToken), seal(webhookSecretColumn, saved.WebhookSecret),
			seal(userTokenColumn, saved.UserToken), seal(userSecretKeyColumn, saved.UserSecretKey),
			seal(clientSecretColumn, saved.ClientSecret), seal(basicTokenColumn, saved.BasicToken),
			saved.StoreAlias, saved.APIURL, saved.ClientID, saved.AccountID, saved.AuthURL, saved.CheckoutURL); err != nil {
			return err
		}
		// The event before rewantCoupons locks coupon rows (writeAudit).
		if fields := stored.Changes(saved); len(fields) > 0 {
			if err := writeAudit(ctx, tx, merchantID, audit.IntegrationUpdated,
				audit.Target{Type: audit.TargetIntegration, ID: in.Provider}, audit.Fields(fields)); err != nil {
				return err
			}
		}
		return rewantCoupons(ctx, tx, merchantID, in.Provider)
	})
	if err != nil {
		return nil, err
	}
	return s.FindIntegration(ctx, merchantID, in.Provider)
}

// sqlIntegration reads one integration_settings row by merchant and
// provider, in scanIntegration's order.
const sqlIntegration = `SELECT account_token_enc, webhook_secret_enc, user_token_enc, user_secret_key_enc,
  client_secret_enc, basic_token_enc, store_alias, api_url, client_id, account_id, auth_url, checkout_url, updated_at
FROM integration_settings WHERE merchant_id = $1 AND provider = $2`

// FindIntegration returns the merchant's settings for provider with the
// secrets decrypted, or apperr.NotFound when none were saved. An API or
// auth URL left empty reads as the provider's public one.
func (s *MerchantStore) FindIntegration(ctx context.Context, merchantID uuid.UUID, provider string) (*merchant.Integration, error) {
	in, err := s.scanIntegration(s.pool.QueryRow(ctx, sqlIntegration, merchantID, provider), merchantID, provider)
	if err != nil {
		return nil, notFound(err, "integration not configured")
	}
	in = in.WithDefaults()
	return &in, nil
}

// scanIntegration reads a row of sqlIntegration, the secrets decrypted
// and the API URL as stored.
func (s *MerchantStore) scanIntegration(row pgx.Row, merchantID uuid.UUID, provider string) (merchant.Integration, error) {
	var sealed [6][]byte
	in := merchant.Integration{Provider: provider}
	if err := row.Scan(&sealed[0], &sealed[1], &sealed[2], &sealed[3], &sealed[4], &sealed[5], &in.StoreAlias, &in.APIURL,
		&in.ClientID, &in.AccountID, &in.AuthURL, &in.CheckoutURL, &in.UpdatedAt); err != nil {
		return merchant.Integration{}, err
	}
	targets := []*string{&in.AccountToken, &in.WebhookSecret, &in.UserToken, &in.UserSecretKey, &in.ClientSecret, &in.BasicToken}
	columns := integrationColumns
	for i, t := range targets {
		var err error
		if *t, err = columns[i].open(s.box, sealed[i], merchantID, provider); err != nil {
			return merchant.Integration{}, err
		}
	}
	return in, nil
}
