-- +goose Up
-- Issue 21: every sale's referral and delivery record checked a foreign
-- key, and each check is a query that also locks the parent row (the
-- member's, and for every delivery the one merchant row all of its
-- ledgers share): 14% of PostgreSQL's time in a sales run. Both rows are
-- written only after their parent was found: the ledger writes a referral
-- for the member whose wallet it holds locked in the same transaction
-- (wallets keep their key to members), and a delivery is recorded only
-- for the merchant its URL named and the ingest found. Members and
-- merchants are never deleted (an erasure blanks a member's personal data
-- and keeps the row), so neither key could ever fire.
ALTER TABLE referrals DROP CONSTRAINT IF EXISTS referrals_merchant_id_member_id_fkey;
ALTER TABLE inbound_deliveries DROP CONSTRAINT IF EXISTS inbound_deliveries_merchant_id_fkey;

-- +goose Down
ALTER TABLE referrals ADD CONSTRAINT referrals_merchant_id_member_id_fkey
    FOREIGN KEY (merchant_id, member_id) REFERENCES members (merchant_id, id);
ALTER TABLE inbound_deliveries ADD CONSTRAINT inbound_deliveries_merchant_id_fkey
    FOREIGN KEY (merchant_id) REFERENCES merchants (id);
