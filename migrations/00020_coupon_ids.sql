-- +goose Up
-- Issue 19: every id a platform gave a member's coupon, so that a sale
-- pulled from the platform's API is attributed by the coupon's id when
-- its code is not in the answer (Yampi's order list always carries
-- promocode_id, and may leave the promocode itself out).
--
-- coupon_provisions.coupon_id is the coupon the platform holds now; this
-- table keeps each id it has ever held, since an order keeps the id of the
-- coupon it was placed with even after the coupon was deleted at the
-- platform and created again under a new id. An id is the member's whose
-- coupon received it last.
CREATE TABLE coupon_ids (
    merchant_id uuid NOT NULL,
    platform    text NOT NULL CHECK (char_length(platform) BETWEEN 1 AND 255),
    coupon_id   text NOT NULL CHECK (char_length(coupon_id) BETWEEN 1 AND 255),
    member_id   uuid NOT NULL,
    recorded_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (merchant_id, platform, coupon_id),
    FOREIGN KEY (merchant_id, member_id) REFERENCES members (merchant_id, id) ON DELETE CASCADE
);
-- The cascade from members.
CREATE INDEX coupon_ids_member ON coupon_ids (merchant_id, member_id);

-- The coupons provisioned before this migration.
INSERT INTO coupon_ids (merchant_id, platform, coupon_id, member_id)
SELECT merchant_id, platform, coupon_id, member_id FROM coupon_provisions
WHERE coupon_id IS NOT NULL AND char_length(coupon_id) BETWEEN 1 AND 255
ON CONFLICT DO NOTHING;

-- +goose Down
DROP TABLE coupon_ids;
