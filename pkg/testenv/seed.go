package testenv

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"os"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/convida/convida/pkg/audit"
	"github.com/convida/convida/pkg/campaign"
	"github.com/convida/convida/pkg/merchant"
	"github.com/convida/convida/pkg/postgres"
	"github.com/convida/convida/pkg/secretbox"
)

// The merchant every test gets unless it asks for another: MustMerchant
// fills a zero Name, StoreURL or DashboardEmail with these.
const (
	MerchantName   = "Loja Exemplo" // code prefix LOJ
	StoreURL       = "https://loja.example.com"
	DashboardEmail = "owner@loja.example.com"
)

// MustBox returns a secrets box on a fresh random key. A test that reads
// integration secrets back must use the box the service under test uses.
// SeedContext is the context the seeding helpers write under: the audit
// events they write are stamped at Now(tb), which in a pinned run is the
// pinned instant itself, before anything a test's Clock (started there and
// running since) stamps.
func SeedContext(tb testing.TB) context.Context {
	tb.Helper()
	at := Now(tb)
	if os.Getenv(NowEnv) == "" {
		return context.Background()
	}
	return audit.WithClock(context.Background(), func() time.Time { return at })
}

func MustBox(tb testing.TB) *secretbox.Box {
	tb.Helper()
	box, err := secretbox.FromBase64(secretbox.NewKey())
	if err != nil {
		tb.Fatalf("testenv: secretbox: %v", err)
	}
	return box
}

// SealLegacy seals plaintext under key (base64) as the secretbox did before
// key ids (nonce ‖ ciphertext, no additional data): what a database of an
// earlier version holds, which must still open.
func SealLegacy(tb testing.TB, key, plaintext string) []byte {
	tb.Helper()
	raw, err := base64.StdEncoding.DecodeString(key)
	if err != nil {
		tb.Fatalf("testenv: SealLegacy: %v", err)
	}
	block, err := aes.NewCipher(raw)
	if err != nil {
		tb.Fatalf("testenv: SealLegacy: %v", err)
	}
	gcm, err := cipher.NewGCM(block)
	if err != nil {
		tb.Fatalf("testenv: SealLegacy: %v", err)
	}
	nonce := make([]byte, gcm.NonceSize())
	_, _ = rand.Read(nonce)
	return gcm.Seal(nonce, nonce, []byte(plaintext), nil)
}

// MustMerchant creates a merchant row from m, as `merchant create` would,
// and returns it as stored (ID, CodePrefix and ReferralParam filled). A
// zero Name, StoreURL or DashboardEmail takes the default above; non-zero
// rate limits are written as the merchant's own; each integration is saved
// through PutIntegration, encrypted with box (which may be nil when there
// are none).
func MustMerchant(tb testing.TB, pool *pgxpool.Pool, box *secretbox.Box, m merchant.Merchant, integrations ...merchant.Integration) *merchant.Merchant {
	tb.Helper()
	return mustMerchant(tb, SeedContext(tb), pool, box, m, integrations...)
}

func mustMerchant(tb testing.TB, ctx context.Context, pool *pgxpool.Pool, box *secretbox.Box, m merchant.Merchant, integrations ...merchant.Integration) *merchant.Merchant {
	tb.Helper()
	if m.Name == "" {
		m.Name = MerchantName
	}
	if m.StoreURL == "" {
		m.StoreURL = StoreURL
	}
	if m.DashboardEmail == "" {
		m.DashboardEmail = DashboardEmail
	}
	store := postgres.NewMerchantStore(pool, box)
	if err := store.CreateMerchant(ctx, &m, "pw"); err != nil {
		tb.Fatalf("testenv: CreateMerchant: %v", err)
	}
	if m.RateLimitPerSecond != 0 || m.RateLimitBurst != 0 {
		// No store method sets them: an operator does, in SQL.
		if _, err := pool.Exec(ctx, `UPDATE merchants SET rate_limit_per_second = NULLIF($2, 0),
  rate_limit_burst = NULLIF($3, 0) WHERE id = $1`, m.ID, m.RateLimitPerSecond, m.RateLimitBurst); err != nil {
			tb.Fatalf("testenv: set the rate limit: %v", err)
		}
	}
	for _, in := range integrations {
		if box == nil {
			tb.Fatalf("testenv: MustMerchant needs a box to save the %s integration", in.Provider)
		}
		if _, err := store.PutIntegration(ctx, m.ID, in); err != nil {
			tb.Fatalf("testenv: PutIntegration %s: %v", in.Provider, err)
		}
	}
	return &m
}

// MustKey issues an API key for the merchant and returns it in plain text.
func MustKey(tb testing.TB, pool *pgxpool.Pool, merchantID uuid.UUID) string {
	tb.Helper()
	return mustKey(tb, SeedContext(tb), pool, merchantID)
}

func mustKey(tb testing.TB, ctx context.Context, pool *pgxpool.Pool, merchantID uuid.UUID) string {
	tb.Helper()
	key, _, err := postgres.NewMerchantStore(pool, nil).CreateKey(ctx, merchantID)
	if err != nil {
		tb.Fatalf("testenv: CreateKey: %v", err)
	}
	return key
}

// Tenant is a merchant with one API key.
type Tenant struct {
	Merchant *merchant.Merchant
	Key      string // the plain key, for X-API-Key
}

// MustTenant creates a merchant as MustMerchant does and one API key for it.
func MustTenant(tb testing.TB, pool *pgxpool.Pool, box *secretbox.Box, m merchant.Merchant, integrations ...merchant.Integration) Tenant {
	tb.Helper()
	return MustTenantOn(tb, nil, pool, box, m, integrations...)
}

// MustTenantOn is MustTenant with the audit events it writes stamped on
// now, the clock of the service the test runs (nil: as MustTenant).
func MustTenantOn(tb testing.TB, now func() time.Time, pool *pgxpool.Pool, box *secretbox.Box, m merchant.Merchant, integrations ...merchant.Integration) Tenant {
	tb.Helper()
	ctx := SeedContext(tb)
	if now != nil {
		ctx = audit.WithClock(context.Background(), now)
	}
	mer := mustMerchant(tb, ctx, pool, box, m, integrations...)
	return Tenant{Merchant: mer, Key: mustKey(tb, ctx, pool, mer.ID)}
}

// MustCampaign creates c for the merchant and returns it as stored.
func MustCampaign(tb testing.TB, pool *pgxpool.Pool, merchantID uuid.UUID, c campaign.Campaign) *campaign.Campaign {
	tb.Helper()
	c.MerchantID = merchantID
	if err := postgres.NewCampaignStore(pool).CreateCampaign(SeedContext(tb), &c); err != nil {
		tb.Fatalf("testenv: CreateCampaign: %v", err)
	}
	return &c
}

// FixedCampaign is an active campaign named "Fixo" that pays reward cents
// per attributed sale, released warrantyDays after the sale.
func FixedCampaign(reward int64, warrantyDays int) campaign.Campaign {
	return campaign.Campaign{Name: "Fixo", RewardType: campaign.RewardFixed, RewardValue: reward,
		WarrantyDays: warrantyDays, IsActive: true}
}
