-- The deliverability and warmup reports (internal/analytics/posture). They read the rollups of
-- migrations/00040_analytics.sql over whole UTC days (first_day to last_day, both included) and a few counts of
-- current state; never send_tasks or the event tables.

-- name: PostureOrgDays :many
-- The organization's counters per day and kind (campaign, direct, warmup) over the window: a few rows per day.
SELECT day, kind,
  sum(sent)::bigint AS sent, sum(opens)::bigint AS opens, sum(machine_opens)::bigint AS machine_opens,
  sum(clicks)::bigint AS clicks, sum(machine_clicks)::bigint AS machine_clicks, sum(replies)::bigint AS replies,
  sum(intent_positive)::bigint AS intent_positive, sum(intent_negative)::bigint AS intent_negative,
  sum(intent_question)::bigint AS intent_question, sum(intent_neutral)::bigint AS intent_neutral,
  sum(intent_out_of_office)::bigint AS intent_out_of_office, sum(intent_automated)::bigint AS intent_automated,
  sum(bounces_hard)::bigint AS bounces_hard, sum(bounces_soft)::bigint AS bounces_soft,
  sum(complaints)::bigint AS complaints, sum(unsubscribes)::bigint AS unsubscribes,
  sum(placement_inbox)::bigint AS placement_inbox, sum(placement_spam)::bigint AS placement_spam
FROM analytics_org_days
WHERE organization_id = @organization_id::uuid AND day BETWEEN @first_day::date AND @last_day::date
GROUP BY day, kind
ORDER BY day, kind;

-- name: PostureMailboxes :many
-- Each mailbox's deliverability over the window, per provider it sent as (a mailbox that changed provider has
-- a row for each): sends, bounces and complaints of campaign and direct traffic, seed placements of any kind
-- (only warmup traffic carries seeds). Mailboxes without campaign or direct rows are left out; a deleted
-- mailbox keeps its rows with an empty address.
SELECT d.mailbox_id, coalesce(m.email, '')::text AS email, d.provider,
  (sum(d.sent) FILTER (WHERE d.kind <> 'warmup'))::bigint AS sent,
  (sum(d.bounces_hard) FILTER (WHERE d.kind <> 'warmup'))::bigint AS bounces_hard,
  (sum(d.bounces_soft) FILTER (WHERE d.kind <> 'warmup'))::bigint AS bounces_soft,
  (sum(d.complaints) FILTER (WHERE d.kind <> 'warmup'))::bigint AS complaints,
  sum(d.placement_inbox)::bigint AS placement_inbox, sum(d.placement_spam)::bigint AS placement_spam
FROM analytics_mailbox_days d
LEFT JOIN mailboxes m ON m.organization_id = d.organization_id AND m.id = d.mailbox_id
WHERE d.organization_id = @organization_id::uuid AND d.day BETWEEN @first_day::date AND @last_day::date
GROUP BY d.mailbox_id, m.email, d.provider
HAVING count(*) FILTER (WHERE d.kind <> 'warmup') > 0
ORDER BY d.mailbox_id, d.provider;

-- name: PostureCampaigns :many
-- Each campaign's deliverability over the window (campaign rows are email steps only), with its name.
SELECT d.campaign_id, c.name,
  sum(d.sent)::bigint AS sent, sum(d.bounces_hard)::bigint AS bounces_hard, sum(d.bounces_soft)::bigint AS bounces_soft,
  sum(d.complaints)::bigint AS complaints
FROM analytics_campaign_days d
JOIN campaigns c ON c.organization_id = d.organization_id AND c.id = d.campaign_id
WHERE d.organization_id = @organization_id::uuid AND d.day BETWEEN @first_day::date AND @last_day::date
GROUP BY d.campaign_id, c.name
ORDER BY d.campaign_id;

-- name: PostureCurrent :one
-- The organization's current state beside the window: recipients suppressed now (entries in force at now) and
-- dead letters (webhook deliveries abandoned after their last attempt, or because their endpoint was disabled,
-- and not redelivered since).
SELECT
  (SELECT count(*) FROM suppressions s
   WHERE s.organization_id = @organization_id::uuid AND (s.expires_at IS NULL OR s.expires_at > @now::timestamptz))::bigint AS suppressed,
  (SELECT count(*) FROM webhook_deliveries w
   WHERE w.organization_id = @organization_id::uuid AND w.status = 'abandoned')::bigint AS dead_letters;

-- name: PostureWarmupMailboxes :many
-- The mailboxes a warmup report covers (only_ids narrows them; NULL is every mailbox of the organization)
-- with their warmup settings, which plan each day's target volume (mailbox.RampOf reads the row).
SELECT * FROM mailboxes
WHERE organization_id = @organization_id::uuid
  AND (sqlc.narg(only_ids)::uuid[] IS NULL OR id = ANY(sqlc.narg(only_ids)::uuid[]))
ORDER BY id;

-- name: PostureWarmupDays :many
-- Warmup sends and replies per day over the window, of the mailboxes only_ids names (NULL: all of them).
SELECT day, sum(sent)::bigint AS sent, sum(replies)::bigint AS replies
FROM analytics_mailbox_days
WHERE organization_id = @organization_id::uuid AND kind = 'warmup'
  AND day BETWEEN @first_day::date AND @last_day::date
  AND (sqlc.narg(only_ids)::uuid[] IS NULL OR mailbox_id = ANY(sqlc.narg(only_ids)::uuid[]))
GROUP BY day
ORDER BY day;
