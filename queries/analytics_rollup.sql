-- Analytics rollups (internal/analytics/rollup): the counter tables' one write (RollupApply), the reads the
-- feeds attribute what just happened with, and the rebuild from the source rows. The feeds and the rebuild
-- attribute alike: a send's kind (campaign; direct and reply are direct; warmup), campaign, step, variant,
-- sending mailbox and that mailbox's provider.

-- name: RollupApply :exec
-- Adds one batch of deltas to every counter table in one statement: the rows (u) are already summed per table
-- (tbl 0 organization days, 1 campaign days, 2 step days, 3 campaign hours, 4 mailbox days) and key, and none
-- is all zeros. A campaign's rows are written only while the campaign exists (live). It takes no lock on the
-- campaign (see migrations/00040_analytics.sql): a row a transaction racing the campaign's delete writes is an
-- orphan no report reads.
WITH u AS MATERIALIZED (
  SELECT unnest(@tbls::int[]) AS tbl, unnest(@days::date[]) AS day, unnest(@hours::timestamptz[]) AS hour,
         unnest(@kinds::text[]) AS kind, unnest(@campaign_ids::uuid[]) AS campaign_id, unnest(@step_ids::uuid[]) AS step_id,
         unnest(@variant_ids::uuid[]) AS variant_id, unnest(@mailbox_ids::uuid[]) AS mailbox_id,
         unnest(@providers::text[]) AS provider,
         unnest(@sent::bigint[]) AS sent, unnest(@opens::bigint[]) AS opens,
         unnest(@machine_opens::bigint[]) AS machine_opens, unnest(@clicks::bigint[]) AS clicks,
         unnest(@machine_clicks::bigint[]) AS machine_clicks, unnest(@replies::bigint[]) AS replies,
         unnest(@intent_positive::bigint[]) AS intent_positive,
         unnest(@intent_negative::bigint[]) AS intent_negative,
         unnest(@intent_question::bigint[]) AS intent_question,
         unnest(@intent_neutral::bigint[]) AS intent_neutral,
         unnest(@intent_out_of_office::bigint[]) AS intent_out_of_office,
         unnest(@intent_automated::bigint[]) AS intent_automated,
         unnest(@bounces_hard::bigint[]) AS bounces_hard, unnest(@bounces_soft::bigint[]) AS bounces_soft,
         unnest(@complaints::bigint[]) AS complaints, unnest(@unsubscribes::bigint[]) AS unsubscribes,
         unnest(@placement_inbox::bigint[]) AS placement_inbox,
         unnest(@placement_spam::bigint[]) AS placement_spam
),
live AS (
  SELECT c.id FROM campaigns c
  WHERE c.organization_id = @organization_id::uuid AND c.id IN (SELECT u.campaign_id FROM u WHERE u.tbl BETWEEN 1 AND 3)
),
org_days AS (
  INSERT INTO analytics_org_days AS t (organization_id, day, kind,
    sent, opens, machine_opens, clicks, machine_clicks, replies, intent_positive, intent_negative, intent_question,
    intent_neutral, intent_out_of_office, intent_automated, bounces_hard, bounces_soft, complaints, unsubscribes,
    placement_inbox, placement_spam)
  SELECT @organization_id::uuid, u.day, u.kind, u.sent, u.opens, u.machine_opens, u.clicks,
    u.machine_clicks, u.replies, u.intent_positive, u.intent_negative, u.intent_question, u.intent_neutral,
    u.intent_out_of_office, u.intent_automated, u.bounces_hard, u.bounces_soft, u.complaints, u.unsubscribes,
    u.placement_inbox, u.placement_spam
  FROM u WHERE u.tbl = 0
  ON CONFLICT (organization_id, day, kind) DO UPDATE SET
    sent = t.sent + excluded.sent, opens = t.opens + excluded.opens,
    machine_opens = t.machine_opens + excluded.machine_opens, clicks = t.clicks + excluded.clicks,
    machine_clicks = t.machine_clicks + excluded.machine_clicks, replies = t.replies + excluded.replies,
    intent_positive = t.intent_positive + excluded.intent_positive,
    intent_negative = t.intent_negative + excluded.intent_negative,
    intent_question = t.intent_question + excluded.intent_question,
    intent_neutral = t.intent_neutral + excluded.intent_neutral,
    intent_out_of_office = t.intent_out_of_office + excluded.intent_out_of_office,
    intent_automated = t.intent_automated + excluded.intent_automated,
    bounces_hard = t.bounces_hard + excluded.bounces_hard, bounces_soft = t.bounces_soft + excluded.bounces_soft,
    complaints = t.complaints + excluded.complaints, unsubscribes = t.unsubscribes + excluded.unsubscribes,
    placement_inbox = t.placement_inbox + excluded.placement_inbox,
    placement_spam = t.placement_spam + excluded.placement_spam
),
campaign_days AS (
  INSERT INTO analytics_campaign_days AS t (organization_id, campaign_id, day,
    sent, opens, machine_opens, clicks, machine_clicks, replies, intent_positive, intent_negative, intent_question,
    intent_neutral, intent_out_of_office, intent_automated, bounces_hard, bounces_soft, complaints, unsubscribes,
    placement_inbox, placement_spam)
  SELECT @organization_id::uuid, u.campaign_id, u.day, u.sent, u.opens, u.machine_opens, u.clicks,
    u.machine_clicks, u.replies, u.intent_positive, u.intent_negative, u.intent_question, u.intent_neutral,
    u.intent_out_of_office, u.intent_automated, u.bounces_hard, u.bounces_soft, u.complaints, u.unsubscribes,
    u.placement_inbox, u.placement_spam
  FROM u WHERE u.tbl = 1 AND u.campaign_id IN (SELECT id FROM live)
  ON CONFLICT (organization_id, campaign_id, day) DO UPDATE SET
    sent = t.sent + excluded.sent, opens = t.opens + excluded.opens,
    machine_opens = t.machine_opens + excluded.machine_opens, clicks = t.clicks + excluded.clicks,
    machine_clicks = t.machine_clicks + excluded.machine_clicks, replies = t.replies + excluded.replies,
    intent_positive = t.intent_positive + excluded.intent_positive,
    intent_negative = t.intent_negative + excluded.intent_negative,
    intent_question = t.intent_question + excluded.intent_question,
    intent_neutral = t.intent_neutral + excluded.intent_neutral,
    intent_out_of_office = t.intent_out_of_office + excluded.intent_out_of_office,
    intent_automated = t.intent_automated + excluded.intent_automated,
    bounces_hard = t.bounces_hard + excluded.bounces_hard, bounces_soft = t.bounces_soft + excluded.bounces_soft,
    complaints = t.complaints + excluded.complaints, unsubscribes = t.unsubscribes + excluded.unsubscribes,
    placement_inbox = t.placement_inbox + excluded.placement_inbox,
    placement_spam = t.placement_spam + excluded.placement_spam
),
step_days AS (
  INSERT INTO analytics_step_days AS t (organization_id, campaign_id, step_id, variant_id, day,
    sent, opens, machine_opens, clicks, machine_clicks, replies, intent_positive, intent_negative, intent_question,
    intent_neutral, intent_out_of_office, intent_automated, bounces_hard, bounces_soft, complaints, unsubscribes,
    placement_inbox, placement_spam)
  SELECT @organization_id::uuid, u.campaign_id, u.step_id, u.variant_id, u.day, u.sent, u.opens, u.machine_opens, u.clicks,
    u.machine_clicks, u.replies, u.intent_positive, u.intent_negative, u.intent_question, u.intent_neutral,
    u.intent_out_of_office, u.intent_automated, u.bounces_hard, u.bounces_soft, u.complaints, u.unsubscribes,
    u.placement_inbox, u.placement_spam
  FROM u WHERE u.tbl = 2 AND u.campaign_id IN (SELECT id FROM live)
  ON CONFLICT (organization_id, campaign_id, step_id, variant_id, day) DO UPDATE SET
    sent = t.sent + excluded.sent, opens = t.opens + excluded.opens,
    machine_opens = t.machine_opens + excluded.machine_opens, clicks = t.clicks + excluded.clicks,
    machine_clicks = t.machine_clicks + excluded.machine_clicks, replies = t.replies + excluded.replies,
    intent_positive = t.intent_positive + excluded.intent_positive,
    intent_negative = t.intent_negative + excluded.intent_negative,
    intent_question = t.intent_question + excluded.intent_question,
    intent_neutral = t.intent_neutral + excluded.intent_neutral,
    intent_out_of_office = t.intent_out_of_office + excluded.intent_out_of_office,
    intent_automated = t.intent_automated + excluded.intent_automated,
    bounces_hard = t.bounces_hard + excluded.bounces_hard, bounces_soft = t.bounces_soft + excluded.bounces_soft,
    complaints = t.complaints + excluded.complaints, unsubscribes = t.unsubscribes + excluded.unsubscribes,
    placement_inbox = t.placement_inbox + excluded.placement_inbox,
    placement_spam = t.placement_spam + excluded.placement_spam
),
campaign_hours AS (
  INSERT INTO analytics_campaign_hours AS t (organization_id, campaign_id, hour,
    sent, opens, machine_opens, clicks, machine_clicks, replies, intent_positive, intent_negative, intent_question,
    intent_neutral, intent_out_of_office, intent_automated, bounces_hard, bounces_soft, complaints, unsubscribes,
    placement_inbox, placement_spam)
  SELECT @organization_id::uuid, u.campaign_id, u.hour, u.sent, u.opens, u.machine_opens, u.clicks,
    u.machine_clicks, u.replies, u.intent_positive, u.intent_negative, u.intent_question, u.intent_neutral,
    u.intent_out_of_office, u.intent_automated, u.bounces_hard, u.bounces_soft, u.complaints, u.unsubscribes,
    u.placement_inbox, u.placement_spam
  FROM u WHERE u.tbl = 3 AND u.campaign_id IN (SELECT id FROM live)
  ON CONFLICT (organization_id, campaign_id, hour) DO UPDATE SET
    sent = t.sent + excluded.sent, opens = t.opens + excluded.opens,
    machine_opens = t.machine_opens + excluded.machine_opens, clicks = t.clicks + excluded.clicks,
    machine_clicks = t.machine_clicks + excluded.machine_clicks, replies = t.replies + excluded.replies,
    intent_positive = t.intent_positive + excluded.intent_positive,
    intent_negative = t.intent_negative + excluded.intent_negative,
    intent_question = t.intent_question + excluded.intent_question,
    intent_neutral = t.intent_neutral + excluded.intent_neutral,
    intent_out_of_office = t.intent_out_of_office + excluded.intent_out_of_office,
    intent_automated = t.intent_automated + excluded.intent_automated,
    bounces_hard = t.bounces_hard + excluded.bounces_hard, bounces_soft = t.bounces_soft + excluded.bounces_soft,
    complaints = t.complaints + excluded.complaints, unsubscribes = t.unsubscribes + excluded.unsubscribes,
    placement_inbox = t.placement_inbox + excluded.placement_inbox,
    placement_spam = t.placement_spam + excluded.placement_spam
)
INSERT INTO analytics_mailbox_days AS t (organization_id, mailbox_id, day, kind, provider,
  sent, opens, machine_opens, clicks, machine_clicks, replies, intent_positive, intent_negative, intent_question,
  intent_neutral, intent_out_of_office, intent_automated, bounces_hard, bounces_soft, complaints, unsubscribes,
  placement_inbox, placement_spam)
