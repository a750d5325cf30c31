-- +goose Up
-- Outbound webhooks (design/webhooks.md): the endpoints merchants register,
-- the delivery log and the deliveries still owed. Keyed by merchant_id first
-- like every table (00001_core.sql).

-- Signing secrets are AES-GCM ciphertexts (pkg/secretbox), never plaintext:
-- the service must read them back to sign, so they cannot be hashed.
CREATE TABLE webhook_endpoints (
    merchant_id                uuid NOT NULL REFERENCES merchants (id),
    id                         uuid NOT NULL,
    url                        text NOT NULL,
    events                     text[] NOT NULL,
    is_active                  boolean NOT NULL DEFAULT true,
    secret_sealed              bytea NOT NULL,
    -- The secret replaced by the last rotation keeps signing until
    -- previous_secret_expires_at.
    previous_secret_sealed     bytea,
    previous_secret_expires_at timestamptz,
    -- Why the dispatcher switched the endpoint off; '' when it did not.
    disabled_reason            text NOT NULL DEFAULT '',
    -- The first failure of the current unbroken run of failures: the
    -- dispatcher disables an endpoint failing for too long.
    failing_since              timestamptz,
    created_at                 timestamptz NOT NULL DEFAULT now(),
    updated_at                 timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (merchant_id, id)
);
-- The dispatcher's lookup of the endpoints an event goes to.
CREATE INDEX webhook_endpoints_active ON webhook_endpoints (merchant_id) WHERE is_active;

-- The delivery log: one row per HTTP attempt. Rows go with their endpoint.
CREATE TABLE webhook_attempts (
    merchant_id     uuid NOT NULL,
    id              uuid NOT NULL,
    webhook_id      uuid NOT NULL,
    event_id        uuid NOT NULL,
    event_type      text NOT NULL,
    status          text NOT NULL CHECK (status IN ('success', 'failed')),
    attempt         integer NOT NULL CHECK (attempt >= 1),
    response_status integer, -- NULL when no response arrived
    response_body   text NOT NULL DEFAULT '',
    error           text NOT NULL DEFAULT '',
    duration_ms     bigint NOT NULL DEFAULT 0,
    next_retry_at   timestamptz,
    created_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (merchant_id, id),
    FOREIGN KEY (merchant_id, webhook_id) REFERENCES webhook_endpoints (merchant_id, id) ON DELETE CASCADE
);
-- GET /v1/webhooks/{id}/logs, newest first with a stable tie-break.
CREATE INDEX webhook_attempts_list ON webhook_attempts (merchant_id, webhook_id, created_at DESC, id DESC);
-- The attempts of one event (the number of a manual retry).
CREATE INDEX webhook_attempts_event ON webhook_attempts (merchant_id, webhook_id, event_id);

-- Events owed to an endpoint and not yet delivered. Retries wait here, not
-- in the consumer's path; next_attempt_at is the due time or, while a
-- dispatcher holds the job, the end of its lease.
CREATE TABLE webhook_jobs (
    merchant_id     uuid NOT NULL,
    webhook_id      uuid NOT NULL,
    event_id        uuid NOT NULL,
    event_type      text NOT NULL,
    payload         bytea NOT NULL, -- the envelope's exact bytes, signed on every attempt
    attempts        integer NOT NULL DEFAULT 0,
    next_attempt_at timestamptz NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (merchant_id, webhook_id, event_id),
    FOREIGN KEY (merchant_id, webhook_id) REFERENCES webhook_endpoints (merchant_id, id) ON DELETE CASCADE
);
-- The dispatcher's sweep of due jobs, across merchants.
CREATE INDEX webhook_jobs_due ON webhook_jobs (next_attempt_at);

-- +goose Down
DROP TABLE webhook_jobs, webhook_attempts, webhook_endpoints;
