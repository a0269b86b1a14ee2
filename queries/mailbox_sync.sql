-- name: SyncLeaseTake :one
-- Takes (or renews) a mailbox's sync lease for owner until the given time: only when nobody holds it, the
-- holder let it run out, or owner already holds it. No row: another live process syncs the mailbox.
INSERT INTO mailbox_sync (organization_id, mailbox_id, lease_owner, lease_until)
VALUES (@organization_id, @mailbox_id, @owner, @until)
ON CONFLICT (organization_id, mailbox_id) DO UPDATE SET lease_owner = excluded.lease_owner, lease_until = excluded.lease_until
WHERE mailbox_sync.lease_owner IS NULL OR mailbox_sync.lease_until < now() OR mailbox_sync.lease_owner = excluded.lease_owner
RETURNING *;

-- name: SyncLeaseRelease :exec
UPDATE mailbox_sync SET lease_owner = NULL, lease_until = NULL
WHERE organization_id = @organization_id AND mailbox_id = @mailbox_id AND lease_owner = @owner;

-- name: SyncStateGet :one
SELECT * FROM mailbox_sync WHERE organization_id = $1 AND mailbox_id = $2;

-- name: SyncBackfillStart :exec
UPDATE mailbox_sync SET backfill_status = 'running', backfill_since = @since,
  backfill_started_at = coalesce(backfill_started_at, now()), reported_at = now()
WHERE organization_id = @organization_id AND mailbox_id = @mailbox_id AND backfill_status <> 'complete';

-- name: SyncProgress :exec
-- Records a synced batch: the backfill count grows while the backfill runs.
UPDATE mailbox_sync SET backfill_synced = backfill_synced + CASE WHEN backfill_status = 'running' THEN @stored::int ELSE 0 END,
  last_synced_at = now(), last_error = '', reported_at = now()
WHERE organization_id = @organization_id AND mailbox_id = @mailbox_id;

-- name: SyncBackfillComplete :exec
UPDATE mailbox_sync SET backfill_status = 'complete', backfill_completed_at = now(), last_synced_at = now(), reported_at = now()
WHERE organization_id = @organization_id AND mailbox_id = @mailbox_id AND backfill_status = 'running';

-- name: SyncError :exec
UPDATE mailbox_sync SET last_error = @last_error, reported_at = now()
WHERE organization_id = @organization_id AND mailbox_id = @mailbox_id;

-- name: SyncFolderGet :one
SELECT * FROM mailbox_folders WHERE organization_id = $1 AND mailbox_id = $2 AND name = $3;

-- name: SyncFolderSave :exec
INSERT INTO mailbox_folders (organization_id, mailbox_id, name, role, uid_validity, last_uid, highest_modseq)
VALUES (@organization_id, @mailbox_id, @name, @role, @uid_validity, @last_uid, @highest_modseq)
ON CONFLICT (organization_id, mailbox_id, name)
DO UPDATE SET role = excluded.role, uid_validity = excluded.uid_validity, last_uid = excluded.last_uid,
  highest_modseq = excluded.highest_modseq;

-- name: SyncFolderForget :many
-- A new UIDVALIDITY: the folder's stored messages belong to a generation that no longer exists. Answers the
-- threads they were in, whose summaries the caller refreshes (and drops those left empty).
DELETE FROM inbox_messages m WHERE m.organization_id = @organization_id AND m.mailbox_id = @mailbox_id
  AND m.folder = @folder AND m.uid_validity <> @uid_validity
RETURNING m.thread_id;

-- name: InboxThreadsDropEmpty :exec
-- Threads of the given ones that no message is in any more (their summaries refreshed first).
DELETE FROM inbox_threads t WHERE t.organization_id = @organization_id AND t.id = ANY (@ids::uuid[])
  AND NOT EXISTS (SELECT 1 FROM inbox_messages m WHERE m.organization_id = @organization_id AND m.thread_id = t.id);

