-- What people do in the unified inbox (internal/inbox/actions): read/unread, snoozes, a thread's categories,
-- and the replies and composed messages queued but not yet sent. Every statement names the organization; a
-- mailbox-scoped API key passes its mailboxes as mailbox_ids (NULL: every mailbox of the organization).

-- name: InboxActionSeenByIDs :many
-- The listed messages whose read state differs from seen, with their mailbox (the relay goes per mailbox).
SELECT id, mailbox_id FROM inbox_messages
WHERE organization_id = @organization_id AND id = ANY (@ids::uuid[]) AND seen <> @seen::boolean
  AND (sqlc.narg(mailbox_ids)::uuid[] IS NULL OR mailbox_id = ANY (sqlc.narg(mailbox_ids)::uuid[]))
ORDER BY mailbox_id, id;

-- name: InboxActionSeenInFolder :many
-- Every message of a folder role whose read state differs from seen, with its mailbox.
SELECT id, mailbox_id FROM inbox_messages
WHERE organization_id = @organization_id AND folder_role = @folder_role AND seen <> @seen::boolean
  AND (sqlc.narg(mailbox_ids)::uuid[] IS NULL OR mailbox_id = ANY (sqlc.narg(mailbox_ids)::uuid[]))
ORDER BY mailbox_id, id;

-- name: InboxActionThread :one
SELECT id, mailbox_id FROM inbox_threads WHERE organization_id = @organization_id AND id = @id;

-- name: InboxActionSnoozeUpsert :one
-- One snooze per user and thread: snoozing again moves its time.
INSERT INTO inbox_snoozes (organization_id, id, user_id, thread_id, snoozed_until)
VALUES (@organization_id, @id, @user_id, @thread_id, @snoozed_until)
ON CONFLICT (organization_id, user_id, thread_id)
DO UPDATE SET snoozed_until = excluded.snoozed_until, updated_at = now()
RETURNING *;

-- name: InboxActionSnoozeDelete :exec
DELETE FROM inbox_snoozes WHERE organization_id = @organization_id AND user_id = @user_id AND thread_id = @thread_id;

-- name: InboxActionSnoozes :many
-- A user's snoozes that still hide their thread (snoozed_until after now), soonest first.
SELECT s.* FROM inbox_snoozes s
JOIN inbox_threads t ON t.organization_id = s.organization_id AND t.id = s.thread_id
WHERE s.organization_id = @organization_id AND s.user_id = @user_id AND s.snoozed_until > @now::timestamptz
  AND (sqlc.narg(mailbox_ids)::uuid[] IS NULL OR t.mailbox_id = ANY (sqlc.narg(mailbox_ids)::uuid[]))
ORDER BY s.snoozed_until, s.thread_id;

-- name: InboxActionThreadLabelsDrop :exec
-- Takes off a thread every category not in label_ids.
DELETE FROM inbox_thread_labels
WHERE organization_id = @organization_id AND thread_id = @thread_id AND NOT (label_id = ANY (@label_ids::uuid[]));

-- name: InboxActionThreadLabelsAdd :exec
-- Puts on a thread those of label_ids that are the organization's categories; other ids are ignored.
INSERT INTO inbox_thread_labels (organization_id, thread_id, label_id)
SELECT @organization_id, @thread_id, l.id FROM labels l
WHERE l.organization_id = @organization_id AND l.kind = 'category' AND l.id = ANY (@label_ids::uuid[])
ON CONFLICT DO NOTHING;

-- name: InboxActionThreadLabels :many
SELECT l.id, l.title, l.color FROM inbox_thread_labels tl
JOIN labels l ON l.organization_id = tl.organization_id AND l.id = tl.label_id
WHERE tl.organization_id = @organization_id AND tl.thread_id = @thread_id
ORDER BY l.position, l.title, l.id;

-- name: InboxActionPendingSends :one
-- How many replies and direct messages of the organization wait to be sent, and when the first leaves
-- (send_tasks_inbox_pending).
SELECT count(*)::int AS pending, coalesce(min(not_before), now())::timestamptz AS first_at FROM send_tasks
WHERE organization_id = @organization_id AND status = 'queued' AND kind IN ('reply', 'direct');

-- name: InboxActionScheduled :many
-- Queued replies and direct messages, next to leave first, with a snippet of the text (of the HTML, tags
-- removed, when there is no text).
SELECT t.id, t.not_before, t.created_at, m.id AS mailbox_id, m.email AS mailbox_email, m.name AS mailbox_name, t.to_list,
  t.subject, t.thread_id,
  left(btrim(regexp_replace(CASE WHEN btrim(t.body_text) <> '' THEN left(t.body_text, 1000)
    ELSE regexp_replace(left(t.body_html, 4000), '<[^>]*>', ' ', 'g') END, '\s+', ' ', 'g')), 200)::text AS snippet
FROM send_tasks t
JOIN mailboxes m ON m.organization_id = t.organization_id AND m.id = t.mailbox_id
WHERE t.organization_id = @organization_id AND t.status = 'queued' AND t.kind IN ('reply', 'direct')
  AND (sqlc.narg(thread_id)::uuid IS NULL OR t.thread_id = sqlc.narg(thread_id)::uuid)
  AND (sqlc.narg(mailbox_ids)::uuid[] IS NULL OR t.mailbox_id = ANY (sqlc.narg(mailbox_ids)::uuid[]))
ORDER BY t.not_before, t.id
LIMIT @row_limit;

-- name: InboxActionCancelScheduled :execrows
-- Cancels a queued reply or direct message; the pipeline's claim takes only queued tasks, so its job does
-- nothing when it comes.
UPDATE send_tasks SET status = 'canceled', error_code = 'canceled', error_message = 'Canceled before it was sent.'
WHERE organization_id = @organization_id AND id = @id AND status = 'queued' AND kind IN ('reply', 'direct')
  AND (sqlc.narg(mailbox_ids)::uuid[] IS NULL OR mailbox_id = ANY (sqlc.narg(mailbox_ids)::uuid[]));

-- name: InboxActionMessagesInScope :many
-- Those of the listed messages that belong to the given mailboxes (a mailbox-scoped key's).
SELECT id FROM inbox_messages
WHERE organization_id = @organization_id AND id = ANY (@ids::uuid[]) AND mailbox_id = ANY (@mailbox_ids::uuid[])
ORDER BY id;
