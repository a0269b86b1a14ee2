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

-- name: SyncFolderForget :exec
-- A new UIDVALIDITY: the folder's stored messages belong to a generation that no longer exists. Their threads
-- count them no more; threads left empty go with them.
WITH gone AS (
  DELETE FROM inbox_messages m WHERE m.organization_id = @organization_id AND m.mailbox_id = @mailbox_id
    AND m.folder = @folder AND m.uid_validity <> @uid_validity
  RETURNING m.thread_id
), counts AS (
  SELECT thread_id, count(*) AS n FROM gone GROUP BY thread_id
)
UPDATE inbox_threads t SET message_count = t.message_count - counts.n
FROM counts WHERE t.organization_id = @organization_id AND t.id = counts.thread_id;

-- name: InboxThreadsDropEmpty :exec
DELETE FROM inbox_threads WHERE organization_id = $1 AND mailbox_id = $2 AND message_count = 0;

-- name: InboxThreadFor :one
-- The thread a message joins: the thread of a stored message it answers or references, else of a stored
-- message that references it (a reply stored before its parent).
SELECT thread_id FROM inbox_messages
WHERE organization_id = @organization_id AND mailbox_id = @mailbox_id
  AND ((message_id <> '' AND message_id = ANY(@parents::text[]))
       OR (@message_id::text <> '' AND thread_references @> ARRAY[@message_id::text]))
ORDER BY received_at
LIMIT 1;

-- name: InboxThreadInsert :exec
INSERT INTO inbox_threads (organization_id, id, mailbox_id, subject, provider_thread_id, message_count, last_message_at)
VALUES (@organization_id, @id, @mailbox_id, @subject, @provider_thread_id, 0, @last_message_at);

-- name: InboxThreadTouch :exec
UPDATE inbox_threads SET message_count = message_count + 1, last_message_at = greatest(last_message_at, @at)
WHERE organization_id = @organization_id AND id = @id;

-- name: InboxMessageInsert :execrows
INSERT INTO inbox_messages (organization_id, id, mailbox_id, thread_id, folder, folder_role, uid_validity, uid,
  message_id, in_reply_to, thread_references, from_email, from_name, to_list, cc_list, subject, body_text, body_html,
  flags, seen, size, sent_at, received_at)
VALUES (@organization_id, @id, @mailbox_id, @thread_id, @folder, @folder_role, @uid_validity, @uid,
  @message_id, @in_reply_to, @thread_references::text[], @from_email, @from_name, @to_list::text[], @cc_list::text[],
  @subject, @body_text, @body_html, @flags::text[], @seen, @size, sqlc.narg(sent_at), @received_at)
ON CONFLICT (organization_id, mailbox_id, folder, uid_validity, uid) DO NOTHING;

-- name: InboxMessagesStored :one
SELECT count(*) FROM inbox_messages WHERE organization_id = $1 AND mailbox_id = $2;

-- name: MailboxSyncUnleased :many
SELECT s.organization_id::uuid AS organization_id, s.id::uuid AS id
FROM mailbox_sync_unleased(@now::timestamptz, @row_limit::integer) AS s;

-- name: MailboxMarkSynced :exec
UPDATE mailboxes SET last_synced_at = now() WHERE organization_id = $1 AND id = $2;

-- name: InboxThreadDrop :exec
-- A thread made for a message that turned out to be stored already.
DELETE FROM inbox_threads WHERE organization_id = $1 AND id = $2 AND message_count = 0;

-- name: InboxMessagesSetFlags :execrows
-- Brings stored flags up to date from a FETCH FLAGS answer, given as [{uid, flags}] of one folder generation;
-- rows whose flags did not change are left alone.
UPDATE inbox_messages m SET flags = c.flags, seen = '\Seen' = ANY (c.flags)
FROM (
  SELECT (e->>'uid')::bigint AS uid, ARRAY(SELECT jsonb_array_elements_text(e->'flags')) AS flags
  FROM jsonb_array_elements(@changes::jsonb) AS e
) c
WHERE m.organization_id = @organization_id AND m.mailbox_id = @mailbox_id AND m.folder = @folder
  AND m.uid_validity = @uid_validity AND m.uid = c.uid AND m.flags IS DISTINCT FROM c.flags;

-- name: InboxMessagesMarkSeen :many
-- Records a read or unread change on stored messages of one mailbox; answers where each lives on the
-- server, for the relay.
UPDATE inbox_messages SET seen = @seen,
  flags = CASE WHEN @seen::boolean THEN array_append(array_remove(flags, '\Seen'), '\Seen') ELSE array_remove(flags, '\Seen') END
WHERE organization_id = @organization_id AND mailbox_id = @mailbox_id AND id = ANY (@ids::uuid[])
RETURNING id, folder, uid_validity, uid;

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
