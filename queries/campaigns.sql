-- Campaigns: the model a person or an agent configures (part 3 "Campaign"). Every statement names
-- organization_id; RLS is the second wall.

-- name: CampaignInsert :one
INSERT INTO campaigns (organization_id, id, user_id, name, description, kind, stop_on_reply, open_tracking,
  link_tracking, text_only, unsubscribe_header, risky_emails, daily_limit, cc, bcc, start_date, end_date, timezone,
  days, start_time, end_time, schedule_windows, contact_order_by, contact_order_dir, contact_order_field,
  sender_strategy, rotation_mode, ramp_enabled, ramp_start, ramp_increment, ramp_ceiling, esp_match_mode,
  max_new_leads_per_day, prioritize_new_leads, entry_delay_minutes, continuous, tracking_domain, utm_tracking,
  utm_source, utm_medium, utm_campaign, advanced, advanced_updated_at)
VALUES (@organization_id, @id, sqlc.narg(user_id), @name, @description, @kind, @stop_on_reply, @open_tracking,
  @link_tracking, @text_only, @unsubscribe_header, @risky_emails, @daily_limit, @cc, @bcc, sqlc.narg(start_date),
  sqlc.narg(end_date), @timezone, @days, @start_time, @end_time, @schedule_windows, @contact_order_by,
  @contact_order_dir, sqlc.narg(contact_order_field), @sender_strategy, @rotation_mode, @ramp_enabled, @ramp_start,
  @ramp_increment, @ramp_ceiling, @esp_match_mode, @max_new_leads_per_day, @prioritize_new_leads,
  @entry_delay_minutes, @continuous, @tracking_domain, @utm_tracking, @utm_source, @utm_medium, @utm_campaign,
  @advanced, sqlc.narg(advanced_updated_at))
RETURNING *;

-- name: CampaignGet :one
SELECT * FROM campaigns WHERE organization_id = @organization_id AND id = @id;

-- name: CampaignGetForUpdate :one
SELECT * FROM campaigns WHERE organization_id = @organization_id AND id = @id FOR UPDATE;

-- name: CampaignUpdate :one
-- Writes every settable field (the campaigns package loads the row, applies the patch and validates the whole).
UPDATE campaigns SET name = @name, description = @description, status = @status, stop_on_reply = @stop_on_reply,
  open_tracking = @open_tracking, link_tracking = @link_tracking, text_only = @text_only,
  unsubscribe_header = @unsubscribe_header, risky_emails = @risky_emails, daily_limit = @daily_limit, cc = @cc,
  bcc = @bcc, start_date = sqlc.narg(start_date), end_date = sqlc.narg(end_date), timezone = @timezone, days = @days,
  start_time = @start_time, end_time = @end_time, schedule_windows = @schedule_windows,
  contact_order_by = @contact_order_by, contact_order_dir = @contact_order_dir,
  contact_order_field = sqlc.narg(contact_order_field), sender_strategy = @sender_strategy,
  rotation_mode = @rotation_mode, ramp_enabled = @ramp_enabled, ramp_start = @ramp_start,
  ramp_increment = @ramp_increment, ramp_ceiling = @ramp_ceiling, esp_match_mode = @esp_match_mode,
  max_new_leads_per_day = @max_new_leads_per_day, prioritize_new_leads = @prioritize_new_leads,
  entry_delay_minutes = @entry_delay_minutes, continuous = @continuous, idle_since = sqlc.narg(idle_since),
  tracking_domain = @tracking_domain, tracking_domain_verified_at = sqlc.narg(tracking_domain_verified_at),
  utm_tracking = @utm_tracking, utm_source = @utm_source, utm_medium = @utm_medium, utm_campaign = @utm_campaign,
  started_at = sqlc.narg(started_at), completed_at = sqlc.narg(completed_at), paused_reason = @paused_reason,
  last_status_change_at = sqlc.narg(last_status_change_at), updated_at = now()
WHERE organization_id = @organization_id AND id = @id
RETURNING *;

-- name: CampaignDelete :execrows
-- Deletes the campaign and its analytics (its rollup and engagement rows carry no foreign key: see
-- migrations/00040_analytics.sql); the organization's and mailboxes' days keep its sends.
WITH days AS (
  DELETE FROM analytics_campaign_days d WHERE d.organization_id = @organization_id::uuid AND d.campaign_id = @id::uuid
), steps AS (
  DELETE FROM analytics_step_days s WHERE s.organization_id = @organization_id::uuid AND s.campaign_id = @id::uuid
), hours AS (
  DELETE FROM analytics_campaign_hours h WHERE h.organization_id = @organization_id::uuid AND h.campaign_id = @id::uuid
), engaged AS (
  DELETE FROM analytics_engagement e WHERE e.organization_id = @organization_id::uuid AND e.campaign_id = @id::uuid
)
DELETE FROM campaigns c WHERE c.organization_id = @organization_id::uuid AND c.id = @id::uuid;

