-- +goose Up
-- The member's portal (issue 31).

-- A merchant's portal settings; a merchant without a row has the defaults
-- (enabled, no embed origins, no brand colour).
CREATE TABLE portal_settings (
    merchant_id   uuid PRIMARY KEY REFERENCES merchants (id),
    enabled       boolean NOT NULL DEFAULT true,
    embed_origins text[] NOT NULL DEFAULT '{}' CHECK (cardinality(embed_origins) <= 10),
    brand_color   text NOT NULL DEFAULT '' CHECK (brand_color = '' OR brand_color ~ '^#[0-9a-f]{6}$'),
    updated_at    timestamptz NOT NULL
);

-- The one-time links into the portal: a session link minted by the
-- merchant's backend, an embed token, an e-mailed sign-in link. Kept by
-- the SHA-256 of the token, never the token: a copy of the table opens
-- nothing.
CREATE TABLE portal_tokens (
    token_hash  bytea PRIMARY KEY CHECK (octet_length(token_hash) = 32),
    kind        text NOT NULL CHECK (kind IN ('session', 'embed', 'sign_in')),
    merchant_id uuid NOT NULL,
    member_id   uuid NOT NULL,
    return_url  text NOT NULL DEFAULT '' CHECK (length(return_url) <= 2048),
    locale      text NOT NULL DEFAULT '' CHECK (locale IN ('', 'en', 'pt-BR')),
    created_at  timestamptz NOT NULL,
    expires_at  timestamptz NOT NULL,
    used_at     timestamptz,
    FOREIGN KEY (merchant_id, member_id) REFERENCES members (merchant_id, id)
);
CREATE INDEX portal_tokens_expires_at ON portal_tokens (expires_at);
CREATE INDEX portal_tokens_member ON portal_tokens (merchant_id, member_id);

-- The portal's sessions (scs), as the dashboard's: by the token's hash.
CREATE TABLE portal_sessions (
    token_hash text PRIMARY KEY CHECK (token_hash ~ '^[0-9a-f]{64}$'),
    data       bytea NOT NULL,
    expiry     timestamptz NOT NULL
);
CREATE INDEX portal_sessions_expiry ON portal_sessions (expiry);

-- E-mailed sign-in requests, counted per e-mail (by its digest) and per
-- client address over a window.
CREATE TABLE portal_sign_in_attempts (
    email_hash text NOT NULL CHECK (email_hash ~ '^[0-9a-f]{64}$'),
    client_key text NOT NULL CHECK (length(client_key) <= 100),
    at         timestamptz NOT NULL
);
CREATE INDEX portal_sign_in_attempts_email ON portal_sign_in_attempts (email_hash, at);
CREATE INDEX portal_sign_in_attempts_client ON portal_sign_in_attempts (client_key, at);
CREATE INDEX portal_sign_in_attempts_at ON portal_sign_in_attempts (at);

-- +goose Down
DROP TABLE portal_sign_in_attempts;
DROP TABLE portal_sessions;
DROP TABLE portal_tokens;
DROP TABLE portal_settings;
