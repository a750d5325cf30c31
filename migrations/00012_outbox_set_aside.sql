-- +goose Up
-- An outbox event the broker refuses for itself (larger than the writer's
-- kafkabus.BatchBytes, or refused as invalid) is set aside: its pending key
-- is deleted so that the sweep never picks it again, and its row keeps why
-- and when. Only these rare rows are ever updated; the others stay as
-- written. The partial index lists them for an operator:
--   SELECT merchant_id, event_id, type, octet_length(payload::text), set_aside_at, set_aside_error
--   FROM outbox WHERE set_aside_at IS NOT NULL ORDER BY set_aside_at DESC;
ALTER TABLE outbox ADD COLUMN set_aside_at timestamptz, ADD COLUMN set_aside_error text;
CREATE INDEX outbox_set_aside ON outbox (set_aside_at) WHERE set_aside_at IS NOT NULL;

-- +goose Down
DROP INDEX outbox_set_aside;
ALTER TABLE outbox DROP COLUMN set_aside_at, DROP COLUMN set_aside_error;