-- name: CampaignTasksCancel :many
-- A deleted or stopped campaign's sends (or, with contact_id, one held lead's) that no attempt has claimed yet;
-- a task being sent finishes. Each
-- cancelled send's lead goes back to the step it was for, due when the campaign runs again (a data-modifying
-- WITH runs whether or not it is read). One row per cancelled send says what its place was, so the caller can
-- give it back: when the engine planned the lead's step (NULL for a send no lead waits on), whether it was the
-- lead's first step, and the zones its campaign's day and its mailbox's day are counted in.
WITH cancelled AS (
  UPDATE send_tasks SET status = 'canceled', error_code = @error_code, error_message = @reason
  WHERE send_tasks.organization_id = @organization_id AND send_tasks.campaign_id = @campaign_id
    AND send_tasks.status = 'queued'
    AND (sqlc.narg(contact_id)::uuid IS NULL OR send_tasks.contact_id = sqlc.narg(contact_id)::uuid)
  RETURNING send_tasks.id, send_tasks.campaign_id, send_tasks.mailbox_id
), prior AS (
  -- Every part of a WITH sees the rows as they were: the step's planning time before the rewind clears it.
  SELECT l.task_id, l.last_step_at FROM campaign_leads l
  WHERE l.organization_id = @organization_id AND l.campaign_id = @campaign_id
    AND l.task_id IN (SELECT id FROM cancelled)
), rewound AS (
  UPDATE campaign_leads l SET task_id = NULL, step_position = greatest(l.step_position - 1, 0),
    thread_refs = l.thread_refs[1:greatest(cardinality(l.thread_refs) - 1, 0)], due_at = now(), wait_reason = '',
    last_step_at = NULL, updated_at = now()
  FROM cancelled
  WHERE l.organization_id = @organization_id AND l.campaign_id = @campaign_id AND l.task_id = cancelled.id
  RETURNING cancelled.id AS task_id, l.step_position = 0 AND l.sent = 0 AS first_step
)
SELECT c.mailbox_id, coalesce(m.timezone, '')::text AS mailbox_timezone, k.timezone AS campaign_timezone,
  p.last_step_at AS planned_at, coalesce(r.first_step, false)::boolean AS first_step
FROM cancelled c
JOIN campaigns k ON k.organization_id = @organization_id AND k.id = c.campaign_id
LEFT JOIN rewound r ON r.task_id = c.id
LEFT JOIN prior p ON p.task_id = c.id
LEFT JOIN mailboxes m ON m.organization_id = @organization_id AND m.id = c.mailbox_id
ORDER BY c.mailbox_id;

-- name: CampaignDealsUnlink :exec
UPDATE deals SET campaign_id = NULL, updated_at = now()
WHERE organization_id = @organization_id AND campaign_id = @campaign_id;

-- name: CampaignList :many
-- Newest first by id (UUIDv7); status 'paused' matches every paused variant.
SELECT * FROM campaigns c
WHERE c.organization_id = @organization_id
  AND (sqlc.narg(after)::uuid IS NULL OR c.id < sqlc.narg(after)::uuid)
  AND (sqlc.narg(query)::text IS NULL OR c.name ILIKE '%' || sqlc.narg(query)::text || '%')
  AND (sqlc.narg(folder)::uuid IS NULL OR EXISTS (SELECT 1 FROM campaign_labels cl
    WHERE cl.organization_id = c.organization_id AND cl.campaign_id = c.id AND cl.label_id = sqlc.narg(folder)::uuid))
  AND (cardinality(@statuses::text[]) = 0 OR c.status = ANY(@statuses::text[]))
  AND (sqlc.narg(kind)::text IS NULL OR c.kind = sqlc.narg(kind)::text)
ORDER BY c.id DESC
LIMIT @row_limit;

-- name: CampaignCount :one
SELECT count(*) FROM campaigns c
WHERE c.organization_id = @organization_id
  AND (sqlc.narg(query)::text IS NULL OR c.name ILIKE '%' || sqlc.narg(query)::text || '%')
  AND (sqlc.narg(folder)::uuid IS NULL OR EXISTS (SELECT 1 FROM campaign_labels cl
    WHERE cl.organization_id = c.organization_id AND cl.campaign_id = c.id AND cl.label_id = sqlc.narg(folder)::uuid))
  AND (cardinality(@statuses::text[]) = 0 OR c.status = ANY(@statuses::text[]))
  AND (sqlc.narg(kind)::text IS NULL OR c.kind = sqlc.narg(kind)::text);