SELECT @organization_id::uuid, u.mailbox_id, u.day, u.kind, u.provider, u.sent, u.opens, u.machine_opens, u.clicks,
  u.machine_clicks, u.replies, u.intent_positive, u.intent_negative, u.intent_question, u.intent_neutral,
  u.intent_out_of_office, u.intent_automated, u.bounces_hard, u.bounces_soft, u.complaints, u.unsubscribes,
  u.placement_inbox, u.placement_spam
FROM u WHERE u.tbl = 4
ON CONFLICT (organization_id, mailbox_id, day, kind) DO UPDATE SET
  sent = t.sent + excluded.sent, opens = t.opens + excluded.opens,
  machine_opens = t.machine_opens + excluded.machine_opens, clicks = t.clicks + excluded.clicks,
  machine_clicks = t.machine_clicks + excluded.machine_clicks, replies = t.replies + excluded.replies,
  intent_positive = t.intent_positive + excluded.intent_positive,
  intent_negative = t.intent_negative + excluded.intent_negative,
  intent_question = t.intent_question + excluded.intent_question,
  intent_neutral = t.intent_neutral + excluded.intent_neutral,
  intent_out_of_office = t.intent_out_of_office + excluded.intent_out_of_office,
  intent_automated = t.intent_automated + excluded.intent_automated,
  bounces_hard = t.bounces_hard + excluded.bounces_hard, bounces_soft = t.bounces_soft + excluded.bounces_soft,
  complaints = t.complaints + excluded.complaints, unsubscribes = t.unsubscribes + excluded.unsubscribes,
  placement_inbox = t.placement_inbox + excluded.placement_inbox,
  placement_spam = t.placement_spam + excluded.placement_spam;

