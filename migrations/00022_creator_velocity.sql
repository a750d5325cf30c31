-- +goose Up
-- Issue 20: creators sell at volume. The velocity rule holds a member's
-- referral for review past max_referrals_per_hour; a member with a creator
-- profile is held only past max_creator_referrals_per_hour, which is NULL
-- (creators exempt) unless the merchant sets it.
ALTER TABLE campaigns
    ADD COLUMN max_creator_referrals_per_hour integer CHECK (max_creator_referrals_per_hour >= 1);

-- +goose Down
ALTER TABLE campaigns DROP COLUMN max_creator_referrals_per_hour;