-- name: CampaignOverview :one
SELECT count(*) AS total,
  count(*) FILTER (WHERE status = 'active') AS active,
  count(*) FILTER (WHERE status IN ('paused', 'paused_no_accounts', 'paused_trial_expired')) AS paused,
  count(*) FILTER (WHERE status = 'draft') AS draft,
  count(*) FILTER (WHERE status = 'completed') AS completed,
  count(*) FILTER (WHERE kind = 'one_time') AS one_time
FROM campaigns WHERE organization_id = @organization_id;

-- name: CampaignFolderCounts :many
SELECT cl.label_id, count(*) AS total FROM campaign_labels cl
JOIN labels l ON l.organization_id = cl.organization_id AND l.id = cl.label_id AND l.kind = 'folder'
WHERE cl.organization_id = @organization_id
GROUP BY cl.label_id ORDER BY cl.label_id;

-- name: CampaignLabelsOf :many
SELECT cl.campaign_id, cl.label_id, l.kind FROM campaign_labels cl
JOIN labels l ON l.organization_id = cl.organization_id AND l.id = cl.label_id
WHERE cl.organization_id = @organization_id AND cl.campaign_id = ANY(@campaign_ids::uuid[])
ORDER BY cl.campaign_id, l.position, l.id;

-- name: CampaignLabelsClear :exec
DELETE FROM campaign_labels cl USING labels l
WHERE cl.organization_id = @organization_id AND cl.campaign_id = @campaign_id
  AND l.organization_id = cl.organization_id AND l.id = cl.label_id AND l.kind = @kind;

-- name: CampaignLabelsAdd :exec
INSERT INTO campaign_labels (organization_id, campaign_id, label_id)
SELECT @organization_id, @campaign_id, unnest(@label_ids::uuid[])
ON CONFLICT DO NOTHING;

-- name: LabelsExisting :many
-- The ids among label_ids that are labels of kind in the organization.
SELECT id FROM labels WHERE organization_id = @organization_id AND kind = @kind AND id = ANY(@label_ids::uuid[]);

-- name: CampaignCreationTake :one
-- Counts one new campaign toward the organization's UTC day and answers the day's count.
INSERT INTO campaign_creation_days AS d (organization_id, day, created)
VALUES (@organization_id, (now() AT TIME ZONE 'UTC')::date, 1)
ON CONFLICT (organization_id, day) DO UPDATE SET created = d.created + 1
RETURNING created;

-- name: CampaignLogInsert :exec
INSERT INTO campaign_logs (organization_id, campaign_id, id, contact_id, event_type, message, metadata)
VALUES (@organization_id, @campaign_id, @id, sqlc.narg(contact_id), @event_type, @message, @metadata);

-- name: CampaignLogList :many
SELECT * FROM campaign_logs
WHERE organization_id = @organization_id AND campaign_id = @campaign_id
  AND (sqlc.narg(before)::uuid IS NULL OR id < sqlc.narg(before)::uuid)
ORDER BY id DESC
LIMIT @row_limit;

-- name: CampaignLogCount :one
SELECT count(*) FROM campaign_logs WHERE organization_id = @organization_id AND campaign_id = @campaign_id;

-- name: CampaignLeadsPending :one
-- Whether the campaign has a lead with something left to do (start turns a finished campaign continuous).
SELECT EXISTS (SELECT 1 FROM campaign_leads
  WHERE organization_id = @organization_id AND campaign_id = @campaign_id AND state IN ('pending', 'active', 'paused'));

-- name: CampaignLeadsPendingCount :one
-- How many of the campaign's leads have something left to do: the recipients a start would mail, as the
-- agent policy gate weighs it.
SELECT count(*)::int FROM campaign_leads
WHERE organization_id = @organization_id AND campaign_id = @campaign_id AND state IN ('pending', 'active', 'paused');

-- name: CampaignLeadsSchedule :exec
-- Makes every waiting lead due now, so the engine re-decides its next send under the current settings. A held
-- lead stays held: it is due when its hold ends (campaign_leads.sql). The campaign's park ends too (its leads
-- are due by their own times again).
WITH unpark AS (
  UPDATE campaigns c SET parked_until = NULL WHERE c.organization_id = @organization_id AND c.id = @campaign_id
)
UPDATE campaign_leads l SET due_at = now(), wait_reason = '', updated_at = now()
WHERE l.organization_id = @organization_id AND l.campaign_id = @campaign_id AND l.state IN ('pending', 'active')
  AND l.hold_since IS NULL;
