-- +goose Up
-- Issue 17: the webhook URL holds the merchant's id, so anyone may post to
-- it, and every delivery refused before it authenticated (401, 413, a Guru
-- body that is not JSON) used to keep up to 512 KiB of its body. Such a
-- record now keeps at most 4 KiB of its (redacted) body, plus what
-- identifies the whole body:
--   body_length  the bytes received (for a 413, the 1 MiB read before the
--                refusal);
--   body_sha256  their SHA-256.
-- Both are NULL for a delivery that authenticated, whose body is kept as
-- received (up to 512 KiB, the cut noted in headers X-Convida-Body-Truncated).
ALTER TABLE inbound_deliveries
    ADD COLUMN body_length integer,
    ADD COLUMN body_sha256 bytea;

-- +goose Down
ALTER TABLE inbound_deliveries DROP COLUMN body_length, DROP COLUMN body_sha256;
