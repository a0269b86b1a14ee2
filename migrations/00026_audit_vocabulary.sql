-- +goose Up
-- Audit entries speak part 3's vocabulary: a coarse action (create, update, delete, send, revoke, ...) and
-- entity_type (contact, email_account, api_key, webhook, ...) that GET /audit-logs filters on, with the precise
-- happening ("api_key.revoked") in its own column. Entries written before keep their meaning: the dotted
-- action moves to event and the coarse words are derived from it. The migration runs as the table's owner,
-- which the append-only rule (00009) does not bind.
ALTER TABLE audit_log ADD COLUMN event text NOT NULL DEFAULT '' CHECK (length(event) <= 100);
UPDATE audit_log SET
  event = action,
  action = CASE split_part(action, '.', 2)
    WHEN 'created' THEN 'create' WHEN 'added' THEN 'create' WHEN 'updated' THEN 'update'
    WHEN 'deleted' THEN 'delete' WHEN 'removed' THEN 'delete' WHEN 'revoked' THEN 'revoke'
    WHEN 'direct_send' THEN 'send' WHEN 'imported' THEN 'import' WHEN 'started' THEN 'verify'
    WHEN 'verified' THEN 'verify' WHEN 'connected' THEN 'create'
    WHEN 'accepted' THEN 'accept' WHEN 'secret_rotated' THEN 'rotate_secret'
    WHEN 'webhook_secret_rotated' THEN 'rotate_secret' ELSE 'update' END,
  target_type = CASE target_type
    WHEN 'mailbox' THEN 'email_account' WHEN 'webhook_endpoint' THEN 'webhook'
    WHEN 'contact_import' THEN 'contact' WHEN 'verification_run' THEN 'contact'
    WHEN 'user' THEN 'member' WHEN 'send_task' THEN 'email' ELSE target_type END
WHERE action LIKE '%.%';

-- +goose Down
UPDATE audit_log SET action = event WHERE event <> '';
ALTER TABLE audit_log DROP COLUMN event;
