-- +goose Up
-- Issue 11: a member's referral code provisioned as a real coupon at each
-- platform, carrying the campaign's referee discount. One row per
-- (merchant, member, platform), written in the transaction that asks for it
-- (member creation, a campaign's discount change, POST provision-coupon);
-- the dispatcher's provisioner claims due rows (FOR UPDATE SKIP LOCKED and
-- a lease) and writes the outcome.
--
-- wanted_version moves each time provisioning is asked for again;
-- provisioned_version is the one the platform's coupon carries, so a claim
-- of a row whose versions differ sends the coupon (create or update), and
-- an outcome is written only for the version it claimed.
CREATE TABLE coupon_provisions (
    merchant_id         uuid NOT NULL,
    member_id           uuid NOT NULL,
    platform            text NOT NULL CHECK (platform IN ('guru', 'yampi')),
    status              text NOT NULL DEFAULT 'pending'
                        CHECK (status IN ('pending', 'provisioned', 'failed', 'not_configured')),
    coupon_id           text,
    error               text,
    attempts            integer NOT NULL DEFAULT 0,
    next_attempt_at     timestamptz,
    wanted_version      bigint NOT NULL DEFAULT 1,
    provisioned_version bigint,
    -- The discount the platform's coupon carries (NULL type: none yet), so
    -- that removing the campaign's discount can deactivate the coupon with
    -- a full body.
    provisioned_discount_type  text,
    provisioned_discount_value bigint NOT NULL DEFAULT 0,
    lease_token         uuid,
    lease_until         timestamptz,
    created_at          timestamptz NOT NULL DEFAULT now(),
    updated_at          timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (merchant_id, member_id, platform),
    FOREIGN KEY (merchant_id, member_id) REFERENCES members (merchant_id, id) ON DELETE CASCADE
);
-- The provisioner's claim: only the rows with something due are indexed.
CREATE INDEX coupon_provisions_due ON coupon_provisions (next_attempt_at) WHERE next_attempt_at IS NOT NULL;

-- Members created before this migration are provisioned too: their codes
-- are exactly the ones merchants typed into the platforms by hand, which
-- the provisioner adopts rather than duplicates.
INSERT INTO coupon_provisions (merchant_id, member_id, platform, next_attempt_at)
SELECT m.merchant_id, m.id, p.platform, now()
FROM members m CROSS JOIN (VALUES ('guru'), ('yampi')) AS p (platform);

-- +goose Down
DROP TABLE coupon_provisions;