-- name: InboxThreadRefresh :exec
-- Recomputes the given threads' summaries (inbox_thread_folders and the thread counters) from their messages;
-- every path that adds, flags, moves or deletes messages calls it once per batch, in its transaction.
SELECT inbox_thread_refresh(@organization_id::uuid, @ids::uuid[]);

-- name: InboxThreadFor :one
-- The thread a message joins: the thread of a stored message it answers or references, else of a stored
-- message that references it (a reply stored before its parent).
SELECT thread_id FROM inbox_messages
WHERE organization_id = @organization_id AND mailbox_id = @mailbox_id
  AND ((message_id <> '' AND message_id = ANY(@parents::text[]))
       OR (@message_id::text <> '' AND thread_references @> ARRAY[@message_id::text]))
ORDER BY received_at
LIMIT 1;

-- name: InboxThreadOfSend :one
-- The thread a reply or composed message sent from this mailbox was given (send_tasks.thread_id), for its own
-- copy in Sent or an answer to it that no stored message joins to a thread yet (a plain SMTP server keeps no
-- copy in Sent), so the thread id the API answered on sending is the thread the conversation lands in.
SELECT thread_id::uuid AS thread_id,
       EXISTS (SELECT 1 FROM inbox_threads t WHERE t.organization_id = s.organization_id AND t.id = s.thread_id) AS stored
FROM send_tasks s
WHERE s.organization_id = @organization_id AND s.mailbox_id = @mailbox_id AND s.thread_id IS NOT NULL
  AND s.message_id = ANY(@message_ids::text[])
ORDER BY s.created_at
LIMIT 1;

-- name: InboxThreadInsert :exec
INSERT INTO inbox_threads (organization_id, id, mailbox_id, subject, provider_thread_id, message_count, last_message_at, conversation_key)
VALUES (@organization_id, @id, @mailbox_id, @subject, @provider_thread_id, 0, @last_message_at, @conversation_key);

-- name: InboxMessageInsert :execrows
INSERT INTO inbox_messages (organization_id, id, mailbox_id, thread_id, folder, folder_role, uid_validity, uid,
  message_id, in_reply_to, thread_references, from_email, from_name, to_list, cc_list, subject, body_text, body_html,
  flags, seen, size, sent_at, received_at, bcc_list, reply_to_list, mod_seq, gmail_id, snippet, body_truncated,
  auto_headers, outbound)
VALUES (@organization_id, @id, @mailbox_id, @thread_id, @folder, @folder_role, @uid_validity, @uid,
  @message_id, @in_reply_to, @thread_references::text[], @from_email, @from_name, @to_list::text[], @cc_list::text[],
  @subject, @body_text, @body_html, @flags::text[], @seen, @size, sqlc.narg(sent_at), @received_at, @bcc_list::text[],
  @reply_to_list::text[], @mod_seq, @gmail_id, @snippet, @body_truncated, @auto_headers, @outbound)
ON CONFLICT (organization_id, mailbox_id, folder, uid_validity, uid) DO NOTHING;

-- name: InboxMessageAdopt :one
-- A message fetched from a folder that a stored message of the mailbox is being moved to (same Message-ID,
-- move_to naming this folder): the move reached the server before its relay recorded where the message
-- landed, so the stored row takes the new place instead of a duplicate being stored.
UPDATE inbox_messages m SET folder = @folder, folder_role = @folder_role, uid_validity = @uid_validity, uid = @uid,
  move_to = '', flags = @flags::text[], seen = @seen, mod_seq = @mod_seq, updated_at = now()
WHERE m.organization_id = @organization_id AND m.id = (
  SELECT p.id FROM inbox_messages p
  WHERE p.organization_id = @organization_id AND p.mailbox_id = @mailbox_id AND p.message_id = @message_id
    AND p.message_id <> '' AND p.move_to = @folder
  ORDER BY p.received_at, p.id
  LIMIT 1)
RETURNING m.id, m.thread_id;

