-- +goose Up
-- Issue 19: reconciliation. A run pulls a window of one integration's
-- sales from the platform's API and feeds each through the webhook's
-- normaliser and command ids, so a sale whose webhook was lost is still
-- credited, and once only.
--
-- Each delivery record says where it came from: the platform's webhook or
-- a reconciliation run (a sale the pull found that no webhook had brought).
ALTER TABLE inbound_deliveries
    ADD COLUMN source text NOT NULL DEFAULT 'webhook' CHECK (source IN ('webhook', 'reconciliation'));

CREATE TABLE reconciliation_runs (
    merchant_id  uuid NOT NULL REFERENCES merchants (id),
    id           uuid NOT NULL,
    provider     text NOT NULL CHECK (char_length(provider) BETWEEN 1 AND 32),
    status       text NOT NULL CHECK (status IN ('running', 'succeeded', 'failed')),
    window_from  timestamptz NOT NULL,
    window_to    timestamptz NOT NULL CHECK (window_to > window_from),
    started_at   timestamptz NOT NULL,
    -- NULL while a run the API asked for waits for the leading scheduler,
    -- which claims it and runs it.
    claimed_at   timestamptz,
    -- Written after each page: a running row whose heartbeat is old was
    -- left by a process that died, and the leader may fail it.
    heartbeat_at timestamptz NOT NULL,
    finished_at  timestamptz,
    seen         integer NOT NULL DEFAULT 0 CHECK (seen >= 0),
    missing      integer NOT NULL DEFAULT 0 CHECK (missing >= 0),
    credited     integer NOT NULL DEFAULT 0 CHECK (credited >= 0),
    reversed     integer NOT NULL DEFAULT 0 CHECK (reversed >= 0),
    error        text NOT NULL DEFAULT '' CHECK (char_length(error) <= 1000),
    PRIMARY KEY (merchant_id, id)
);
-- A run never overlaps another of the same integration.
CREATE UNIQUE INDEX reconciliation_runs_running ON reconciliation_runs (merchant_id, provider) WHERE status = 'running';
-- The leader's pick-up of requested runs.
CREATE INDEX reconciliation_runs_unclaimed ON reconciliation_runs (started_at) WHERE status = 'running' AND claimed_at IS NULL;
-- The retention sweep (kept as long as inbound_deliveries).
CREATE INDEX reconciliation_runs_started ON reconciliation_runs (started_at) WHERE status <> 'running';
-- The API's list, newest first, and the scheduler's "last run".
CREATE INDEX reconciliation_runs_list ON reconciliation_runs (merchant_id, provider, started_at DESC, id DESC);

-- +goose Down
DROP TABLE reconciliation_runs;
ALTER TABLE inbound_deliveries DROP COLUMN source;
