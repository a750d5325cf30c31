-- +goose Up
-- Issue 18: the merchant's audit trail. Each row is written by the store in
-- the transaction of the change it records (pkg/audit). The actor is an
-- API key (its id and display prefix), a dashboard user (id and e-mail) or
-- the system; details name what changed, never a secret's value. Rows older
-- than RETENTION_AUDIT_EVENTS are deleted by the scheduler's retention
-- sweep (by created_at).
CREATE TABLE audit_events (
    merchant_id  uuid NOT NULL REFERENCES merchants (id),
    id           uuid NOT NULL,
    action       text NOT NULL,
    actor_type   text NOT NULL CHECK (actor_type IN ('api_key', 'dashboard_user', 'system')),
    actor_id     text NOT NULL DEFAULT '',
    actor_label  text NOT NULL DEFAULT '',
    target_type  text NOT NULL DEFAULT '',
    target_id    text NOT NULL DEFAULT '',
    ip           text NOT NULL DEFAULT '',
    details      jsonb NOT NULL DEFAULT '{}',
    created_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (merchant_id, id)
);
CREATE INDEX audit_events_newest ON audit_events (merchant_id, created_at DESC, id DESC);
CREATE INDEX audit_events_action ON audit_events (merchant_id, action, created_at DESC, id DESC);
CREATE INDEX audit_events_created_at ON audit_events (created_at);

-- +goose Down
DROP TABLE audit_events;
