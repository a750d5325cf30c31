-- +goose Up
-- Dashboard sessions are kept by the SHA-256 of their token (lower-case
-- hex), never the token itself: a copy of the table (a backup, a replica,
-- a read-only role) cannot be replayed as a cookie. The live sessions keep
-- working: their tokens are hashed in place.
UPDATE sessions SET token = encode(sha256(convert_to(token, 'UTF8')), 'hex');
ALTER TABLE sessions RENAME COLUMN token TO token_hash;
ALTER TABLE sessions ADD CONSTRAINT sessions_token_hash_hex CHECK (token_hash ~ '^[0-9a-f]{64}$');

-- +goose Down
-- The tokens cannot be recovered from their hashes: every session ends.
DELETE FROM sessions;
ALTER TABLE sessions DROP CONSTRAINT sessions_token_hash_hex;
ALTER TABLE sessions RENAME COLUMN token_hash TO token;