-- name: RollupSends :many
-- The sends ids name with their attribution, status, send time and first reply's time: what the send
-- pipeline's and the engine's feeds count.
SELECT t.id, CASE t.kind WHEN 'campaign' THEN 'campaign' WHEN 'warmup' THEN 'warmup' ELSE 'direct' END::text AS kind,
       t.campaign_id, t.step_id, t.variant_id, t.mailbox_id, coalesce(m.provider, '')::text AS provider, t.status,
       t.sent_at, t.replied_at
FROM send_tasks t
LEFT JOIN mailboxes m ON m.organization_id = t.organization_id AND m.id = t.mailbox_id
WHERE t.organization_id = @organization_id::uuid AND t.id = ANY(@ids::uuid[]);

-- name: RollupEvents :many
-- The bounces, complaints and unsubscribes ids name, attributed to the send each names (else to the campaign and
-- mailbox the event names, kind campaign with a campaign and direct without), with what each counts.
SELECT d.at, CASE d.event_type WHEN 'bounce' THEN 'bounce_' || d.bounce_type ELSE d.event_type END::text AS what,
       coalesce(CASE t.kind WHEN 'campaign' THEN 'campaign' WHEN 'warmup' THEN 'warmup' WHEN 'direct' THEN 'direct'
         WHEN 'reply' THEN 'direct' END, CASE WHEN d.campaign_id IS NULL THEN 'direct' ELSE 'campaign' END)::text AS kind,
       coalesce(t.campaign_id, d.campaign_id) AS campaign_id, t.step_id, t.variant_id,
       coalesce(t.mailbox_id, d.mailbox_id) AS mailbox_id,
       coalesce(m.provider, '')::text AS provider
