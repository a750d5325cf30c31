-- +goose Up
-- Issue 11: a campaign's fraud thresholds and the referee's discount.
-- max_referrals_per_hour and max_reward_per_month are NULL when off.
ALTER TABLE campaigns
    ADD COLUMN max_referrals_per_hour integer CHECK (max_referrals_per_hour >= 1),
    ADD COLUMN max_reward_per_month   bigint CHECK (max_reward_per_month >= 0),
    ADD COLUMN block_disposable_emails boolean NOT NULL DEFAULT true,
    ADD COLUMN referee_discount_type  text CHECK (referee_discount_type IN ('percentage', 'fixed')),
    ADD COLUMN referee_discount_value bigint NOT NULL DEFAULT 0 CHECK (referee_discount_value >= 0);
-- Existing campaigns get the default velocity threshold new ones get.
UPDATE campaigns SET max_referrals_per_hour = 20;

-- +goose Down
ALTER TABLE campaigns
    DROP COLUMN max_referrals_per_hour,
    DROP COLUMN max_reward_per_month,
    DROP COLUMN block_disposable_emails,
    DROP COLUMN referee_discount_type,
    DROP COLUMN referee_discount_value;
