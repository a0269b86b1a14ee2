-- name: MailboxCount :one
SELECT count(*) FROM mailboxes WHERE organization_id = $1;

-- name: MailboxInsert :one
INSERT INTO mailboxes (organization_id, id, user_id, email, name, provider, campaign_limit, min_wait_time,
  smtp_host, smtp_port, smtp_username, smtp_security, smtp_password,
  imap_host, imap_port, imap_username, imap_security, imap_password)
VALUES (@organization_id, @id, sqlc.narg(user_id), @email, @name, @provider, @campaign_limit, @min_wait_time,
  @smtp_host, @smtp_port, @smtp_username, @smtp_security, @smtp_password,
  @imap_host, @imap_port, @imap_username, @imap_security, @imap_password)
ON CONFLICT (organization_id, email) DO NOTHING
RETURNING *;

-- name: MailboxEmailTaken :one
SELECT count(*) FROM mailboxes WHERE organization_id = $1 AND email = $2;

-- name: MailboxList :many
-- Newest first (ids are UUIDv7, so id order is creation order); q matches part of the address or the name,
-- tag one tag id; the page starts after the mailbox id the cursor names.
SELECT * FROM mailboxes
WHERE organization_id = @organization_id::uuid
  AND (sqlc.narg(q)::text IS NULL OR email ILIKE '%' || sqlc.narg(q)::text || '%' ESCAPE '\'
       OR name ILIKE '%' || sqlc.narg(q)::text || '%' ESCAPE '\')
  AND (sqlc.narg(tag)::uuid IS NULL OR tags @> ARRAY[sqlc.narg(tag)::uuid])
  AND (sqlc.narg(only_ids)::uuid[] IS NULL OR id = ANY(sqlc.narg(only_ids)::uuid[]))
  AND (sqlc.narg(after_id)::uuid IS NULL OR id < sqlc.narg(after_id)::uuid)
ORDER BY id DESC
LIMIT @row_limit::int;

-- name: MailboxListTotal :one
SELECT count(*) FROM mailboxes
WHERE organization_id = @organization_id::uuid
  AND (sqlc.narg(q)::text IS NULL OR email ILIKE '%' || sqlc.narg(q)::text || '%' ESCAPE '\'
       OR name ILIKE '%' || sqlc.narg(q)::text || '%' ESCAPE '\')
  AND (sqlc.narg(tag)::uuid IS NULL OR tags @> ARRAY[sqlc.narg(tag)::uuid])
  AND (sqlc.narg(only_ids)::uuid[] IS NULL OR id = ANY(sqlc.narg(only_ids)::uuid[]));

-- name: MailboxLockAllowance :exec
-- Serialises connects within an organization so two at once cannot both take the last slot of the allowance.
SELECT pg_advisory_xact_lock(hashtextextended('mailbox-allowance:' || sqlc.arg(organization_id)::uuid, 0));

-- name: MailboxGet :one
SELECT * FROM mailboxes WHERE organization_id = $1 AND id = $2;

-- name: MailboxGetForUpdate :one
SELECT * FROM mailboxes WHERE organization_id = $1 AND id = $2 FOR UPDATE;

-- name: MailboxUpdate :one
-- Writes every setting PATCH may change (the handler merged the request into the stored row).
-- A signature edited here is the person's own from then on (signature_source manual).
UPDATE mailboxes SET name = @name, signature_plain = @signature_plain, signature_html = @signature_html,
  signature_source = CASE WHEN signature_plain IS DISTINCT FROM @signature_plain OR signature_html IS DISTINCT FROM @signature_html
    THEN 'manual' ELSE signature_source END,
  signature_sync = @signature_sync, signature_code = @signature_code, send_as_email = @send_as_email,
  status = @status, campaign_limit = @campaign_limit, min_wait_time = @min_wait_time, reply_to = @reply_to,
  save_to_sent = @save_to_sent, timezone = @timezone, tags = @tags::uuid[],
  warmup = sqlc.narg(warmup), warmup_paused_at = sqlc.narg(warmup_paused_at), warmup_base = @warmup_base,
  warmup_max = @warmup_max, warmup_increase = @warmup_increase, warmup_reply_rate = @warmup_reply_rate,
  warmup_tag = @warmup_tag, warmup_start_time = @warmup_start_time, warmup_end_time = @warmup_end_time,
  warmup_days = @warmup_days, updated_at = now()
WHERE organization_id = @organization_id AND id = @id
RETURNING *;

-- name: MailboxSetWarmup :one
UPDATE mailboxes SET warmup = sqlc.narg(warmup), warmup_paused_at = sqlc.narg(warmup_paused_at), updated_at = now()
WHERE organization_id = @organization_id AND id = @id
RETURNING *;

-- name: MailboxSetRotation :one
UPDATE mailboxes SET rotation_state = @rotation_state, rotation_since = now(), rotation_reason = @rotation_reason,
  updated_at = now()
WHERE organization_id = @organization_id AND id = @id
RETURNING *;

-- name: MailboxDelete :one
DELETE FROM mailboxes WHERE organization_id = $1 AND id = $2 RETURNING email;

-- name: MailboxCancelPendingSends :execrows
-- A removed mailbox sends nothing more; what it sent stays in the history (send_tasks keep the sender).
UPDATE send_tasks SET status = 'canceled', error_code = 'mailbox_removed', error_message = 'The mailbox was removed.'
WHERE organization_id = $1 AND mailbox_id = $2 AND status = 'queued';

-- name: MailboxRecentErrors :many
SELECT * FROM mailbox_errors WHERE organization_id = $1 AND mailbox_id = $2
ORDER BY created_at DESC, id DESC LIMIT 10;

-- name: MailboxCampaigns :many
SELECT c.id, c.name, c.status FROM campaign_mailboxes cm
JOIN campaigns c ON c.organization_id = cm.organization_id AND c.id = cm.campaign_id
WHERE cm.organization_id = $1 AND cm.mailbox_id = $2
ORDER BY c.created_at DESC, c.id DESC;

-- name: MailboxTagsKnown :one
-- How many of the ids are tags of the organization.
SELECT count(*) FROM labels WHERE organization_id = @organization_id AND kind = 'tag' AND id = ANY(@ids::uuid[]);

-- name: MailboxesDropTag :exec
-- A deleted tag leaves every mailbox that carried it.
UPDATE mailboxes SET tags = array_remove(tags, @tag::uuid), updated_at = now()
WHERE organization_id = @organization_id AND tags @> ARRAY[@tag::uuid];

-- name: MailboxSetTracking :one
-- Stores a resolution of the tracking domain (or a new domain with its first resolution).
UPDATE mailboxes SET tracking_domain = @tracking_domain, tracking_domain_verified = @verified,
  tracking_domain_verified_at = sqlc.narg(verified_at), tracking_status = @status, tracking_message = @message,
  tracking_observed = @observed, tracking_host_unresolvable = @host_unresolvable, tracking_checked_at = now()
WHERE organization_id = @organization_id AND id = @id
RETURNING *;

-- name: MailboxSetAuth :one
-- Stores a domain authentication check; failing_since is kept while a domain keeps failing.
UPDATE mailboxes SET auth_state = @auth_state, auth_spf = @auth_spf, auth_dkim = @auth_dkim,
  auth_dmarc = @auth_dmarc, auth_dmarc_policy = @auth_dmarc_policy, auth_reason = @auth_reason,
  auth_checked_at = now(),
  auth_failing_since = CASE WHEN @auth_state::text = 'failing' THEN coalesce(auth_failing_since, now())
                            WHEN @auth_state::text = 'passing' THEN NULL
                            ELSE auth_failing_since END
WHERE organization_id = @organization_id AND id = @id
RETURNING *;

-- name: MailboxDNSDue :many
SELECT s.organization_id::uuid AS organization_id, s.id::uuid AS id
FROM mailbox_dns_due(@checked_before::timestamptz, @row_limit::integer) AS s;

-- name: MailboxAppealPending :one
SELECT count(*) FROM mailbox_warmup_appeals WHERE organization_id = $1 AND mailbox_id = $2 AND status = 'pending';

-- name: MailboxAppealInsert :one
INSERT INTO mailbox_warmup_appeals (organization_id, id, mailbox_id, reason, created_by)
VALUES (@organization_id, @id, @mailbox_id, @reason, sqlc.narg(created_by))
ON CONFLICT (organization_id, mailbox_id) WHERE status = 'pending' DO NOTHING
RETURNING id;
