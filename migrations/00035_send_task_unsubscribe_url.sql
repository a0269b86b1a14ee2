-- +goose Up
-- The https address of a campaign send's unsubscribe page (https://{tracking host}/u/{token}), chosen and
-- signed by the engine when it composes the message, so the send pipeline can write the List-Unsubscribe and
-- List-Unsubscribe-Post headers (RFC 8058) without reading the campaign or holding the signing key. Empty when
-- the message carries no List-Unsubscribe header (the campaign's unsubscribe_header is off, or the send is not
-- a campaign send).
ALTER TABLE send_tasks ADD COLUMN unsubscribe_url text NOT NULL DEFAULT '' CHECK (length(unsubscribe_url) <= 2048);

-- +goose Down
ALTER TABLE send_tasks DROP COLUMN unsubscribe_url;