FROM deliverability_events d
LEFT JOIN send_tasks t ON t.organization_id = d.organization_id AND t.id = d.task_id
LEFT JOIN mailboxes m ON m.organization_id = d.organization_id AND m.id = coalesce(t.mailbox_id, d.mailbox_id)
WHERE d.organization_id = @organization_id::uuid AND d.id = ANY(@ids::uuid[])
  AND d.event_type IN ('bounce', 'complaint', 'unsubscribe');

-- name: RollupIntents :many
-- The classified inbound messages ids name that answer a send, attributed to that send (else, a send deleted
-- since, to the campaign the message names), with the intent each counts.
SELECT i.received_at AS at, ('intent_' || i.intent)::text AS what,
       coalesce(CASE t.kind WHEN 'campaign' THEN 'campaign' WHEN 'warmup' THEN 'warmup' WHEN 'direct' THEN 'direct'
         WHEN 'reply' THEN 'direct' END, 'campaign')::text AS kind,
       coalesce(t.campaign_id, i.campaign_id) AS campaign_id, t.step_id, t.variant_id,
       t.mailbox_id, coalesce(m.provider, '')::text AS provider
FROM inbox_messages i
LEFT JOIN send_tasks t ON t.organization_id = i.organization_id AND t.id = i.send_task_id
LEFT JOIN mailboxes m ON m.organization_id = i.organization_id AND m.id = t.mailbox_id
WHERE i.organization_id = @organization_id::uuid AND i.id = ANY(@ids::uuid[]) AND i.intent <> ''
  AND i.send_task_id IS NOT NULL;

-- name: RollupClear :exec
-- Deletes the organization's counter rows, before RollupRebuild writes them again.
WITH org_days AS (DELETE FROM analytics_org_days WHERE organization_id = @organization_id::uuid),
campaign_days AS (DELETE FROM analytics_campaign_days WHERE organization_id = @organization_id::uuid),
step_days AS (DELETE FROM analytics_step_days WHERE organization_id = @organization_id::uuid),
campaign_hours AS (DELETE FROM analytics_campaign_hours WHERE organization_id = @organization_id::uuid)
DELETE FROM analytics_mailbox_days WHERE organization_id = @organization_id::uuid;