-- name: InboxMessagesStored :one
SELECT count(*) FROM inbox_messages WHERE organization_id = $1 AND mailbox_id = $2;

-- name: MailboxSyncUnleased :many
SELECT s.organization_id::uuid AS organization_id, s.id::uuid AS id
FROM mailbox_sync_unleased(@now::timestamptz, @row_limit::integer) AS s;

-- name: MailboxMarkSynced :exec
UPDATE mailboxes SET last_synced_at = now() WHERE organization_id = $1 AND id = $2;

-- name: InboxMessagesSetFlags :many
-- Brings stored flags up to date from a FETCH FLAGS answer, given as [{uid, flags, mod_seq}] of one folder
-- generation; rows whose flags did not change are left alone. Answers the changed messages, for their events.
UPDATE inbox_messages m SET flags = c.flags, seen = '\Seen' = ANY (c.flags), mod_seq = greatest(m.mod_seq, c.mod_seq),
  updated_at = now()
FROM (
  SELECT (e->>'uid')::bigint AS uid, ARRAY(SELECT jsonb_array_elements_text(e->'flags')) AS flags,
    coalesce((e->>'mod_seq')::bigint, 0) AS mod_seq
  FROM jsonb_array_elements(@changes::jsonb) AS e
) c
WHERE m.organization_id = @organization_id AND m.mailbox_id = @mailbox_id AND m.folder = @folder
  AND m.uid_validity = @uid_validity AND m.uid = c.uid AND m.flags IS DISTINCT FROM c.flags
RETURNING m.id, m.mailbox_id, m.thread_id, m.folder_role, m.message_id, m.from_email, m.subject, m.seen;

-- name: InboxFolderUIDs :many
-- The newest stored UIDs (at most row_limit) of one folder generation, without those being moved away (a
-- move's relay takes them out of the folder itself): what deletion detection compares with the server.
SELECT uid FROM inbox_messages
WHERE organization_id = @organization_id AND mailbox_id = @mailbox_id AND folder = @folder AND uid_validity = @uid_validity
  AND move_to = ''
ORDER BY uid DESC
LIMIT @row_limit;

-- name: InboxMessagesDeleteUIDs :many
-- Messages the server no longer has (expunged there): deleted, unless a move was requested meanwhile.
DELETE FROM inbox_messages
WHERE organization_id = @organization_id AND mailbox_id = @mailbox_id AND folder = @folder AND uid_validity = @uid_validity
  AND uid = ANY (@uids::bigint[]) AND move_to = ''
RETURNING id, mailbox_id, thread_id, folder_role, message_id, from_email, subject, seen;

-- name: InboxMessagesMarkSeen :many
-- Records a read or unread change on stored messages of one mailbox; answers where each lives on the
-- server, for the relay.
UPDATE inbox_messages SET seen = @seen,
  flags = CASE WHEN @seen::boolean THEN array_append(array_remove(flags, '\Seen'), '\Seen') ELSE array_remove(flags, '\Seen') END,
  updated_at = now()
WHERE organization_id = @organization_id AND mailbox_id = @mailbox_id AND id = ANY (@ids::uuid[]) AND seen <> @seen
RETURNING id, mailbox_id, thread_id, folder_role, message_id, from_email, subject, seen;

-- name: InboxMessagesLocate :many
SELECT id, folder, uid_validity, uid, seen FROM inbox_messages
WHERE organization_id = @organization_id AND mailbox_id = @mailbox_id AND id = ANY (@ids::uuid[]);

-- name: InboxThreadReplyTarget :one
-- The message a reply sent into a thread answers: the thread's newest message that has a Message-ID (empty
-- when none has), with the mailbox the thread was synced from. Arrival times have whole seconds; among
-- messages of the same second the one deepest in the conversation (the longest References) is the newest.
SELECT t.mailbox_id, coalesce(m.message_id, '')::text AS message_id, coalesce(m.in_reply_to, '')::text AS in_reply_to,
  coalesce(m.thread_references, '{}')::text[] AS thread_references
