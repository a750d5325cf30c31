// Package backlog writes old rows in bulk into every table the retention
// sweep reads, one INSERT … SELECT generate_series per table (a million
// rows in seconds), for the sweep's tests and for cmd/bench's
// -retention-rows. It is test support: nothing in production imports it.
package backlog

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/convida/convida/pkg/provider"
	"github.com/convida/convida/pkg/retention"
)

// Buyer data of the referrals Seed writes.
const (
	BuyerName     = "Bruna Compradora"
	BuyerEmail    = "bruna.compradora@example.com"
	BuyerDocument = "529.982.247-25"
)

// Seed writes n rows dated at into each table the retention sweep reads:
// inbound deliveries, delivery-log attempts (of an inactive webhook
// endpoint it creates, so no dispatcher sends it anything), relayed outbox
// events, processed command ids, audit events, dashboard and portal
// sessions expiring at, portal links expiring at, sign-in attempts (the
// dashboard's and the portal's), and rejected referrals of memberID with a buyer's
// name, e-mail and document (Buyer*), whose reward counts in no wallet. The rows belong to merchantID, but for the sessions and
// sign-in attempts, which belong to no merchant. It returns the rows
// written per retention kind.
func Seed(ctx context.Context, pool *pgxpool.Pool, merchantID, memberID uuid.UUID, n int, at time.Time) (map[string]int, error) {
	webhookID := uuid.New()
	if _, err := pool.Exec(ctx, `INSERT INTO webhook_endpoints (merchant_id, id, url, events, is_active, secret_sealed,
  created_at, updated_at) VALUES ($1, $2, 'https://retention.example.com/hook', '{referral.created}', false, '\x00', $3, $3)`,
		merchantID, webhookID, at); err != nil {
		return nil, fmt.Errorf("backlog: webhook endpoint: %w", err)
	}
	// $1 merchant, $2 rows, $3 time, $4 the member, the endpoint or the
	// platform.
	common := []any{merchantID, n, at}
	for _, s := range []struct {
		kind, sql string
		args      []any
	}{
		{retention.InboundDeliveries, `INSERT INTO inbound_deliveries (merchant_id, id, provider, dedupe_key, outcome,
  http_status, body, received_at)
SELECT $1, gen_random_uuid(), $4::text, $4::text || ':retention-' || g || ':sale', 'accepted', 200, '\x7b7d', $3
FROM generate_series(1, $2) g`, append(common[:3:3], provider.Guru)},
		{retention.ReconciliationRuns, `INSERT INTO reconciliation_runs (merchant_id, id, provider, status, window_from,
  window_to, started_at, heartbeat_at, finished_at)
SELECT $1, gen_random_uuid(), $4, 'succeeded', $3::timestamptz - interval '72 hours', $3, $3, $3, $3 FROM generate_series(1, $2)`, append(common[:3:3], provider.Guru)},
		{retention.WebhookAttempts, `INSERT INTO webhook_attempts (merchant_id, id, webhook_id, event_id, event_type,
  status, attempt, response_status, created_at)
SELECT $1, gen_random_uuid(), $4, gen_random_uuid(), 'referral.created', 'success', 1, 200, $3
FROM generate_series(1, $2)`, append(common, webhookID)},
		{retention.Outbox, `INSERT INTO outbox (merchant_id, event_id, member_id, type, payload, created_at)
SELECT $1, gen_random_uuid(), $4, 'referral.created', '{"id":"evt_retention"}', $3 FROM generate_series(1, $2)`,
			append(common, memberID)},
		{retention.ProcessedCommands, `INSERT INTO processed_commands (merchant_id, command_id, member_id, kind, outcome,
  processed_at)
SELECT $1, 'retention:' || gen_random_uuid(), $4, 'credit_sale', 'applied', $3 FROM generate_series(1, $2)`,
			append(common, memberID)},
		{retention.AuditEvents, `INSERT INTO audit_events (merchant_id, id, action, actor_type, created_at)
SELECT $1, gen_random_uuid(), 'api_key.created', 'system', $3 FROM generate_series(1, $2)`, common},
		{retention.Sessions, `INSERT INTO sessions (token_hash, data, expiry)
SELECT encode(sha256(convert_to(gen_random_uuid()::text, 'UTF8')), 'hex'), '\x00', $2 FROM generate_series(1, $1)`, []any{n, at}},
		{retention.SignInAttempts, `INSERT INTO dashboard_sign_in_attempts (email, client_key, at)
SELECT 'retention@example.com', '192.0.2.1', $2 FROM generate_series(1, $1)`, []any{n, at}},
		{retention.PortalSessions, `INSERT INTO portal_sessions (token_hash, data, expiry)
SELECT encode(sha256(convert_to(gen_random_uuid()::text, 'UTF8')), 'hex'), '\x00', $2 FROM generate_series(1, $1)`, []any{n, at}},
		{retention.PortalTokens, `INSERT INTO portal_tokens (token_hash, kind, merchant_id, member_id, created_at, expires_at)
SELECT sha256(convert_to(gen_random_uuid()::text, 'UTF8')), 'session', $1, $4, $3, $3 FROM generate_series(1, $2)`,
			append(common, memberID)},
		{retention.PortalSignIns, `INSERT INTO portal_sign_in_attempts (email_hash, client_key, at)
SELECT encode(sha256('retention'::bytea), 'hex'), '192.0.2.1', $2 FROM generate_series(1, $1)`, []any{n, at}},
		{retention.BuyerData, `INSERT INTO referrals (merchant_id, id, member_id, source, order_id, referee_email,
  referee_name, referee_external_id, coupon_used, order_value, reward_amount, status, rejection_reason,
  warranty_expires_at, created_at, updated_at)
SELECT $1, gen_random_uuid(), $4, $5, 'retention-' || gen_random_uuid(), '` + BuyerEmail + `',
  '` + BuyerName + `', '` + BuyerDocument + `', 'RETENTION', 10000, 0, 'rejected', 'test_order', $3, $3, $3
FROM generate_series(1, $2)`, append(common, memberID, provider.Guru)},
	} {
		if _, err := pool.Exec(ctx, s.sql, s.args...); err != nil {
			return nil, fmt.Errorf("backlog: %s: %w", s.kind, err)
		}
	}
	counts := map[string]int{}
	for _, kind := range retention.Kinds() {
		counts[kind] = n
	}
	return counts, nil
}
