-- +goose Up
-- Every query of inbound_deliveries names its merchant with a provider
-- (the lists: inbound_deliveries_provider), an id (the primary key, whose
-- first column is the merchant, also serves an erasure's scan of the
-- merchant's records) or only a time (retention: inbound_deliveries_received).
-- The index by merchant and time served none of them and cost every
-- delivery's record an insertion.
DROP INDEX IF EXISTS inbound_deliveries_merchant;

-- +goose Down
CREATE INDEX IF NOT EXISTS inbound_deliveries_merchant ON inbound_deliveries (merchant_id, received_at DESC);