FROM inbox_threads t
LEFT JOIN LATERAL (
  SELECT im.message_id, im.in_reply_to, im.thread_references FROM inbox_messages im
  WHERE im.organization_id = @organization_id AND im.thread_id = t.id AND im.message_id <> ''
  ORDER BY im.received_at DESC, cardinality(im.thread_references) DESC, im.id DESC
  LIMIT 1
) m ON true
WHERE t.organization_id = @organization_id AND t.id = @id;

-- name: InboxMoveUnavailable :many
-- The mailboxes of the given messages that have no synced folder of the role a move asks for.
SELECT DISTINCT b.id, b.email FROM inbox_messages m
JOIN mailboxes b ON b.organization_id = m.organization_id AND b.id = m.mailbox_id
WHERE m.organization_id = @organization_id AND m.id = ANY (@ids::uuid[])
  AND NOT EXISTS (SELECT 1 FROM mailbox_folders f WHERE f.organization_id = m.organization_id AND f.mailbox_id = m.mailbox_id AND f.role = @role)
ORDER BY b.email;

-- name: InboxMessagesMove :many
-- Moves messages to their mailbox's folder of a role, here at once: folder_role is the destination's, and
-- move_to names the destination folder until the relay has moved the message on the server (empty when the
-- message is back where it physically is). Answers the messages whose folder changed.
WITH dest AS (
  SELECT DISTINCT ON (f.mailbox_id) f.mailbox_id, f.name FROM mailbox_folders f
  WHERE f.organization_id = @organization_id AND f.role = @role
  ORDER BY f.mailbox_id, f.name
)
UPDATE inbox_messages m SET folder_role = @role, move_to = CASE WHEN d.name = m.folder THEN '' ELSE d.name END,
  updated_at = now()
FROM dest d
WHERE m.organization_id = @organization_id AND m.id = ANY (@ids::uuid[]) AND d.mailbox_id = m.mailbox_id
  AND m.folder_role <> @role
RETURNING m.id, m.mailbox_id, m.thread_id, m.folder_role, m.message_id, m.from_email, m.subject, m.seen;

-- name: InboxMovesPending :many
-- A mailbox's messages whose move the relay has still to make on the server, where they still are.
SELECT id, folder, uid_validity, uid, move_to, message_id FROM inbox_messages
WHERE organization_id = @organization_id AND mailbox_id = @mailbox_id AND move_to <> ''
ORDER BY folder, move_to, uid
LIMIT @row_limit;

-- name: InboxMessageMoved :execrows
-- Records where a relayed move put a message (the destination's UIDVALIDITY and UID from COPYUID), in place
-- so it keeps its id; nothing when the destination's sync took it in first (adopted) or a row already holds
-- that place.
UPDATE inbox_messages m SET folder = @folder, uid_validity = @uid_validity, uid = @uid, move_to = '', updated_at = now()
WHERE m.organization_id = @organization_id AND m.id = @id AND m.move_to = @folder AND m.folder = @from_folder AND m.uid = @from_uid
  AND NOT EXISTS (
    SELECT 1 FROM inbox_messages x WHERE x.organization_id = m.organization_id AND x.mailbox_id = m.mailbox_id
      AND x.folder = @folder AND x.uid_validity = @uid_validity AND x.uid = @uid);

-- name: InboxMessageMoveLost :many
-- Deletes a message whose relayed move left it without a place of its own: still pending where it was, while
-- another row holds its new place, or moved without a UID reported and without a Message-ID the
-- destination's sync could adopt it by (that sync stores it anew).
DELETE FROM inbox_messages
WHERE organization_id = @organization_id AND id = @id AND move_to = @folder AND folder = @from_folder AND uid = @from_uid
RETURNING id, mailbox_id, thread_id, folder_role, message_id, from_email, subject, seen;
