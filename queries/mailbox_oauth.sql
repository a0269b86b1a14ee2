-- name: MailboxOAuthSessionInsert :one
INSERT INTO mailbox_oauth_sessions (organization_id, id, user_id, provider, state_hash, verifier_sealed, expires_at)
VALUES (@organization_id, @id, sqlc.narg(user_id), @provider, @state_hash, @verifier_sealed, @expires_at)
RETURNING *;

-- name: MailboxOAuthSessionsPrune :exec
-- Drops the organization's sessions that ended a day ago: a poll after that answers 404.
DELETE FROM mailbox_oauth_sessions WHERE organization_id = $1 AND expires_at < now() - interval '1 day';

-- name: MailboxOAuthSessionGet :one
SELECT * FROM mailbox_oauth_sessions WHERE organization_id = $1 AND id = $2;

-- name: MailboxOAuthSessionByState :one
SELECT s.organization_id::uuid AS organization_id, s.id::uuid AS id FROM mailbox_oauth_session_by_state(@state_hash) AS s;

-- name: MailboxOAuthSessionTake :one
-- Spends a pending, unexpired session: a state is answered once.
UPDATE mailbox_oauth_sessions SET answered_at = now()
WHERE organization_id = @organization_id AND id = @id AND answered_at IS NULL AND expires_at > now()
RETURNING *;

-- name: MailboxOAuthSessionFinish :exec
UPDATE mailbox_oauth_sessions SET status = @status, mailbox_id = sqlc.narg(mailbox_id), error_code = @error_code,
  error_message = @error_message, error_fix = @error_fix
WHERE organization_id = @organization_id AND id = @id;

-- name: MailboxGetByEmail :one
SELECT * FROM mailboxes WHERE organization_id = $1 AND email = $2;

-- name: MailboxSetStatus :one
UPDATE mailboxes SET status = @status, updated_at = now()
WHERE organization_id = @organization_id AND id = @id
RETURNING *;

-- name: MailboxOAuthTokenUpsert :exec
INSERT INTO mailbox_oauth_tokens (organization_id, mailbox_id, refresh_sealed, access_sealed, expires_at)
VALUES (@organization_id, @mailbox_id, @refresh_sealed, @access_sealed, @expires_at)
ON CONFLICT (organization_id, mailbox_id) DO UPDATE SET refresh_sealed = excluded.refresh_sealed,
  access_sealed = excluded.access_sealed, expires_at = excluded.expires_at, refreshed_at = now();

-- name: MailboxOAuthTokenGet :one
SELECT * FROM mailbox_oauth_tokens WHERE organization_id = $1 AND mailbox_id = $2;

-- name: MailboxOAuthTokenLock :one
-- Holds the token row while one process refreshes it; the others wait and then read the fresh token.
SELECT * FROM mailbox_oauth_tokens WHERE organization_id = $1 AND mailbox_id = $2 FOR UPDATE;

-- name: MailboxSetIdentity :one
-- Stores what the provider reported about the sending identity; the signature only when imported.
UPDATE mailboxes SET identities = @identities, identity_synced_at = now(), send_as_email = @send_as_email,
  signature_plain = CASE WHEN @import_signature::boolean THEN @signature_plain ELSE signature_plain END,
  signature_html = CASE WHEN @import_signature::boolean THEN @signature_html ELSE signature_html END,
  signature_source = CASE WHEN @import_signature::boolean THEN 'provider' ELSE signature_source END,
  signature_imported_at = CASE WHEN @import_signature::boolean THEN now() ELSE signature_imported_at END,
  updated_at = now()
WHERE organization_id = @organization_id AND id = @id
RETURNING *;
