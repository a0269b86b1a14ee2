-- What hangs off one contact: notes, the activity log, the merged timeline, the mail sent to it and its deals.
-- Every feed reads one contact's rows through an index that starts with (organization_id, contact_id), so a
-- feed costs what that contact has, not what the organization has.

-- name: ContactFeedSubject :one
-- The contact a feed hangs off: whether it exists in the organization, and the creation facts the timeline
-- shows when no contact_created activity recorded them.
SELECT id, source, created_at FROM contacts
WHERE organization_id = @organization_id::uuid AND id = @id::uuid;

-- name: ContactNoteList :many
-- Newest first with the author (NULL once the person's account is gone; the note keeps its user_id).
SELECT n.id, n.contact_id, n.user_id, n.content, n.created_at, n.updated_at,
       u.id AS author_id, u.email AS author_email, u.first_name AS author_first_name, u.last_name AS author_last_name
FROM contact_notes n
LEFT JOIN users u ON u.id = n.user_id
WHERE n.organization_id = @organization_id::uuid AND n.contact_id = @contact_id::uuid
  AND (sqlc.narg(before_created_at)::timestamptz IS NULL
       OR (n.created_at, n.id) < (sqlc.narg(before_created_at)::timestamptz, sqlc.narg(before_id)::uuid))
ORDER BY n.created_at DESC, n.id DESC
LIMIT @row_limit::int;

-- name: ContactNoteInsert :one
WITH n AS (
  INSERT INTO contact_notes (organization_id, id, contact_id, user_id, content)
  VALUES (@organization_id::uuid, @id::uuid, @contact_id::uuid, @user_id::uuid, @content::text)
  RETURNING *
)
SELECT n.id, n.contact_id, n.user_id, n.content, n.created_at, n.updated_at,
       u.id AS author_id, u.email AS author_email, u.first_name AS author_first_name, u.last_name AS author_last_name
FROM n
LEFT JOIN users u ON u.id = n.user_id;

-- name: ContactNoteUpdate :one
-- Replaces the content; the author stays the person who wrote the note.
WITH n AS (
  UPDATE contact_notes SET content = @content::text, updated_at = now()
  WHERE organization_id = @organization_id::uuid AND contact_id = @contact_id::uuid AND id = @id::uuid
  RETURNING *
)
SELECT n.id, n.contact_id, n.user_id, n.content, n.created_at, n.updated_at,
       u.id AS author_id, u.email AS author_email, u.first_name AS author_first_name, u.last_name AS author_last_name
FROM n
LEFT JOIN users u ON u.id = n.user_id;

-- name: ContactNoteDelete :execrows
DELETE FROM contact_notes
WHERE organization_id = @organization_id::uuid AND contact_id = @contact_id::uuid AND id = @id::uuid;

-- name: ContactActivityInsert :exec
-- One activity of one type for many contacts in one statement (bulk changes record thousands at once).
INSERT INTO contact_activities (organization_id, id, contact_id, user_id, activity_type, metadata)
SELECT @organization_id::uuid, a.id, a.contact_id, sqlc.narg(user_id)::uuid, @activity_type::text, @metadata::jsonb
FROM (SELECT unnest(@ids::uuid[]) AS id, unnest(@contact_ids::uuid[]) AS contact_id) AS a;

-- name: ContactActivityList :many
-- Newest first with the acting person. Category changes are recorded for the timeline only: the activity
-- feed's contract has no type for them.
SELECT a.id, a.contact_id, a.user_id, a.activity_type, a.metadata, a.created_at,
       u.id AS author_id, u.email AS author_email, u.first_name AS author_first_name, u.last_name AS author_last_name
FROM contact_activities a
LEFT JOIN users u ON u.id = a.user_id
WHERE a.organization_id = @organization_id::uuid AND a.contact_id = @contact_id::uuid
  AND a.activity_type NOT IN ('category_added', 'category_removed')
  AND (sqlc.narg(before_created_at)::timestamptz IS NULL
       OR (a.created_at, a.id) < (sqlc.narg(before_created_at)::timestamptz, sqlc.narg(before_id)::uuid))
ORDER BY a.created_at DESC, a.id DESC
LIMIT @row_limit::int;

-- name: ContactTimelineList :many
-- The merged timeline, newest first, ordered by (at, rank, id): rank tells the sources apart at one instant
-- (0 the contact's own creation, 1 a recorded activity, 2 a send delivered, 3 an open, 4 a click, 5 a reply,
-- 6 a bounce, 7 another deliverability event (a complaint, an unsubscribe), 8 a suppression of the address),
-- so the triple is unique and a keyset over it neither repeats nor skips. Every open and click is listed,
-- a machine's too, with the verdict and the rule that decided it; bounces and complaints carry their
-- evidence. One contact's rows are few, so the union is sorted in memory.
SELECT e.at, e.rank, e.id, e.event_type, e.user_id, e.metadata, e.mailbox_id, e.from_email, e.from_name,
       e.campaign_id, e.campaign_name, e.step_id, e.step_name, e.task_id, e.subject, e.source, e.content,
       e.verdict, e.rule, e.url, e.user_agent, e.provider, e.reason, e.bounce_type, e.status_code, e.diagnostic
FROM (
  -- Recorded activities of a timeline type. A note shows its current content; a note since deleted is left
  -- out (an activity that carries its own content and names no note keeps it). An email event naming one of
  -- the contact's send tasks is left to the rows below, so it appears once.
  SELECT a.created_at AS at, 1 AS rank, a.id, a.activity_type AS event_type, a.user_id, a.metadata,
         NULL::uuid AS mailbox_id, ''::text AS from_email, ''::text AS from_name, NULL::uuid AS campaign_id,
         ''::text AS campaign_name, NULL::uuid AS step_id, ''::text AS step_name, NULL::uuid AS task_id,
         ''::text AS subject, coalesce(a.metadata->>'source', '')::text AS source,
         coalesce(n.content, a.metadata->>'content', '')::text AS content,
         NULL::text AS verdict, ''::text AS rule, ''::text AS url, ''::text AS user_agent, ''::text AS provider,
         ''::text AS reason, ''::text AS bounce_type, ''::text AS status_code, ''::text AS diagnostic
  FROM contact_activities a
  LEFT JOIN contact_notes n ON a.activity_type = 'note_added' AND n.organization_id = a.organization_id
    AND n.contact_id = a.contact_id AND n.id::text = a.metadata->>'note_id'
  WHERE a.organization_id = @organization_id::uuid AND a.contact_id = @contact_id::uuid
    AND a.activity_type IN ('email_sent', 'email_opened', 'email_clicked', 'email_replied', 'email_bounced',
      'note_added', 'contact_created', 'campaign_added', 'campaign_removed', 'category_added', 'category_removed')
    AND NOT (a.activity_type = 'note_added' AND a.metadata ? 'note_id' AND n.id IS NULL)
    AND NOT (a.activity_type LIKE 'email\_%' AND EXISTS (
      SELECT 1 FROM send_tasks t
      WHERE t.organization_id = a.organization_id AND t.contact_id = a.contact_id AND t.id::text = a.metadata->>'task_id'))
  UNION ALL
  -- The contact's own creation, unless an activity recorded it.
  SELECT c.created_at, 0, c.id, 'contact_created', NULL::uuid, '{}'::jsonb, NULL::uuid, '', '', NULL::uuid,
         '', NULL::uuid, '', NULL::uuid, '', c.source, '', NULL::text, '', '', '', '', '', '', '', ''
  FROM contacts c
  WHERE c.organization_id = @organization_id::uuid AND c.id = @contact_id::uuid
    AND NOT EXISTS (
      SELECT 1 FROM contact_activities x
      WHERE x.organization_id = c.organization_id AND x.contact_id = c.id AND x.activity_type = 'contact_created')
  UNION ALL
  -- Mail delivered to the contact (only once the task was handed to the provider) and its replies.
  SELECT ev.at, ev.rank, t.id, ev.event_type, NULL::uuid, '{}'::jsonb, t.mailbox_id, t.from_email, t.from_name,
         t.campaign_id, coalesce(cp.name, ''), t.step_id, t.step_name, t.id, t.subject, '', '', NULL::text, '', '',
         '', '', '', '', '', ''
  FROM send_tasks t
  LEFT JOIN campaigns cp ON cp.organization_id = t.organization_id AND cp.id = t.campaign_id
  CROSS JOIN LATERAL (VALUES
    (CASE WHEN t.status = 'sent' THEN t.sent_at END, 2, 'email_sent'),
    (t.replied_at, 5, 'email_replied')
  ) AS ev (at, rank, event_type)
  WHERE t.organization_id = @organization_id::uuid AND t.contact_id = @contact_id::uuid AND ev.at IS NOT NULL
  UNION ALL
  -- Every open and click of that mail, a machine's too, with its verdict and rule (NULL until judged).
  SELECT te.at, CASE te.kind WHEN 'open' THEN 3 ELSE 4 END, te.id, 'email_' || te.kind || 'ed', NULL::uuid,
         '{}'::jsonb, t.mailbox_id, t.from_email, t.from_name, t.campaign_id, coalesce(cp.name, ''), t.step_id,
         t.step_name, t.id, t.subject, '', '', te.verdict, coalesce(te.rule, ''), coalesce(te.url, ''),
         te.user_agent, '', '', '', '', ''
  FROM send_tasks t
  JOIN tracking_events te ON te.organization_id = t.organization_id AND te.task_id = t.id
  LEFT JOIN campaigns cp ON cp.organization_id = t.organization_id AND cp.id = t.campaign_id
  WHERE t.organization_id = @organization_id::uuid AND t.contact_id = @contact_id::uuid
  UNION ALL
  -- Bounces, complaints, unsubscribes and ingested events about the contact, with their evidence.
  SELECT d.at, CASE d.event_type WHEN 'open' THEN 3 WHEN 'click' THEN 4 WHEN 'reply' THEN 5 WHEN 'bounce' THEN 6 ELSE 7 END,
         d.id, CASE d.event_type WHEN 'open' THEN 'email_opened' WHEN 'click' THEN 'email_clicked'
                 WHEN 'reply' THEN 'email_replied' WHEN 'bounce' THEN 'email_bounced' ELSE 'deliverability' END,
         NULL::uuid, d.metadata, coalesce(t.mailbox_id, d.mailbox_id), coalesce(t.from_email, ''),
         coalesce(t.from_name, ''), coalesce(t.campaign_id, d.campaign_id), coalesce(cp.name, ''), t.step_id,
         coalesce(t.step_name, ''), d.task_id, coalesce(t.subject, ''), d.source, d.event_type, NULL::text, '', '', '',
         d.provider, d.reason, coalesce(d.bounce_type, ''), d.status_code, d.diagnostic
  FROM deliverability_events d
  LEFT JOIN send_tasks t ON t.organization_id = d.organization_id AND t.id = d.task_id
  LEFT JOIN campaigns cp ON cp.organization_id = d.organization_id AND cp.id = coalesce(t.campaign_id, d.campaign_id)
  WHERE d.organization_id = @organization_id::uuid AND d.contact_id = @contact_id::uuid
  UNION ALL
  -- Suppressions of the contact's address, whoever added them.
  SELECT s.created_at, 8, s.id, 'suppressed', NULL::uuid, '{}'::jsonb, NULL::uuid, '', '', s.campaign_id,
         coalesce(cp.name, ''), NULL::uuid, '', NULL::uuid, '', s.source, '', NULL::text, '', '', '', '', s.reason,
         '', '', ''
  FROM contacts c
  JOIN suppressions s ON s.organization_id = c.organization_id AND s.kind = 'email' AND s.value = lower(c.email)
  LEFT JOIN campaigns cp ON cp.organization_id = s.organization_id AND cp.id = s.campaign_id
  WHERE c.organization_id = @organization_id::uuid AND c.id = @contact_id::uuid
) AS e
WHERE (sqlc.narg(before)::timestamptz IS NULL OR e.at < sqlc.narg(before)::timestamptz)
  AND (sqlc.narg(after_at)::timestamptz IS NULL
       OR (e.at, e.rank, e.id) < (sqlc.narg(after_at)::timestamptz, sqlc.narg(after_rank)::int, sqlc.narg(after_id)::uuid))
ORDER BY e.at DESC, e.rank DESC, e.id DESC
LIMIT @row_limit::int;

-- name: ContactSentEmailList :many
-- The mail delivered to the contact, newest first. Ordered by sent_at to the second (the precision the API
-- shows) and then id, so before_at and before_id taken from the last row continue exactly where it ended.
SELECT t.id, t.status, t.message_id, t.subject, t.sent_at, t.mailbox_id, t.from_email, t.from_name,
       t.campaign_id, cp.name AS campaign_name, t.step_id, t.step_name,
       t.opened_at, t.clicked_at, t.replied_at, t.bounced_at
FROM send_tasks t
LEFT JOIN campaigns cp ON cp.organization_id = t.organization_id AND cp.id = t.campaign_id
WHERE t.organization_id = @organization_id::uuid AND t.contact_id = @contact_id::uuid
  AND t.status = 'sent' AND t.sent_at IS NOT NULL
  AND (sqlc.narg(before_sent_at)::timestamptz IS NULL
       OR (date_trunc('second', t.sent_at), t.id)
          < (date_trunc('second', sqlc.narg(before_sent_at)::timestamptz), sqlc.narg(before_id)::uuid))
ORDER BY date_trunc('second', t.sent_at) DESC, t.id DESC
LIMIT @row_limit::int;

-- name: ContactDealList :many
-- Every deal of the contact, newest first (the contract gives this list no paging).
SELECT * FROM deals
WHERE organization_id = @organization_id::uuid AND contact_id = @contact_id::uuid
ORDER BY created_at DESC, id DESC;
