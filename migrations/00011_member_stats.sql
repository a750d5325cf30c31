-- +goose Up
-- Issue 11: the fraud rules and the creator tiers read a member's month of
-- referrals and last hour of them in every ledger batch. Counting them from
-- referrals cost the hot path a range scan per member; the ledger keeps
-- them instead on the wallet row, which it already locks and writes for
-- every member of a batch (ledger.MemberStats):
--   stats_month       the calendar month (UTC, its first instant) counted;
--   month_sales       its non-rejected, non-cancelled referrals;
--   month_reward      their reward cents;
--   recent_referrals  the creation times of the latest referrals of the
--                     last hour, oldest first, at most 64 (ledger.RecentKept).
ALTER TABLE wallets
    ADD COLUMN stats_month      timestamptz NOT NULL DEFAULT '1970-01-01 00:00:00+00',
    ADD COLUMN month_sales      integer NOT NULL DEFAULT 0,
    ADD COLUMN month_reward     bigint NOT NULL DEFAULT 0,
    ADD COLUMN recent_referrals timestamptz[] NOT NULL DEFAULT '{}';

-- Counted once from the referrals already there.
UPDATE wallets w SET stats_month = s.month, month_sales = s.sales, month_reward = s.reward
FROM (
  SELECT r.merchant_id, r.member_id, date_trunc('month', now(), 'UTC') AS month,
         count(*) AS sales, sum(r.reward_amount) AS reward
  FROM referrals r
  WHERE r.created_at >= date_trunc('month', now(), 'UTC') AND r.status IN ('pending', 'approved')
  GROUP BY 1, 2
) s
WHERE w.merchant_id = s.merchant_id AND w.member_id = s.member_id;

UPDATE wallets w SET recent_referrals = ARRAY(
  SELECT x.created_at FROM (
    SELECT r.created_at FROM referrals r
    WHERE r.merchant_id = w.merchant_id AND r.member_id = w.member_id
      AND r.created_at >= now() - interval '1 hour'
    ORDER BY r.created_at DESC LIMIT 64) x
  ORDER BY x.created_at)
WHERE EXISTS (SELECT 1 FROM referrals r
  WHERE r.merchant_id = w.merchant_id AND r.member_id = w.member_id
    AND r.created_at >= now() - interval '1 hour');

-- +goose Down
ALTER TABLE wallets
    DROP COLUMN stats_month,
    DROP COLUMN month_sales,
    DROP COLUMN month_reward,
    DROP COLUMN recent_referrals;
