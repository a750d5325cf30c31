-- +goose Up
-- Issue 11: a referral a fraud rule flagged is held for review. The
-- warranty sweep skips it; approve or reject decides it (and clears
-- review_required, the reasons stay on record).
ALTER TABLE referrals
    ADD COLUMN review_required boolean NOT NULL DEFAULT false,
    ADD COLUMN review_reasons  text[] NOT NULL DEFAULT '{}';
-- The review queue: GET /api/v1/referrals?review_required=true.
CREATE INDEX referrals_review ON referrals (merchant_id, created_at DESC, id DESC) WHERE review_required;
-- The ledger counts a member's referrals of the last hour and the month
-- in every batch (ledger.MemberStats): the member index carries status and
-- reward_amount, so that count is an index-only scan.
DROP INDEX referrals_member;
CREATE INDEX referrals_member ON referrals (merchant_id, member_id, created_at DESC, id DESC) INCLUDE (status, reward_amount);
-- The sweep's index leaves the held referrals out.
DROP INDEX referrals_due;
CREATE INDEX referrals_due ON referrals (warranty_expires_at) WHERE status = 'pending' AND NOT review_required;

-- +goose Down
DROP INDEX referrals_member;
CREATE INDEX referrals_member ON referrals (merchant_id, member_id, created_at DESC, id DESC);
DROP INDEX referrals_due;
CREATE INDEX referrals_due ON referrals (warranty_expires_at) WHERE status = 'pending';
DROP INDEX referrals_review;
ALTER TABLE referrals
    DROP COLUMN review_required,
    DROP COLUMN review_reasons;
