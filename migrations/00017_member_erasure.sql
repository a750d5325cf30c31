-- +goose Up
-- Issue 18: erasing a member's personal data (LGPD, docs/privacy.md). An
-- erased member keeps its row, its wallet and its referrals' amounts: the
-- ledger must stay exact. erased_at is when POST /members/{id}/erase
-- replaced its e-mail (erased-mem_…@erased.invalid), name, external id,
-- document, phone and metadata; NULL for a member never erased. The ledger
-- reads it to attribute no new sale to an erased member.
ALTER TABLE members ADD COLUMN erased_at timestamptz;

-- +goose Down
ALTER TABLE members DROP COLUMN erased_at;
