-- +goose Up
-- Issue 18: the scheduler's retention sweep (pkg/postgres/retention.go,
-- docs/retention.md) picks the oldest due rows of each table, a batch of
-- at most 5,000 at a time, by their time alone, across merchants. The
-- existing indexes of these tables lead with merchant_id, so without these
-- every statement of a sweep (and a sweep with nothing due) would read the
-- whole table. sessions (expiry), audit_events (created_at) and
-- dashboard_sign_in_attempts (at) already have theirs.
--
-- Each is a plain btree on a time that only grows as rows are written, so
-- an insert adds its entry at the right edge of the index: the ledger
-- (processed_commands, outbox) and the recorder and dispatcher pay one
-- cheap index entry per row. Plain CREATE INDEX, as the other migrations:
-- it blocks writes to the table while it builds, which on a large
-- existing install takes a while; build them CONCURRENTLY by hand before
-- upgrading there (goose then finds them: IF NOT EXISTS).
CREATE INDEX IF NOT EXISTS inbound_deliveries_received ON inbound_deliveries (received_at);
CREATE INDEX IF NOT EXISTS webhook_attempts_created ON webhook_attempts (created_at);
CREATE INDEX IF NOT EXISTS outbox_created ON outbox (created_at);
CREATE INDEX IF NOT EXISTS processed_commands_processed ON processed_commands (processed_at);

-- The referrals whose buyer's name, e-mail or document is still there,
-- by age: a referral leaves this index once the sweep has cleared it, so
-- a year of referrals at most, whatever the table's size. The sweep's
-- predicate is this one word for word, so the planner can use it.
CREATE INDEX IF NOT EXISTS referrals_buyer_data ON referrals (created_at)
    WHERE referee_name <> '' OR referee_email <> '' OR referee_external_id <> '';

-- +goose Down
DROP INDEX referrals_buyer_data, processed_commands_processed, outbox_created, webhook_attempts_created,
    inbound_deliveries_received;
