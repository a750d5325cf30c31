package testenv

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/convida/convida/pkg/campaign"
	"github.com/convida/convida/pkg/creator"
	"github.com/convida/convida/pkg/merchant"
	"github.com/convida/convida/pkg/postgres"
	"github.com/convida/convida/pkg/provider"
	"github.com/convida/convida/pkg/secretbox"
)

// Scale describes a merchant's history for the dashboard's performance
// tests: how many members and referrals, over how many days before Now.
type Scale struct {
	Members   int
	Referrals int
	Days      int
	Now       time.Time
	// Box seals the creator tokens and webhook secrets; a fresh one when nil.
	Box *secretbox.Box
}

// DashboardScale is the scale issue 12 sets for the dashboard: 10,000
// members and 100,000 referrals over 120 days.
func DashboardScale(now time.Time) Scale {
	return Scale{Members: 10_000, Referrals: 100_000, Days: 120, Now: now}
}

// ScaleSeeded is what MustSeedScale made.
type ScaleSeeded struct {
	Merchant *merchant.Merchant
	Campaign *campaign.Campaign
	// Members in the order of their index: the first ones refer the most.
	Members []uuid.UUID
	// Now is the instant the history ends at (Scale.Now).
	Now time.Time
}

// The campaign of a scale seed: 10 % of the order value, 7 days of warranty.
const (
	scaleRewardPercent = 10
	scaleWarrantyDays  = 7
)

