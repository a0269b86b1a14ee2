-- The unified inbox's reads (internal/inbox/unibox). The thread list's statement is compiled from its filters
-- by unibox.ListSQL; everything else is here. mailbox_ids NULL means every mailbox of the organization (a
-- mailbox-scoped API key passes its own).

-- name: UniboxUnreadCount :one
-- Unread messages outside spam and trash, from the per-thread summaries (role 'all').
SELECT coalesce(sum(f.unread), 0)::bigint FROM inbox_thread_folders f
WHERE f.organization_id = @organization_id AND f.folder_role = 'all' AND f.unread > 0
  AND (sqlc.narg(mailbox_ids)::uuid[] IS NULL OR f.mailbox_id = ANY (sqlc.narg(mailbox_ids)::uuid[]));

-- name: UniboxFolderCounts :many
-- Threads per mailbox and folder role (with 'all'): how many, how many with an unread message, and how many
-- whose newest message there arrived since each window's start.
SELECT f.mailbox_id, f.folder_role, count(*)::bigint AS total, count(*) FILTER (WHERE f.unread > 0)::bigint AS unread,
  count(*) FILTER (WHERE f.last_message_at >= @today_start)::bigint AS today,
  count(*) FILTER (WHERE f.last_message_at >= @week_start)::bigint AS week
FROM inbox_thread_folders f
WHERE f.organization_id = @organization_id
  AND (sqlc.narg(mailbox_ids)::uuid[] IS NULL OR f.mailbox_id = ANY (sqlc.narg(mailbox_ids)::uuid[]))
GROUP BY f.mailbox_id, f.folder_role;

-- name: UniboxAwaitingReplyCount :one
SELECT count(*)::bigint FROM inbox_threads t
WHERE t.organization_id = @organization_id AND t.awaiting_reply
  AND (sqlc.narg(mailbox_ids)::uuid[] IS NULL OR t.mailbox_id = ANY (sqlc.narg(mailbox_ids)::uuid[]));

-- name: UniboxSnoozedCount :one
-- Threads (outside spam and trash) the user snoozed until a time after now.
SELECT count(*)::bigint FROM inbox_snoozes s
JOIN inbox_thread_folders f ON f.organization_id = s.organization_id AND f.thread_id = s.thread_id AND f.folder_role = 'all'
WHERE s.organization_id = @organization_id AND s.user_id = @user_id AND s.snoozed_until > @now
  AND (sqlc.narg(mailbox_ids)::uuid[] IS NULL OR f.mailbox_id = ANY (sqlc.narg(mailbox_ids)::uuid[]));

-- name: UniboxScheduledPendingCount :one
-- Replies and composed messages queued and not yet sent.
SELECT count(*)::bigint FROM send_tasks st
WHERE st.organization_id = @organization_id AND st.status = 'queued' AND st.kind IN ('reply', 'direct')
  AND (sqlc.narg(mailbox_ids)::uuid[] IS NULL OR st.mailbox_id = ANY (sqlc.narg(mailbox_ids)::uuid[]));

-- name: UniboxMailboxes :many
-- The organization's mailboxes, by address, with their tags.
SELECT m.id, m.email, m.name, m.tags FROM mailboxes m
WHERE m.organization_id = @organization_id
  AND (sqlc.narg(mailbox_ids)::uuid[] IS NULL OR m.id = ANY (sqlc.narg(mailbox_ids)::uuid[]))
ORDER BY m.email, m.id;

-- name: UniboxLabelsOfKind :many
SELECT l.id, l.title, l.color FROM labels l
WHERE l.organization_id = @organization_id AND l.kind = @kind
ORDER BY l.position, l.id;

-- name: UniboxCategoryCounts :many
-- Threads (outside spam and trash) per category, and how many of them have an unread message.
SELECT tl.label_id, count(*)::bigint AS total, count(*) FILTER (WHERE f.unread > 0)::bigint AS unread
FROM inbox_thread_labels tl
JOIN inbox_thread_folders f ON f.organization_id = tl.organization_id AND f.thread_id = tl.thread_id AND f.folder_role = 'all'
WHERE tl.organization_id = @organization_id
  AND (sqlc.narg(mailbox_ids)::uuid[] IS NULL OR f.mailbox_id = ANY (sqlc.narg(mailbox_ids)::uuid[]))
GROUP BY tl.label_id;

