-- +goose Up
-- Issue 12: the merchant dashboard's reads (pkg/postgres/overview.go and
-- the list pages), each chosen with EXPLAIN ANALYZE on 10,000 members and
-- 100,000 referrals (docs/benchmarks.md, "Dashboard queries").

-- The referral list and every range aggregate of the overview (counts by
-- status, referred revenue, rewards credited, top members and creators,
-- the daily series) read referrals by (merchant, created_at). Carrying the
-- columns they aggregate in the index lets them run as index-only scans
-- instead of visiting a heap page per referral. It replaces referrals_list (same key),
-- so the ledger's insert of a referral maintains no more indexes than before.
CREATE INDEX referrals_recent ON referrals (merchant_id, created_at DESC, id DESC)
    INCLUDE (member_id, status, order_value, reward_amount, credit_txn_id);
DROP INDEX referrals_list;

-- A status tab of the referral list (its page and its capped count) without
-- walking the other statuses' referrals: pending ones are a few percent.
CREATE INDEX referrals_status ON referrals (merchant_id, status, created_at DESC, id DESC);

-- Rewards released in a range (the overview's figure and series). Partial:
-- the other entry types, which the overview reads from referrals and
-- redemptions, cost the ledger's writes nothing here.
CREATE INDEX ledger_entries_releases ON ledger_entries (merchant_id, created_at)
    INCLUDE (amount) WHERE type = 'release';

-- The merchant-wide redemption list (newest first, status tabs) and the
-- redeemed figures of a range.
CREATE INDEX redemptions_list ON redemptions (merchant_id, created_at DESC, id DESC)
    INCLUDE (status, amount);

-- Member search by prefix of the name, the email or the referral code,
-- case-insensitive. text_pattern_ops because the database's collation is
-- not C: an ordinary index cannot serve LIKE 'abc%'.
CREATE INDEX members_name_prefix ON members (merchant_id, lower(name) text_pattern_ops);
CREATE INDEX members_email_prefix ON members (merchant_id, lower(email) text_pattern_ops);
CREATE INDEX members_coupon_prefix ON members (merchant_id, upper(coupon_code) text_pattern_ops);

-- The last deliveries of one provider (the Integrations page).
CREATE INDEX inbound_deliveries_provider ON inbound_deliveries (merchant_id, provider, received_at DESC, id DESC);

-- +goose Down
DROP INDEX inbound_deliveries_provider, members_coupon_prefix, members_email_prefix, members_name_prefix,
    redemptions_list, ledger_entries_releases, referrals_status;
CREATE INDEX referrals_list ON referrals (merchant_id, created_at DESC, id DESC);
DROP INDEX referrals_recent;
