-- +goose Up
-- Every table is keyed by merchant_id first so the schema can be sharded by
-- merchant without rewriting queries (docs/architecture.md).

CREATE TABLE merchants (
    id                      uuid PRIMARY KEY,
    name                    text NOT NULL,
    store_url               text NOT NULL,
    code_prefix             text NOT NULL CHECK (code_prefix ~ '^[A-Z]{2,8}$'),
    referral_param          text NOT NULL DEFAULT 'cupom',
    dashboard_email         text NOT NULL,
    dashboard_password_hash text NOT NULL,
    rate_limit_per_second   integer CHECK (rate_limit_per_second > 0),
    rate_limit_burst        integer CHECK (rate_limit_burst > 0),
    created_at              timestamptz NOT NULL DEFAULT now()
);

-- API keys are stored only as SHA-256 hashes; prefix is a non-secret hint.
CREATE TABLE api_keys (
    merchant_id  uuid NOT NULL REFERENCES merchants (id),
    id           uuid NOT NULL,
    key_hash     bytea NOT NULL UNIQUE,
    prefix       text NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    last_used_at timestamptz,
    revoked_at   timestamptz,
    PRIMARY KEY (merchant_id, id)
);

-- Provider secrets are AES-GCM ciphertexts (pkg/secretbox); never plaintext.
CREATE TABLE integration_settings (
    merchant_id         uuid NOT NULL REFERENCES merchants (id),
    provider            text NOT NULL CHECK (provider IN ('guru', 'yampi')),
    account_token_enc   bytea,
    webhook_secret_enc  bytea,
    user_token_enc      bytea,
    user_secret_key_enc bytea,
    store_alias         text NOT NULL DEFAULT '',
    api_url             text NOT NULL DEFAULT '',
    created_at          timestamptz NOT NULL DEFAULT now(),
    updated_at          timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (merchant_id, provider)
);

CREATE TABLE campaigns (
    merchant_id    uuid NOT NULL REFERENCES merchants (id),
    id             uuid NOT NULL,
    name           text NOT NULL,
    reward_type    text NOT NULL CHECK (reward_type IN ('percentage', 'fixed')),
    reward_value   bigint NOT NULL CHECK (reward_value >= 0),
    warranty_days  integer NOT NULL CHECK (warranty_days >= 0),
    min_redemption bigint NOT NULL DEFAULT 0 CHECK (min_redemption >= 0),
    is_active      boolean NOT NULL DEFAULT true,
    is_default     boolean NOT NULL DEFAULT false,
    auto_register  boolean NOT NULL DEFAULT false,
    created_at     timestamptz NOT NULL DEFAULT now(),
    updated_at     timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (merchant_id, id),
    CHECK (reward_type <> 'percentage' OR reward_value BETWEEN 1 AND 100)
);
-- Exactly one default campaign per merchant (decision 20).
CREATE UNIQUE INDEX campaigns_one_default ON campaigns (merchant_id) WHERE is_default;
CREATE INDEX campaigns_list ON campaigns (merchant_id, created_at DESC, id DESC);

CREATE TABLE members (
    merchant_id uuid NOT NULL REFERENCES merchants (id),
    id          uuid NOT NULL,
    email       text NOT NULL,
    name        text NOT NULL,
    external_id text NOT NULL DEFAULT '',
    coupon_code text NOT NULL,
    campaign_id uuid NOT NULL,
    status      text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'inactive', 'blocked')),
    metadata    jsonb NOT NULL DEFAULT '{}',
    document    text NOT NULL DEFAULT '',
    phone       text NOT NULL DEFAULT '',
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (merchant_id, id),
    FOREIGN KEY (merchant_id, campaign_id) REFERENCES campaigns (merchant_id, id)
);
CREATE UNIQUE INDEX members_email ON members (merchant_id, lower(email));
CREATE UNIQUE INDEX members_coupon ON members (merchant_id, upper(coupon_code));
CREATE INDEX members_external ON members (merchant_id, external_id) WHERE external_id <> '';
CREATE INDEX members_list ON members (merchant_id, created_at DESC, id DESC);

