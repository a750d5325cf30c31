-- +goose Up
-- Creators (decisions 21–22): a member with a creator profile, read by
-- its token; the token is kept encrypted (shown again in the admin API and
-- the dashboard) and as a SHA-256 hash, the lookup key of the public
-- operations.
CREATE TABLE creator_profiles (
    merchant_id        uuid NOT NULL,
    member_id          uuid NOT NULL,
    display_name       text NOT NULL,
    niche              text NOT NULL DEFAULT '',
    instagram_username text NOT NULL DEFAULT '',
    token_hash         bytea NOT NULL UNIQUE,
    token_enc          bytea NOT NULL,
    created_at         timestamptz NOT NULL DEFAULT now(),
    updated_at         timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (merchant_id, member_id),
    FOREIGN KEY (merchant_id, member_id) REFERENCES members (merchant_id, id) ON DELETE CASCADE
);

-- A campaign's commission tiers, in increasing min_sales; a PUT replaces
-- them all. commission_bp is the percent in basis points (15 % = 1500).
CREATE TABLE campaign_tiers (
    merchant_id   uuid NOT NULL,
    campaign_id   uuid NOT NULL,
    position      integer NOT NULL,
    name          text NOT NULL,
    min_sales     integer NOT NULL CHECK (min_sales >= 0),
    commission_bp integer NOT NULL CHECK (commission_bp BETWEEN 0 AND 10000),
    PRIMARY KEY (merchant_id, campaign_id, position),
    UNIQUE (merchant_id, campaign_id, name),
    FOREIGN KEY (merchant_id, campaign_id) REFERENCES campaigns (merchant_id, id) ON DELETE CASCADE
);

-- +goose Down
DROP TABLE campaign_tiers;
DROP TABLE creator_profiles;
