-- +goose Up
-- Issue 19: Hotmart and Kiwify are inbound platforms. Their webhook
-- secrets reuse the sealed columns of the same role (Hotmart's hottok is
-- compared like Guru's account token: account_token_enc; Kiwify's webhook
-- token keys an HMAC like Yampi's secret: webhook_secret_enc). Their pull
-- credentials are new columns: the client id and Kiwify's account id in
-- clear, the client secret and Hotmart's basic token sealed (pkg/secretbox).
-- auth_url is Hotmart's OAuth endpoint; checkout_url is Kiwify's product
-- checkout link, only ever shown (a member's referral link), never fetched.
ALTER TABLE integration_settings DROP CONSTRAINT integration_settings_provider_check;
ALTER TABLE integration_settings ADD CONSTRAINT integration_settings_provider_check
    CHECK (provider IN ('guru', 'yampi', 'hotmart', 'kiwify'));
ALTER TABLE integration_settings
    ADD COLUMN client_id         text NOT NULL DEFAULT '',
    ADD COLUMN client_secret_enc bytea,
    ADD COLUMN basic_token_enc   bytea,
    ADD COLUMN account_id        text NOT NULL DEFAULT '',
    ADD COLUMN auth_url          text NOT NULL DEFAULT '',
    ADD COLUMN checkout_url      text NOT NULL DEFAULT '';

-- +goose Down
DELETE FROM integration_settings WHERE provider IN ('hotmart', 'kiwify');
ALTER TABLE integration_settings
    DROP COLUMN client_id,
    DROP COLUMN client_secret_enc,
    DROP COLUMN basic_token_enc,
    DROP COLUMN account_id,
    DROP COLUMN auth_url,
    DROP COLUMN checkout_url;
ALTER TABLE integration_settings DROP CONSTRAINT integration_settings_provider_check;
ALTER TABLE integration_settings ADD CONSTRAINT integration_settings_provider_check
    CHECK (provider IN ('guru', 'yampi'));
