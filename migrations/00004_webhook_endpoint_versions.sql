-- +goose Up
-- A counter per merchant, bumped in the transaction of every change to the
-- merchant's webhook endpoints (create, update, delete, disable, secret
-- rotation). The dispatcher caches each merchant's active endpoints with
-- the version it read and, for each batch of events, reads the versions of
-- the batch's merchants (a primary-key lookup) to reload the ones that
-- moved. It reads an event only after the event's transaction committed,
-- so every endpoint change committed before the event is seen by its
-- fan-out (docs/architecture.md, "Outbound webhooks"). A merchant without
-- a row is at version 0. A table of its own rather than a column of
-- merchants: the bump locks this row only, never the merchant's.
CREATE TABLE webhook_endpoint_versions (
    merchant_id uuid PRIMARY KEY REFERENCES merchants (id),
    version     bigint NOT NULL
);

-- +goose Down
DROP TABLE webhook_endpoint_versions;
