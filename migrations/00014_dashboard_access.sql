-- +goose Up
-- Issue 17: dashboard access that can be taken back, and a sign-in
-- throttle that holds under concurrency (docs/dashboard.md).

-- A user's sessions carry the version they were signed in under; a
-- password change bumps it, so every other session of the user is signed
-- out at its next request. Sessions from before this migration carry no
-- version and are signed out once.
ALTER TABLE dashboard_users ADD COLUMN session_version bigint NOT NULL DEFAULT 1;

-- Sign-in attempts replace the failures of 00009: an attempt is recorded
-- before its password is compared (under advisory locks on its e-mail and
-- client address, so concurrent attempts count each other) and deleted
-- when the password was right. What remains within the window are the
-- failures and the attempts still in flight.
DROP TABLE dashboard_sign_in_failures;
CREATE TABLE dashboard_sign_in_attempts (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    email      text NOT NULL,        -- lower-cased
    client_key text NOT NULL,        -- clientip.Key: an IPv4 address or an IPv6 /64
    at         timestamptz NOT NULL
);
CREATE INDEX dashboard_sign_in_attempts_email ON dashboard_sign_in_attempts (email, at);
CREATE INDEX dashboard_sign_in_attempts_client ON dashboard_sign_in_attempts (client_key, at);
CREATE INDEX dashboard_sign_in_attempts_at ON dashboard_sign_in_attempts (at);

-- The pending invitations of a merchant, listed on the users page.
CREATE INDEX dashboard_invites_pending ON dashboard_invites (merchant_id, created_at) WHERE accepted_at IS NULL;

-- +goose Down
DROP INDEX dashboard_invites_pending;
DROP TABLE dashboard_sign_in_attempts;
CREATE TABLE dashboard_sign_in_failures (
    email     text NOT NULL,
    client_ip text NOT NULL,
    at        timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX dashboard_sign_in_failures_email ON dashboard_sign_in_failures (email, at);
CREATE INDEX dashboard_sign_in_failures_ip ON dashboard_sign_in_failures (client_ip, at);
ALTER TABLE dashboard_users DROP COLUMN session_version;