-- The balance snapshot. Written only by the ledger worker; rows appear with
-- the member's first ledger command. Balances can never go negative.
CREATE TABLE wallets (
    merchant_id    uuid NOT NULL,
    member_id      uuid NOT NULL,
    pending        bigint NOT NULL DEFAULT 0 CHECK (pending >= 0),
    available      bigint NOT NULL DEFAULT 0 CHECK (available >= 0),
    total_earned   bigint NOT NULL DEFAULT 0 CHECK (total_earned >= 0),
    total_redeemed bigint NOT NULL DEFAULT 0 CHECK (total_redeemed >= 0),
    cancelled      bigint NOT NULL DEFAULT 0 CHECK (cancelled >= 0),
    version        bigint NOT NULL DEFAULT 0,
    updated_at     timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (merchant_id, member_id),
    FOREIGN KEY (merchant_id, member_id) REFERENCES members (merchant_id, id),
    CHECK (available + pending = total_earned - total_redeemed)
);

-- One row per credit and per debit: the member-facing transaction view
-- (decision 17); its status follows the ledger.
CREATE TABLE wallet_transactions (
    merchant_id    uuid NOT NULL,
    id             uuid NOT NULL,
    member_id      uuid NOT NULL,
    type           text NOT NULL CHECK (type IN ('credit', 'debit')),
    status         text NOT NULL CHECK (status IN ('pending', 'available', 'used', 'cancelled', 'reversed', 'processing')),
    amount         bigint NOT NULL CHECK (amount > 0),
    description    text NOT NULL,
    reference_type text NOT NULL,
    reference_id   uuid NOT NULL,
    created_at     timestamptz NOT NULL,
    updated_at     timestamptz NOT NULL,
    PRIMARY KEY (merchant_id, id)
);
CREATE INDEX wallet_transactions_member ON wallet_transactions (merchant_id, member_id, created_at DESC, id DESC);

-- Immutable ledger entries: the admin transaction view. pending_delta and
-- available_delta are the signed movements; the snapshot equals their sum.
CREATE TABLE ledger_entries (
    merchant_id       uuid NOT NULL,
    id                uuid NOT NULL,
    member_id         uuid NOT NULL,
    type              text NOT NULL CHECK (type IN ('credit', 'debit', 'release', 'cancel', 'adjustment')),
    amount            bigint NOT NULL CHECK (amount >= 0),
    pending_delta     bigint NOT NULL,
    available_delta   bigint NOT NULL,
    pending_after     bigint NOT NULL CHECK (pending_after >= 0),
    available_after   bigint NOT NULL CHECK (available_after >= 0),
    description       text NOT NULL,
    reference_type    text NOT NULL,
    reference_id      uuid NOT NULL,
    transaction_id    uuid NOT NULL,
    command_id        text NOT NULL,
    created_at        timestamptz NOT NULL,
    PRIMARY KEY (merchant_id, id)
);
CREATE INDEX ledger_entries_member ON ledger_entries (merchant_id, member_id, created_at DESC, id DESC);

CREATE TABLE referrals (
    merchant_id         uuid NOT NULL,
    id                  uuid NOT NULL,
    member_id           uuid NOT NULL,
    source              text NOT NULL,
    order_id            text NOT NULL,
    referee_email       text NOT NULL DEFAULT '',
    referee_name        text NOT NULL DEFAULT '',
    referee_external_id text NOT NULL DEFAULT '',
    coupon_used         text NOT NULL DEFAULT '',
    order_value         bigint NOT NULL CHECK (order_value >= 0),
    reward_amount       bigint NOT NULL CHECK (reward_amount >= 0),
    status              text NOT NULL CHECK (status IN ('pending', 'approved', 'rejected', 'cancelled')),
    rejection_reason    text NOT NULL DEFAULT '',
    notes               text NOT NULL DEFAULT '',
    unrecovered_amount  bigint NOT NULL DEFAULT 0 CHECK (unrecovered_amount >= 0),
    credit_txn_id       uuid,
    warranty_expires_at timestamptz NOT NULL,
    created_at          timestamptz NOT NULL,
    updated_at          timestamptz NOT NULL,
    PRIMARY KEY (merchant_id, id),
    FOREIGN KEY (merchant_id, member_id) REFERENCES members (merchant_id, id)
);
-- One referral per order (decision 14).
CREATE UNIQUE INDEX referrals_order ON referrals (merchant_id, source, order_id);
CREATE INDEX referrals_member ON referrals (merchant_id, member_id, created_at DESC, id DESC);
CREATE INDEX referrals_list ON referrals (merchant_id, created_at DESC, id DESC);
-- The scheduler's sweep of expired warranties.
CREATE INDEX referrals_due ON referrals (warranty_expires_at) WHERE status = 'pending';

