-- +goose Up
-- Issue 18: the check value of SECRETS_KEY. The first program to start
-- seals a known text with its key and stores it here; every program, and
-- `api secrets rotate`, opens it at start and refuses to run with a key
-- that cannot (a new key by mistake would otherwise seal new secrets that
-- the old ones' readers cannot open, and fail to open the old ones).
-- `api secrets rotate` re-seals it with the other sealed columns. One row.
CREATE TABLE secrets_check (
    id           boolean PRIMARY KEY DEFAULT true CHECK (id),
    value_sealed bytea NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now()
);

-- +goose Down
DROP TABLE secrets_check;