-- name: RollupRebuild :exec
-- Recomputes every counter table of the organization from the source rows (after RollupClear), as the feeds
-- count them (package internal/analytics/rollup says what each counter counts): f holds one row per counted
-- thing with its time, its attribution (the send's, else what an event names) and what it counts.
WITH s AS MATERIALIZED (
  SELECT t.id, CASE t.kind WHEN 'campaign' THEN 'campaign' WHEN 'warmup' THEN 'warmup' ELSE 'direct' END AS kind,
         t.campaign_id, t.step_id, t.variant_id, t.mailbox_id, coalesce(m.provider, '') AS provider, t.status, t.sent_at,
         t.replied_at
  FROM send_tasks t
  LEFT JOIN mailboxes m ON m.organization_id = t.organization_id AND m.id = t.mailbox_id
  WHERE t.organization_id = @organization_id::uuid
),
f AS MATERIALIZED (
  SELECT s.sent_at AS at, s.kind, s.campaign_id, s.step_id, s.variant_id, s.mailbox_id, s.provider, 'sent' AS what
  FROM s WHERE s.status = 'sent' AND s.sent_at IS NOT NULL
  UNION ALL
  SELECT s.replied_at, s.kind, s.campaign_id, s.step_id, s.variant_id, s.mailbox_id, s.provider, 'reply'
  FROM s WHERE s.replied_at IS NOT NULL
  UNION ALL
  SELECT e.first_at, s.kind, s.campaign_id, s.step_id, s.variant_id, s.mailbox_id, s.provider,
         e.kind || CASE WHEN e.human THEN '' ELSE '_machine' END
  FROM (SELECT e.task_id, e.kind, min(e.at) AS first_at, coalesce(bool_or(e.verdict = 'human'), false) AS human
        FROM tracking_events e WHERE e.organization_id = @organization_id::uuid
        GROUP BY e.task_id, e.kind) AS e
  JOIN s ON s.id = e.task_id
  UNION ALL
  SELECT i.received_at, coalesce(s.kind, 'campaign'), coalesce(s.campaign_id, i.campaign_id), s.step_id, s.variant_id,
         s.mailbox_id, coalesce(s.provider, ''), 'intent_' || i.intent
  FROM inbox_messages i LEFT JOIN s ON s.id = i.send_task_id
  WHERE i.organization_id = @organization_id::uuid AND i.intent <> '' AND i.send_task_id IS NOT NULL
  UNION ALL
  SELECT d.at, coalesce(s.kind, CASE WHEN d.campaign_id IS NULL THEN 'direct' ELSE 'campaign' END),
         coalesce(s.campaign_id, d.campaign_id), s.step_id, s.variant_id, coalesce(s.mailbox_id, d.mailbox_id),
         coalesce(dm.provider, ''),
         CASE d.event_type WHEN 'bounce' THEN 'bounce_' || d.bounce_type ELSE d.event_type END
  FROM deliverability_events d
  LEFT JOIN s ON s.id = d.task_id
  LEFT JOIN mailboxes dm ON dm.organization_id = d.organization_id AND dm.id = coalesce(s.mailbox_id, d.mailbox_id)
  WHERE d.organization_id = @organization_id::uuid AND d.event_type IN ('bounce', 'complaint', 'unsubscribe')
),
c AS MATERIALIZED (
  SELECT f.* FROM f JOIN campaigns k ON k.organization_id = @organization_id::uuid AND k.id = f.campaign_id
),
org_days AS (
  INSERT INTO analytics_org_days (organization_id, day, kind,
    sent, opens, machine_opens, clicks, machine_clicks, replies, intent_positive, intent_negative, intent_question,
    intent_neutral, intent_out_of_office, intent_automated, bounces_hard, bounces_soft, complaints, unsubscribes,
    placement_inbox, placement_spam)
  SELECT @organization_id::uuid, (f.at AT TIME ZONE 'UTC')::date, f.kind,
    count(*) FILTER (WHERE what = 'sent'), count(*) FILTER (WHERE what IN ('open', 'open_machine')),
    count(*) FILTER (WHERE what = 'open_machine'), count(*) FILTER (WHERE what IN ('click', 'click_machine')),
    count(*) FILTER (WHERE what = 'click_machine'), count(*) FILTER (WHERE what = 'reply'),
    count(*) FILTER (WHERE what = 'intent_positive'), count(*) FILTER (WHERE what = 'intent_negative'),
    count(*) FILTER (WHERE what = 'intent_question'), count(*) FILTER (WHERE what = 'intent_neutral'),
    count(*) FILTER (WHERE what = 'intent_out_of_office'), count(*) FILTER (WHERE what = 'intent_automated'),
    count(*) FILTER (WHERE what = 'bounce_hard'), count(*) FILTER (WHERE what = 'bounce_soft'),
    count(*) FILTER (WHERE what = 'complaint'), count(*) FILTER (WHERE what = 'unsubscribe'),
    count(*) FILTER (WHERE false), count(*) FILTER (WHERE false)
  FROM f AS f
  GROUP BY 2, 3
),
campaign_days AS (
  INSERT INTO analytics_campaign_days (organization_id, campaign_id, day,
    sent, opens, machine_opens, clicks, machine_clicks, replies, intent_positive, intent_negative, intent_question,
    intent_neutral, intent_out_of_office, intent_automated, bounces_hard, bounces_soft, complaints, unsubscribes,
    placement_inbox, placement_spam)
  SELECT @organization_id::uuid, f.campaign_id, (f.at AT TIME ZONE 'UTC')::date,
    count(*) FILTER (WHERE what = 'sent'), count(*) FILTER (WHERE what IN ('open', 'open_machine')),
    count(*) FILTER (WHERE what = 'open_machine'), count(*) FILTER (WHERE what IN ('click', 'click_machine')),
    count(*) FILTER (WHERE what = 'click_machine'), count(*) FILTER (WHERE what = 'reply'),
    count(*) FILTER (WHERE what = 'intent_positive'), count(*) FILTER (WHERE what = 'intent_negative'),
    count(*) FILTER (WHERE what = 'intent_question'), count(*) FILTER (WHERE what = 'intent_neutral'),
    count(*) FILTER (WHERE what = 'intent_out_of_office'), count(*) FILTER (WHERE what = 'intent_automated'),
    count(*) FILTER (WHERE what = 'bounce_hard'), count(*) FILTER (WHERE what = 'bounce_soft'),
    count(*) FILTER (WHERE what = 'complaint'), count(*) FILTER (WHERE what = 'unsubscribe'),
    count(*) FILTER (WHERE false), count(*) FILTER (WHERE false)
  FROM c AS f
  GROUP BY 2, 3
),
step_days AS (
  INSERT INTO analytics_step_days (organization_id, campaign_id, step_id, variant_id, day,
    sent, opens, machine_opens, clicks, machine_clicks, replies, intent_positive, intent_negative, intent_question,
    intent_neutral, intent_out_of_office, intent_automated, bounces_hard, bounces_soft, complaints, unsubscribes,
    placement_inbox, placement_spam)
  SELECT @organization_id::uuid, f.campaign_id, f.step_id, coalesce(f.variant_id, '00000000-0000-0000-0000-000000000000'::uuid), (f.at AT TIME ZONE 'UTC')::date,
    count(*) FILTER (WHERE what = 'sent'), count(*) FILTER (WHERE what IN ('open', 'open_machine')),
    count(*) FILTER (WHERE what = 'open_machine'), count(*) FILTER (WHERE what IN ('click', 'click_machine')),
    count(*) FILTER (WHERE what = 'click_machine'), count(*) FILTER (WHERE what = 'reply'),
    count(*) FILTER (WHERE what = 'intent_positive'), count(*) FILTER (WHERE what = 'intent_negative'),
    count(*) FILTER (WHERE what = 'intent_question'), count(*) FILTER (WHERE what = 'intent_neutral'),
    count(*) FILTER (WHERE what = 'intent_out_of_office'), count(*) FILTER (WHERE what = 'intent_automated'),
    count(*) FILTER (WHERE what = 'bounce_hard'), count(*) FILTER (WHERE what = 'bounce_soft'),
    count(*) FILTER (WHERE what = 'complaint'), count(*) FILTER (WHERE what = 'unsubscribe'),
    count(*) FILTER (WHERE false), count(*) FILTER (WHERE false)
  FROM c AS f WHERE f.step_id IS NOT NULL
  GROUP BY 2, 3, 4, 5
),
campaign_hours AS (
  INSERT INTO analytics_campaign_hours (organization_id, campaign_id, hour,
    sent, opens, machine_opens, clicks, machine_clicks, replies, intent_positive, intent_negative, intent_question,
    intent_neutral, intent_out_of_office, intent_automated, bounces_hard, bounces_soft, complaints, unsubscribes,
    placement_inbox, placement_spam)
  SELECT @organization_id::uuid, f.campaign_id, date_trunc('hour', f.at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC',
    count(*) FILTER (WHERE what = 'sent'), count(*) FILTER (WHERE what IN ('open', 'open_machine')),
    count(*) FILTER (WHERE what = 'open_machine'), count(*) FILTER (WHERE what IN ('click', 'click_machine')),
    count(*) FILTER (WHERE what = 'click_machine'), count(*) FILTER (WHERE what = 'reply'),
    count(*) FILTER (WHERE what = 'intent_positive'), count(*) FILTER (WHERE what = 'intent_negative'),
    count(*) FILTER (WHERE what = 'intent_question'), count(*) FILTER (WHERE what = 'intent_neutral'),
    count(*) FILTER (WHERE what = 'intent_out_of_office'), count(*) FILTER (WHERE what = 'intent_automated'),
    count(*) FILTER (WHERE what = 'bounce_hard'), count(*) FILTER (WHERE what = 'bounce_soft'),
    count(*) FILTER (WHERE what = 'complaint'), count(*) FILTER (WHERE what = 'unsubscribe'),
    count(*) FILTER (WHERE false), count(*) FILTER (WHERE false)
  FROM c AS f
  GROUP BY 2, 3
)
INSERT INTO analytics_mailbox_days (organization_id, mailbox_id, day, kind, provider,
  sent, opens, machine_opens, clicks, machine_clicks, replies, intent_positive, intent_negative, intent_question,
  intent_neutral, intent_out_of_office, intent_automated, bounces_hard, bounces_soft, complaints, unsubscribes,
  placement_inbox, placement_spam)
SELECT @organization_id::uuid, f.mailbox_id, (f.at AT TIME ZONE 'UTC')::date, f.kind, max(f.provider),
  count(*) FILTER (WHERE what = 'sent'), count(*) FILTER (WHERE what IN ('open', 'open_machine')),
  count(*) FILTER (WHERE what = 'open_machine'), count(*) FILTER (WHERE what IN ('click', 'click_machine')),
  count(*) FILTER (WHERE what = 'click_machine'), count(*) FILTER (WHERE what = 'reply'),
  count(*) FILTER (WHERE what = 'intent_positive'), count(*) FILTER (WHERE what = 'intent_negative'),
  count(*) FILTER (WHERE what = 'intent_question'), count(*) FILTER (WHERE what = 'intent_neutral'),
  count(*) FILTER (WHERE what = 'intent_out_of_office'), count(*) FILTER (WHERE what = 'intent_automated'),
  count(*) FILTER (WHERE what = 'bounce_hard'), count(*) FILTER (WHERE what = 'bounce_soft'),
  count(*) FILTER (WHERE what = 'complaint'), count(*) FILTER (WHERE what = 'unsubscribe'),
  count(*) FILTER (WHERE false), count(*) FILTER (WHERE false)
FROM f AS f WHERE f.mailbox_id IS NOT NULL
GROUP BY 2, 3, 4;

-- name: RollupOrganizations :many
-- The organizations `outflow admin rollups rebuild` recomputes: every one, or the one named (NULL: all). Run
-- by the operator's command as the schema owner, the one cross-organization read of this file; each
-- organization's rebuild then runs in its own organization-scoped transaction.
SELECT o.id AS organization_id, o.name FROM organizations o
WHERE sqlc.narg(organization_id)::uuid IS NULL OR o.id = sqlc.narg(organization_id)::uuid
ORDER BY o.created_at, o.id;