// MustSeedScale creates a merchant (with Guru configured, Yampi not) and
// its history at scale s, written straight into the tables in a few
// set-based statements (INSERT … SELECT FROM generate_series, unnest), not
// through the ledger: about ten seconds for DashboardScale where the API
// would take many minutes. The history is what the ledger would have
// written, and postgres.CheckLedger holds on it:
//
//   - members created before the range, a few inactive or blocked, the
//     referrals skewed towards the first members (a few refer hundreds);
//   - referrals spread uniformly over the Days before Now, order values of
//     R$ 10 to R$ 500; those still in warranty mostly pending, the others
//     mostly approved, about 6 % rejected and 6 % cancelled (while
//     pending), each with its public credit transaction and its credit,
//     release or cancel ledger entries;
//   - one redemption of half the released rewards for every member with
//     some, an hour after the member's last release, one in ten failed
//     (its money returned);
//   - wallets equal to the sum of their entries; 1 creator profile per 25
//     of the first 2,500 members; 2,000 inbound deliveries; two webhook
//     endpoints, one of them failing.
//
// The tables are vacuumed and analysed at the end, as autovacuum would
// have left them, so plans and index-only scans are those of production.
func MustSeedScale(tb testing.TB, pool *pgxpool.Pool, s Scale) ScaleSeeded {
	tb.Helper()
	ctx := context.Background()
	if s.Box == nil {
		s.Box = MustBox(tb)
	}
	if s.Now.IsZero() {
		s.Now = time.Now()
	}
	m := MustMerchant(tb, pool, s.Box, merchant.Merchant{},
		merchant.Integration{Provider: provider.Guru, AccountToken: "scale-account-token"})
	c := MustCampaign(tb, pool, m.ID, campaign.Campaign{Name: "Escala", RewardType: campaign.RewardPercentage,
		RewardValue: scaleRewardPercent, WarrantyDays: scaleWarrantyDays, IsActive: true})
	seeded := ScaleSeeded{Merchant: m, Campaign: c, Now: s.Now}
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if err := seedScaleHistory(ctx, tx, m, c.ID, s); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT id FROM scale_members ORDER BY i`)
		if err != nil {
			return err
		}
		if seeded.Members, err = pgx.CollectRows(rows, pgx.RowTo[uuid.UUID]); err != nil {
			return err
		}
		return seedScaleSecrets(ctx, tx, m.ID, seeded.Members, s)
	})
	if err != nil {
		tb.Fatalf("testenv: seed scale: %v", err)
	}
	if _, err := pool.Exec(ctx, `VACUUM (ANALYZE) members, referrals, ledger_entries, wallet_transactions, wallets,
  redemptions, creator_profiles, inbound_deliveries, webhook_endpoints, integration_settings`); err != nil {
		tb.Fatalf("testenv: vacuum after the scale seed: %v", err)
	}
	return seeded
}

// seedScaleHistory writes members, referrals, ledger entries, public
// transactions, redemptions, wallets and inbound deliveries in tx. Its
// temporary tables (scale_*) live until the commit.
func seedScaleHistory(ctx context.Context, tx pgx.Tx, m *merchant.Merchant, campaignID uuid.UUID, s Scale) error {
	warranty := fmt.Sprintf("%d days", scaleWarrantyDays)
	steps := []struct {
		what string
		sql  string
		args []any
	}{
		{"random seed", `SELECT setseed(0.42)`, nil},
		{"member indexes", `CREATE TEMP TABLE scale_members ON COMMIT DROP AS
SELECT i, gen_random_uuid() AS id,
  (ARRAY['Ana','Bruno','Carla','Diego','Elisa','Fabio','Gabriela','Heitor','Isabela','Joao',
         'Karina','Lucas','Marina','Nicolas','Olivia','Paulo','Queila','Rafael','Sofia','Thiago'])[1 + i % 20] AS first,
  (ARRAY['Almeida','Barbosa','Costa','Dias','Ferreira','Gomes','Lima','Martins','Nunes','Oliveira',
         'Pereira','Ribeiro','Santos','Souza','Teixeira','Vieira','Rocha','Moura','Cardoso','Freitas'])[1 + (i / 20) % 20] AS last,
  $1::timestamptz - make_interval(days => $2 + 1) - random() * interval '30 days' AS created_at
FROM generate_series(1, $3) i`, []any{s.Now, s.Days, s.Members}},
		{"members", `INSERT INTO members (merchant_id, id, email, name, coupon_code, campaign_id, status, created_at, updated_at)
SELECT $1, id, lower(first || '.' || last) || i || '@scale.example.com', first || ' ' || last,
  $2 || '-' || upper(first) || '-' || upper(to_hex(i)), $3,
  CASE WHEN i % 97 = 0 THEN 'blocked' WHEN i % 31 = 0 THEN 'inactive' ELSE 'active' END, created_at, created_at
FROM scale_members`, []any{m.ID, m.CodePrefix, campaignID}},
		// u decides the status, v the moment a rejection or cancellation
		// happened; power(random(), 2) skews referrals to the first members.
		{"referral draws", `CREATE TEMP TABLE scale_referrals ON COMMIT DROP AS
SELECT j, gen_random_uuid() AS id, sm.id AS member_id, x.created_at, x.order_value,
  x.order_value * $4 / 100 AS reward, gen_random_uuid() AS txn_id,
  CASE WHEN x.created_at + $5::interval > $1 THEN
         CASE WHEN x.u < 0.04 THEN 'rejected' WHEN x.u < 0.07 THEN 'cancelled' ELSE 'pending' END
       ELSE CASE WHEN x.u < 0.06 THEN 'rejected' WHEN x.u < 0.12 THEN 'cancelled' ELSE 'approved' END END AS status,
  x.v, x.u
FROM (SELECT j, $1::timestamptz - random() * make_interval(days => $2) AS created_at,
        1000 + floor(random() * 49000)::bigint AS order_value, random() AS u, random() AS v,
        1 + floor($6 * power(random(), 2))::int AS mi
      FROM generate_series(1, $3) j) x
JOIN scale_members sm ON sm.i = x.mi`, []any{s.Now, s.Days, s.Referrals, scaleRewardPercent, warranty, s.Members}},
		{"referral settlements", `ALTER TABLE scale_referrals ADD COLUMN settled_at timestamptz`, nil},
		{"referral settlement times", `UPDATE scale_referrals SET settled_at = CASE status
  WHEN 'approved' THEN created_at + $2::interval
  WHEN 'pending' THEN NULL
  ELSE created_at + v * least($2::interval, $1::timestamptz - created_at) END`, []any{s.Now, warranty}},
		{"referrals", `INSERT INTO referrals (merchant_id, id, member_id, source, order_id, referee_email, referee_name,
  coupon_used, order_value, reward_amount, status, rejection_reason, credit_txn_id, warranty_expires_at, created_at, updated_at)
SELECT $1, r.id, r.member_id, CASE WHEN r.j % 3 = 0 THEN '` + provider.Yampi + `' ELSE '` + provider.Guru + `' END, 'scale-' || r.j,
  'buyer' || r.j || '@example.net', 'Comprador ' || r.j, m.coupon_code, r.order_value, r.reward, r.status,
  CASE WHEN r.status = 'rejected' THEN 'fraud' ELSE '' END, r.txn_id, r.created_at + $2::interval,
  r.created_at, COALESCE(r.settled_at, r.created_at)
FROM scale_referrals r JOIN members m ON m.merchant_id = $1 AND m.id = r.member_id`, []any{m.ID, warranty}},
		{"redemption draws", `CREATE TEMP TABLE scale_redemptions ON COMMIT DROP AS
SELECT gen_random_uuid() AS id, member_id, sum(reward) / 2 AS amount, max(settled_at) + interval '1 hour' AS created_at,
  gen_random_uuid() AS entry_id, gen_random_uuid() AS txn_id, random() >= 0.1 AS completed,
  CASE WHEN random() < 0.5 THEN 'store_credit' ELSE 'subscription_discount' END AS type
FROM scale_referrals WHERE status = 'approved'
GROUP BY member_id HAVING sum(reward) >= 200 AND max(settled_at) + interval '1 hour' <= $1`, []any{s.Now}},
		{"redemptions", `INSERT INTO redemptions (merchant_id, id, member_id, amount, type, status, transaction_id, debit_txn_id,
  failure_reason, created_at, updated_at)
SELECT $1, id, member_id, amount, type, CASE WHEN completed THEN 'completed' ELSE 'failed' END, entry_id, txn_id,
  CASE WHEN completed THEN '' ELSE 'platform refused the coupon' END, created_at, created_at + interval '1 minute'
FROM scale_redemptions`, []any{m.ID}},
		// The ledger's entries of every move, in the order they happened
		// (seq breaks ties), with the running balances the ledger keeps.
		{"entry list", `CREATE TEMP TABLE scale_entries (
  seq bigserial, id uuid NOT NULL DEFAULT gen_random_uuid(), member_id uuid, type text, amount bigint,
  pd bigint, ad bigint, ref_type text, ref_id uuid, txn_id uuid, description text, created_at timestamptz
) ON COMMIT DROP`, nil},
		{"credit entries", `INSERT INTO scale_entries (member_id, type, amount, pd, ad, ref_type, ref_id, txn_id, description, created_at)
SELECT member_id, 'credit', reward, reward, 0, 'referral', id, txn_id, 'Referral reward for order scale-' || j, created_at
FROM scale_referrals ORDER BY created_at`, nil},
		{"release and cancel entries", `INSERT INTO scale_entries (member_id, type, amount, pd, ad, ref_type, ref_id, txn_id, description, created_at)
SELECT member_id, CASE WHEN status = 'approved' THEN 'release' ELSE 'cancel' END, reward, -reward,
  CASE WHEN status = 'approved' THEN reward ELSE 0 END, 'referral', id, txn_id,
  CASE WHEN status = 'approved' THEN 'Warranty released for order scale-' || j ELSE 'Refund of order scale-' || j END, settled_at
FROM scale_referrals WHERE status <> 'pending' ORDER BY settled_at`, nil},
		{"debit entries", `INSERT INTO scale_entries (id, member_id, type, amount, pd, ad, ref_type, ref_id, txn_id, description, created_at)
SELECT entry_id, member_id, 'debit', amount, 0, -amount, 'redemption', id, txn_id, 'Redemption: store coupon', created_at
FROM scale_redemptions`, nil},
		{"failed redemption entries", `INSERT INTO scale_entries (member_id, type, amount, pd, ad, ref_type, ref_id, txn_id, description, created_at)
SELECT member_id, 'cancel', amount, 0, amount, 'redemption', id, txn_id, 'Redemption failed: amount returned',
  created_at + interval '1 minute'
FROM scale_redemptions WHERE NOT completed`, nil},
		{"ledger entries", `INSERT INTO ledger_entries (merchant_id, id, member_id, type, amount, pending_delta, available_delta,
  pending_after, available_after, description, reference_type, reference_id, transaction_id, command_id, created_at)
SELECT $1, id, member_id, type, amount, pd, ad, sum(pd) OVER w, sum(ad) OVER w, description, ref_type, ref_id, txn_id,
  'seed:' || seq, created_at
FROM scale_entries WINDOW w AS (PARTITION BY member_id ORDER BY created_at, seq)`, []any{m.ID}},
		{"credit transactions", `INSERT INTO wallet_transactions (merchant_id, id, member_id, type, status, amount, description,
  reference_type, reference_id, created_at, updated_at)
SELECT $1, txn_id, member_id, 'credit',
  CASE status WHEN 'pending' THEN 'pending' WHEN 'approved' THEN 'available' ELSE 'cancelled' END,
  reward, 'Referral reward for order scale-' || j, 'referral', id, created_at, COALESCE(settled_at, created_at)
FROM scale_referrals`, []any{m.ID}},
		{"debit transactions", `INSERT INTO wallet_transactions (merchant_id, id, member_id, type, status, amount, description,
  reference_type, reference_id, created_at, updated_at)
SELECT $1, txn_id, member_id, 'debit', CASE WHEN completed THEN 'used' ELSE 'cancelled' END, amount,
  'Redemption: store coupon', 'redemption', id, created_at, created_at + interval '1 minute'
FROM scale_redemptions`, []any{m.ID}},
		{"wallets", `INSERT INTO wallets (merchant_id, member_id, pending, available, total_earned, total_redeemed, cancelled,
  version, updated_at)
SELECT $1, member_id, sum(pd), sum(ad),
  COALESCE(sum(amount) FILTER (WHERE type = 'credit'), 0) - COALESCE(sum(amount) FILTER (WHERE type = 'cancel' AND ref_type = 'referral'), 0),
  COALESCE(sum(amount) FILTER (WHERE type = 'debit'), 0) - COALESCE(sum(amount) FILTER (WHERE type = 'cancel' AND ref_type = 'redemption'), 0),
  COALESCE(sum(amount) FILTER (WHERE type = 'cancel' AND ref_type = 'referral'), 0),
  count(*), max(created_at)
FROM scale_entries GROUP BY member_id`, []any{m.ID}},
		// The counts the ledger keeps on the wallet (ledger.MemberStats), as
		// migration 00011 counts them.
		{"member stats", `UPDATE wallets w SET stats_month = date_trunc('month', $2::timestamptz, 'UTC'),
  month_sales = s.sales, month_reward = s.reward
FROM (
  SELECT r.member_id, count(*) AS sales, sum(r.reward_amount) AS reward
  FROM referrals r
  WHERE r.merchant_id = $1 AND r.created_at >= date_trunc('month', $2::timestamptz, 'UTC') AND r.status IN ('pending', 'approved')
  GROUP BY r.member_id
) s
WHERE w.merchant_id = $1 AND w.member_id = s.member_id`, []any{m.ID, s.Now}},
		{"recent referrals", `UPDATE wallets w SET recent_referrals = ARRAY(
  SELECT x.created_at FROM (
    SELECT r.created_at FROM referrals r
    WHERE r.merchant_id = w.merchant_id AND r.member_id = w.member_id AND r.created_at >= $2::timestamptz - interval '1 hour'
    ORDER BY r.created_at DESC LIMIT 64) x
  ORDER BY x.created_at)
WHERE w.merchant_id = $1 AND w.member_id IN (
  SELECT r.member_id FROM referrals r WHERE r.merchant_id = $1 AND r.created_at >= $2::timestamptz - interval '1 hour')`, []any{m.ID, s.Now}},
		{"inbound deliveries", `INSERT INTO inbound_deliveries (merchant_id, id, provider, dedupe_key, outcome, http_status, body, received_at)
SELECT $1, gen_random_uuid(), CASE WHEN k % 3 = 0 THEN '` + provider.Yampi + `' ELSE '` + provider.Guru + `' END, 'scale:' || k || ':sale',
  CASE WHEN k % 50 = 0 THEN 'unauthorized' WHEN k % 10 = 0 THEN 'unattributed' ELSE 'accepted' END,
  CASE WHEN k % 50 = 0 THEN 401 ELSE 200 END, convert_to('{"id":"scale-' || k || '"}', 'UTF8'),
  $2::timestamptz - k * interval '1 minute'
FROM generate_series(1, 2000) k`, []any{m.ID, s.Now}},
	}
	for _, st := range steps {
		if _, err := tx.Exec(ctx, st.sql, st.args...); err != nil {
			return fmt.Errorf("%s: %w", st.what, err)
		}
	}
	return nil
}

// seedScaleSecrets writes what needs a secret sealed by s.Box: the creator
// profiles (1 per 25 of the first 2,500 members) and two webhook endpoints,
// one failing for two hours.
func seedScaleSecrets(ctx context.Context, tx pgx.Tx, merchantID uuid.UUID, members []uuid.UUID, s Scale) error {
	var ids []uuid.UUID
	var names []string
	var hashes, sealed [][]byte
	for i := 1; i < len(members) && i <= 2500; i += 25 {
		token := creator.NewToken()
		ids = append(ids, members[i])
		names = append(names, fmt.Sprintf("Criadora %d", i))
		hashes = append(hashes, creator.HashToken(token))
		sealed = append(sealed, s.Box.Seal(token, postgres.SealedAt("creator_profiles", "token_enc", merchantID, members[i].String())))
	}
	if _, err := tx.Exec(ctx, `INSERT INTO creator_profiles (merchant_id, member_id, display_name, niche, token_hash, token_enc)
SELECT $1, member_id, display_name, 'beleza', token_hash, token_enc
FROM unnest($2::uuid[], $3::text[], $4::bytea[], $5::bytea[]) AS p(member_id, display_name, token_hash, token_enc)`,
		merchantID, ids, names, hashes, sealed); err != nil {
		return fmt.Errorf("creator profiles: %w", err)
	}
	ok, down := uuid.New(), uuid.New()
	secret := func(id uuid.UUID, plain string) []byte {
		return s.Box.Seal(plain, postgres.SealedAt("webhook_endpoints", "secret_sealed", merchantID, id.String()))
	}
	_, err := tx.Exec(ctx, `INSERT INTO webhook_endpoints (merchant_id, id, url, events, secret_sealed, failing_since)
VALUES ($1, $2, 'https://hooks.example.com/ok', '{referral.created}', $3, NULL),
       ($1, $4, 'https://hooks.example.com/down', '{referral.created}', $5, $6::timestamptz - interval '2 hours')`,
		merchantID, ok, secret(ok, "whsec_scale_ok"), down, secret(down, "whsec_scale_down"), s.Now)
	if err != nil {
		return fmt.Errorf("webhook endpoints: %w", err)
	}
	return nil
}
