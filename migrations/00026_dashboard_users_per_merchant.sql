-- +goose Up
-- Issue 29: dashboard users per merchant (docs/dashboard.md, "Users and
-- sessions"). An e-mail may be a user of several merchants, each its own
-- row with its own password and role; it is unique within a merchant only.
-- The sign-in finds every row of the e-mail (the plain index below).
DROP INDEX dashboard_users_email;
CREATE UNIQUE INDEX dashboard_users_merchant_email ON dashboard_users (merchant_id, lower(email));
CREATE INDEX dashboard_users_email ON dashboard_users (lower(email));

-- A failed sign-in is nobody's own action: its actor is 'anonymous' (a
-- client known only by its address), with the e-mail tried as its SHA-256
-- (docs/security.md, "Audit trail").
ALTER TABLE audit_events DROP CONSTRAINT audit_events_actor_type_check;
ALTER TABLE audit_events ADD CONSTRAINT audit_events_actor_type_check
    CHECK (actor_type IN ('api_key', 'dashboard_user', 'system', 'anonymous'));
-- The failed sign-ins written before named the user tried as their actor,
-- which anyone who typed the e-mail could make them: they become
-- anonymous, the e-mail kept as the digest the new ones carry.
UPDATE audit_events
SET actor_type = 'anonymous', actor_id = '', actor_label = '',
    details = details || jsonb_build_object('email_sha256',
        encode(sha256(convert_to(lower(btrim(actor_label)), 'UTF8')), 'hex'))
WHERE action = 'sign_in.failed' AND actor_type = 'dashboard_user';

-- +goose Down
-- The anonymous failures cannot name a user again: they become the
-- system's. An e-mail that is a user of several merchants keeps its oldest.
UPDATE audit_events SET actor_type = 'system' WHERE actor_type = 'anonymous';
ALTER TABLE audit_events DROP CONSTRAINT audit_events_actor_type_check;
ALTER TABLE audit_events ADD CONSTRAINT audit_events_actor_type_check
    CHECK (actor_type IN ('api_key', 'dashboard_user', 'system'));
DELETE FROM dashboard_users u USING dashboard_users older
WHERE lower(u.email) = lower(older.email) AND (older.created_at, older.id) < (u.created_at, u.id);
DROP INDEX dashboard_users_email;
DROP INDEX dashboard_users_merchant_email;
CREATE UNIQUE INDEX dashboard_users_email ON dashboard_users (lower(email));