CREATE TABLE redemptions (
    merchant_id     uuid NOT NULL,
    id              uuid NOT NULL,
    member_id       uuid NOT NULL,
    amount          bigint NOT NULL CHECK (amount > 0),
    type            text NOT NULL CHECK (type IN ('subscription_discount', 'store_credit')),
    status          text NOT NULL CHECK (status IN ('pending', 'completed', 'failed')),
    transaction_id  uuid NOT NULL, -- the debit ledger entry
    debit_txn_id    uuid NOT NULL, -- the member-facing debit transaction
    subscription_id text NOT NULL DEFAULT '',
    result          jsonb NOT NULL DEFAULT '{}', -- what the platform answered
    failure_reason  text NOT NULL DEFAULT '',
    created_at      timestamptz NOT NULL,
    updated_at      timestamptz NOT NULL,
    PRIMARY KEY (merchant_id, id),
    FOREIGN KEY (merchant_id, member_id) REFERENCES members (merchant_id, id)
);
CREATE INDEX redemptions_member ON redemptions (merchant_id, member_id, created_at DESC, id DESC);
CREATE INDEX redemptions_pending ON redemptions (updated_at) WHERE status = 'pending';

-- Exactly-once: a command id is recorded in the same transaction as its
-- effect; a redelivered command finds its row and does nothing.
CREATE TABLE processed_commands (
    merchant_id  uuid NOT NULL,
    command_id   text NOT NULL,
    member_id    uuid NOT NULL,
    kind         text NOT NULL,
    outcome      text NOT NULL,
    error_code   text NOT NULL DEFAULT '',
    result       jsonb NOT NULL DEFAULT '{}',
    processed_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (merchant_id, command_id)
);

-- Transactional outbox: domain events written with their cause, relayed to
-- the events topic after commit; the scheduler re-publishes stragglers.
-- The rows are immutable (the event history: a webhook log retry sends the
-- stored bytes again); what is still to relay is the small outbox_pending
-- queue beside it, so marking an event relayed deletes a key instead of
-- rewriting the whole event and its index entries.
CREATE TABLE outbox (
    merchant_id uuid NOT NULL,
    event_id    uuid NOT NULL,
    seq         bigserial NOT NULL,
    member_id   uuid NOT NULL,
    type        text NOT NULL,
    payload     json NOT NULL, -- exact bytes: signatures are computed over them
    created_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (merchant_id, event_id)
);

CREATE TABLE outbox_pending (
    merchant_id uuid NOT NULL,
    event_id    uuid NOT NULL,
    created_at  timestamptz NOT NULL,
    PRIMARY KEY (merchant_id, event_id)
);
CREATE INDEX outbox_pending_created ON outbox_pending (created_at);

-- Every inbound delivery, accepted or rejected, kept for audit and replay.
CREATE TABLE inbound_deliveries (
    merchant_id uuid NOT NULL REFERENCES merchants (id),
    id          uuid NOT NULL,
    provider    text NOT NULL,
    dedupe_key  text NOT NULL DEFAULT '',
    outcome     text NOT NULL,
    http_status integer NOT NULL,
    error       text NOT NULL DEFAULT '',
    headers     jsonb NOT NULL DEFAULT '{}',
    body        bytea NOT NULL,
    received_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (merchant_id, id)
);
CREATE INDEX inbound_deliveries_merchant ON inbound_deliveries (merchant_id, received_at DESC);

-- The durable dedupe of inbound order events: one row per dedupe key,
-- published_at set once the broker acknowledged the command.
CREATE TABLE inbound_events (
    merchant_id  uuid NOT NULL,
    dedupe_key   text NOT NULL,
    command_id   text NOT NULL,
    received_at  timestamptz NOT NULL DEFAULT now(),
    published_at timestamptz,
    PRIMARY KEY (merchant_id, dedupe_key)
) WITH (fillfactor = 70); -- room on the page for the published_at update to stay HOT

-- +goose Down
DROP TABLE inbound_events, inbound_deliveries, outbox_pending, outbox, processed_commands, redemptions,
    referrals, ledger_entries, wallet_transactions, wallets, members, campaigns,
    integration_settings, api_keys, merchants;
