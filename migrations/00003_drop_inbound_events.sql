-- +goose Up
-- The ingest no longer claims dedupe keys in PostgreSQL (issue 10): the
-- command id is the dedupe key and the ledger applies a command id once
-- (processed_commands), so inbound_events has no reader or writer left.
DROP TABLE inbound_events;

-- +goose Down
CREATE TABLE inbound_events (
    merchant_id  uuid NOT NULL,
    dedupe_key   text NOT NULL,
    command_id   text NOT NULL,
    received_at  timestamptz NOT NULL DEFAULT now(),
    published_at timestamptz,
    PRIMARY KEY (merchant_id, dedupe_key)
) WITH (fillfactor = 70);
