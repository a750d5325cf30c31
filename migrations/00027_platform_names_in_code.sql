-- +goose Up
-- Issue 30: which platforms exist is said once, by the code's descriptors
-- (pkg/provider); the database only bounds the name, so that adding a
-- platform needs no migration.
ALTER TABLE integration_settings DROP CONSTRAINT integration_settings_provider_check;
ALTER TABLE integration_settings ADD CONSTRAINT integration_settings_provider_check
    CHECK (char_length(provider) BETWEEN 1 AND 32);

-- +goose Down
DELETE FROM integration_settings WHERE provider NOT IN ('guru', 'yampi', 'hotmart', 'kiwify');
ALTER TABLE integration_settings DROP CONSTRAINT integration_settings_provider_check;
ALTER TABLE integration_settings ADD CONSTRAINT integration_settings_provider_check
    CHECK (provider IN ('guru', 'yampi', 'hotmart', 'kiwify'));