-- name: UniboxThreadGet :one
SELECT t.id, t.mailbox_id, t.conversation_key FROM inbox_threads t
WHERE t.organization_id = @organization_id AND t.id = @id;

-- name: UniboxThreadLabels :many
-- A thread's categories, in label order.
SELECT l.id, l.title, l.color FROM inbox_thread_labels tl
JOIN labels l ON l.organization_id = tl.organization_id AND l.id = tl.label_id AND l.kind = 'category'
WHERE tl.organization_id = @organization_id AND tl.thread_id = @thread_id
ORDER BY l.position, l.id;

-- name: UniboxConversationThreads :many
-- The threads of a conversation: the thread itself and, when it has a conversation key, every thread sharing
-- it, in the given mailboxes.
SELECT t.id FROM inbox_threads t
WHERE t.organization_id = @organization_id
  AND (t.id = @thread_id OR (@conversation_key::text <> '' AND t.conversation_key = @conversation_key::text))
  AND (sqlc.narg(mailbox_ids)::uuid[] IS NULL OR t.mailbox_id = ANY (sqlc.narg(mailbox_ids)::uuid[]));

-- name: UniboxThreadMessages :many
-- One page of a conversation's messages, oldest first (received_at, id) after the position (NULLs: first
-- page). A Message-ID stored more than once (the same mail in several mailboxes or folders) is shown once: the
-- copy of the thread asked for, else the earliest stored. parent_id is the message it answers, when stored in
-- its thread.
SELECT d.id, d.mailbox_id, d.thread_id, d.message_id, d.gmail_id, d.uid, d.mod_seq, d.flags, d.bcc_list, d.cc_list,
  d.from_email, d.from_name, d.in_reply_to, d.reply_to_list, d.to_list, d.subject, d.size, d.received_at, d.sent_at,
  d.snippet, d.seen, d.body_text, d.body_html, d.body_truncated, d.updated_at, d.created_at, d.intent,
  d.intent_confidence, d.intent_evidence, d.unsubscribe_request, d.return_date,
  coalesce((SELECT p.id::text FROM inbox_messages p WHERE p.organization_id = d.organization_id AND p.thread_id = d.thread_id
     AND d.in_reply_to <> '' AND p.message_id = d.in_reply_to ORDER BY p.received_at, p.id LIMIT 1), '')::text AS parent_id
FROM (
  SELECT DISTINCT ON (CASE WHEN m.message_id = '' THEN m.id::text ELSE m.message_id END) m.*
  FROM inbox_messages m
  WHERE m.organization_id = @organization_id AND m.thread_id = ANY (@thread_ids::uuid[])
  ORDER BY CASE WHEN m.message_id = '' THEN m.id::text ELSE m.message_id END, m.thread_id = @thread_id DESC, m.received_at, m.id
) d
WHERE sqlc.narg(after_at)::timestamptz IS NULL OR (d.received_at, d.id) > (sqlc.narg(after_at)::timestamptz, sqlc.narg(after_id)::uuid)
ORDER BY d.received_at, d.id
LIMIT @row_limit;

-- name: UniboxMessageGet :one
SELECT m.id, m.mailbox_id, m.thread_id, m.message_id, m.gmail_id, m.uid, m.mod_seq, m.flags, m.bcc_list, m.cc_list,
  m.from_email, m.from_name, m.in_reply_to, m.reply_to_list, m.to_list, m.subject, m.size, m.received_at, m.sent_at,
  m.snippet, m.seen, m.body_text, m.body_html, m.body_truncated, m.updated_at, m.created_at, m.intent,
  m.intent_confidence, m.intent_evidence, m.unsubscribe_request, m.return_date,
  coalesce((SELECT p.id::text FROM inbox_messages p WHERE p.organization_id = m.organization_id AND p.thread_id = m.thread_id
     AND m.in_reply_to <> '' AND p.message_id = m.in_reply_to ORDER BY p.received_at, p.id LIMIT 1), '')::text AS parent_id
FROM inbox_messages m
WHERE m.organization_id = @organization_id AND m.id = @id;

-- name: UniboxCategoryThreads :many
-- Up to row_limit threads carrying any of the categories (the list's candidates for a category filter).
SELECT DISTINCT tl.thread_id FROM inbox_thread_labels tl
WHERE tl.organization_id = @organization_id AND tl.label_id = ANY (@label_ids::uuid[])
LIMIT @row_limit;
