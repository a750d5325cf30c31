-- +goose Up
-- The merchant dashboard (docs/dashboard.md): its users, their one-time
-- invitations, the sign-in attempts that throttle guessing, and the
-- sessions of github.com/alexedwards/scs (its pgxstore's table).

CREATE TABLE dashboard_users (
    merchant_id   uuid NOT NULL REFERENCES merchants (id),
    id            uuid NOT NULL,
    email         text NOT NULL,
    password_hash text NOT NULL,
    role          text NOT NULL CHECK (role IN ('owner', 'viewer')),
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (merchant_id, id)
);
-- One e-mail signs in to one merchant: the sign-in form asks for no merchant.
CREATE UNIQUE INDEX dashboard_users_email ON dashboard_users (lower(email));

-- Every existing merchant's dashboard login becomes its owner. Merchants
-- sharing an e-mail (test data) keep only the oldest one's.
INSERT INTO dashboard_users (merchant_id, id, email, password_hash, role, created_at)
SELECT DISTINCT ON (lower(dashboard_email)) id, gen_random_uuid(), dashboard_email, dashboard_password_hash, 'owner', created_at
FROM merchants WHERE dashboard_email <> ''
ORDER BY lower(dashboard_email), created_at;

-- An invitation's token is stored as its SHA-256 only; it works once,
-- before expires_at.
CREATE TABLE dashboard_invites (
    merchant_id uuid NOT NULL REFERENCES merchants (id),
    id          uuid NOT NULL,
    email       text NOT NULL,
    role        text NOT NULL CHECK (role IN ('owner', 'viewer')),
    token_hash  bytea NOT NULL UNIQUE,
    expires_at  timestamptz NOT NULL,
    accepted_at timestamptz,
    created_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (merchant_id, id)
);

-- Failed sign-ins, counted per e-mail and per client IP over a window;
-- shared by every API replica.
CREATE TABLE dashboard_sign_in_failures (
    email     text NOT NULL,
    client_ip text NOT NULL,
    at        timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX dashboard_sign_in_failures_email ON dashboard_sign_in_failures (email, at);
CREATE INDEX dashboard_sign_in_failures_ip ON dashboard_sign_in_failures (client_ip, at);

-- The table github.com/alexedwards/scs/pgxstore reads and writes.
CREATE TABLE sessions (
    token  text PRIMARY KEY,
    data   bytea NOT NULL,
    expiry timestamptz NOT NULL
);
CREATE INDEX sessions_expiry_idx ON sessions (expiry);

-- +goose Down
DROP TABLE sessions;
DROP TABLE dashboard_sign_in_failures;
DROP TABLE dashboard_invites;
DROP TABLE dashboard_users;
