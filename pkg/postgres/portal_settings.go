package postgres

import (
	"context"
	"errors"
	"slices"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/convida/convida/pkg/audit"
	"github.com/convida/convida/pkg/portalaccess"
)

// PortalSettings keeps each merchant's portal settings (portal_settings,
// migration 00030; portalaccess.SettingsStore).
type PortalSettings struct {
	pool *pgxpool.Pool
}

var _ portalaccess.SettingsStore = (*PortalSettings)(nil)

// NewPortalSettings returns a PortalSettings.
func NewPortalSettings(pool *pgxpool.Pool) *PortalSettings { return &PortalSettings{pool: pool} }

// PortalSettings returns the merchant's settings, the defaults when it
// has none.
func (s *PortalSettings) PortalSettings(ctx context.Context, merchantID uuid.UUID) (portalaccess.Settings, error) {
	return readPortalSettings(ctx, s.pool, merchantID)
}

type rowQuerier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

func readPortalSettings(ctx context.Context, q rowQuerier, merchantID uuid.UUID) (portalaccess.Settings, error) {
	out := portalaccess.Defaults(merchantID)
	err := q.QueryRow(ctx, `SELECT enabled, embed_origins, brand_color, updated_at FROM portal_settings
  WHERE merchant_id = $1`, merchantID).Scan(&out.Enabled, &out.EmbedOrigins, &out.BrandColor, &out.UpdatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return portalaccess.Defaults(merchantID), nil
	}
	return out, err
}

// SavePortalSettings replaces the merchant's settings with in (already
// normalized) and, when a field changed, writes portal_settings.updated
// naming the fields, by the actor of ctx, in the same transaction.
func (s *PortalSettings) SavePortalSettings(ctx context.Context, in portalaccess.Settings) (portalaccess.Settings, error) {
	out := in
	err := InTx(ctx, s.pool, func(tx pgx.Tx) error {
		// The row's lock orders two saves of one merchant: each names the
		// fields it changed from the one before.
		if _, err := tx.Exec(ctx, `INSERT INTO portal_settings (merchant_id, updated_at) VALUES ($1, $2)
  ON CONFLICT (merchant_id) DO NOTHING`, in.MerchantID, in.UpdatedAt); err != nil {
			return err
		}
		var before portalaccess.Settings
		if err := tx.QueryRow(ctx, `SELECT enabled, embed_origins, brand_color FROM portal_settings
  WHERE merchant_id = $1 FOR UPDATE`, in.MerchantID).Scan(&before.Enabled, &before.EmbedOrigins, &before.BrandColor); err != nil {
			return err
		}
		var changed []string
		if before.Enabled != in.Enabled {
			changed = append(changed, "enabled")
		}
		if !slices.Equal(before.EmbedOrigins, in.EmbedOrigins) {
			changed = append(changed, "embed_origins")
		}
		if before.BrandColor != in.BrandColor {
			changed = append(changed, "brand_color")
		}
		if err := tx.QueryRow(ctx, `UPDATE portal_settings SET enabled = $2, embed_origins = $3, brand_color = $4,
  updated_at = CASE WHEN $6 THEN $5 ELSE updated_at END WHERE merchant_id = $1 RETURNING updated_at`,
			in.MerchantID, in.Enabled, in.EmbedOrigins, in.BrandColor, in.UpdatedAt, len(changed) > 0).Scan(&out.UpdatedAt); err != nil {
			return err
		}
		if len(changed) == 0 {
			return nil
		}
		return writeAudit(ctx, tx, in.MerchantID, audit.PortalSettingsUpdated,
			audit.Target{Type: audit.TargetPortal, ID: "portal"}, audit.Fields(changed))
	})
	return out, err
}
