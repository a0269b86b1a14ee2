-- The organization reports (internal/analytics/dashboard) and the account status (internal/analytics/accounts):
-- rollup rows (a few hundred whatever the organization's size) and small current-state tables only.

-- name: AnalyticsOrgDays :many
-- The organization's rollup days of one kind from @from to @to (UTC dates, both included), oldest first;
-- days without a row are absent (the report fills them with zeros).
SELECT day, sent, opens, machine_opens, clicks, machine_clicks, replies, intent_positive, intent_negative,
  intent_question, intent_neutral, intent_out_of_office, intent_automated, bounces_hard, bounces_soft, complaints,
  unsubscribes, placement_inbox, placement_spam
FROM analytics_org_days
WHERE organization_id = @organization_id::uuid AND kind = @kind::text AND day BETWEEN @from_day::date AND @to_day::date
ORDER BY day;

-- name: AnalyticsTopCampaigns :many
-- The campaigns that sent from @from to @to, summed over those days: most replies first, then most sends,
-- then the newest campaign; @row_limit of them. The period's rows are summed per campaign alone first (an
-- index-only scan of analytics_campaign_days_period), so only the few hundred sums are joined to campaigns
-- for names; the join still drops the rows of a campaign being deleted.
SELECT d.campaign_id, c.name, c.status, d.sent, d.opens, d.machine_opens, d.clicks, d.machine_clicks, d.replies
FROM (SELECT campaign_id, sum(sent)::bigint AS sent, sum(opens)::bigint AS opens,
        sum(machine_opens)::bigint AS machine_opens, sum(clicks)::bigint AS clicks,
        sum(machine_clicks)::bigint AS machine_clicks, sum(replies)::bigint AS replies
      FROM analytics_campaign_days
      WHERE organization_id = @organization_id::uuid AND day BETWEEN @from_day::date AND @to_day::date
      GROUP BY campaign_id
      HAVING sum(sent) > 0) d
JOIN campaigns c ON c.organization_id = @organization_id::uuid AND c.id = d.campaign_id
ORDER BY d.replies DESC, d.sent DESC, d.campaign_id DESC
LIMIT @row_limit::int;

-- name: AnalyticsRecentActivity :many
-- The newest entries of the organization's campaign activity logs (ids are UUIDv7, so the primary key
-- read backwards is newest first), with the campaign's name and the contact's address when there is one.
SELECT l.id, l.campaign_id, c.name AS campaign_name, l.contact_id, coalesce(ct.email, '')::text AS contact_email,
  l.event_type, l.created_at
FROM campaign_logs l
JOIN campaigns c ON c.organization_id = l.organization_id AND c.id = l.campaign_id
LEFT JOIN contacts ct ON ct.organization_id = l.organization_id AND ct.id = l.contact_id
WHERE l.organization_id = @organization_id::uuid
ORDER BY l.id DESC
LIMIT @row_limit::int;

-- name: AnalyticsCampaignCounts :one
-- The organization's campaigns by status; paused counts every paused state (by hand, no accounts, trial).
SELECT count(*) AS total,
  count(*) FILTER (WHERE status = 'active') AS active,
  count(*) FILTER (WHERE status LIKE 'paused%') AS paused,
  count(*) FILTER (WHERE status = 'draft') AS draft
FROM campaigns WHERE organization_id = @organization_id::uuid;

-- name: AnalyticsContactCounts :one
-- The organization's contacts (the contact_stats counters) and those created since @since: contact ids are
-- UUIDv7 stamped with their creation time, so @since_id (the smallest id of that instant) bounds a primary
-- key range instead of a scan.
SELECT coalesce((SELECT s.total FROM contact_stats s WHERE s.organization_id = @organization_id::uuid), 0)::bigint AS total,
  coalesce((SELECT s.subscribed FROM contact_stats s WHERE s.organization_id = @organization_id::uuid), 0)::bigint AS subscribed,
  (SELECT count(*) FROM contacts c WHERE c.organization_id = @organization_id::uuid AND c.id >= @since_id::uuid)::bigint AS added;

-- name: AnalyticsMailboxStates :many
-- The mailboxes whose status is computed (@only_ids limits them to a mailbox-scoped key's, @id to one), newest
-- first, with their sync's last error and whether an active campaign sends from them.
SELECT sqlc.embed(m), coalesce(s.last_error, '')::text AS sync_error,
  EXISTS (SELECT 1 FROM campaign_mailboxes cm
    JOIN campaigns c ON c.organization_id = cm.organization_id AND c.id = cm.campaign_id
    WHERE cm.organization_id = m.organization_id AND cm.mailbox_id = m.id AND c.status = 'active') AS in_campaign
FROM mailboxes m
LEFT JOIN mailbox_sync s ON s.organization_id = m.organization_id AND s.mailbox_id = m.id
WHERE m.organization_id = @organization_id::uuid
  AND (sqlc.narg(only_ids)::uuid[] IS NULL OR m.id = ANY(sqlc.narg(only_ids)::uuid[]))
  AND (sqlc.narg(id)::uuid IS NULL OR m.id = sqlc.narg(id)::uuid)
ORDER BY m.id DESC;

-- name: AnalyticsMailboxOpenErrors :many
-- The open (unresolved) entries of these mailboxes' error logs, newest first. A condition is recorded once
-- while it stays open, so there are a handful per mailbox at most.
SELECT * FROM mailbox_errors
WHERE organization_id = @organization_id::uuid AND mailbox_id = ANY(@mailbox_ids::uuid[]) AND resolved_at IS NULL
ORDER BY created_at DESC, id DESC;

-- name: AnalyticsMailboxCappedToday :many
-- What each mailbox's daily counter holds toward campaign_limit for the day beside it (its own local day, as
-- the send pipeline charges it); a mailbox without a row has sent nothing capped that day.
SELECT d.mailbox_id, d.capped FROM mailbox_send_days d
WHERE d.organization_id = @organization_id::uuid
  AND (d.mailbox_id, d.day) IN (SELECT unnest(@mailbox_ids::uuid[]), unnest(@days::date[]));

-- name: AnalyticsMailboxWarmup :many
-- The warmup rollup of these mailboxes: whether any warmup day exists (warmup was enabled once), the sends of
-- @today, and the counters the warmup score reads since @since.
SELECT mailbox_id,
  coalesce(sum(sent) FILTER (WHERE day = @today::date), 0)::bigint AS sent_today,
  coalesce(sum(sent) FILTER (WHERE day >= @since::date), 0)::bigint AS sent,
  coalesce(sum(bounces_hard) FILTER (WHERE day >= @since::date), 0)::bigint AS bounces_hard,
  coalesce(sum(bounces_soft) FILTER (WHERE day >= @since::date), 0)::bigint AS bounces_soft,
  coalesce(sum(complaints) FILTER (WHERE day >= @since::date), 0)::bigint AS complaints,
  coalesce(sum(placement_inbox) FILTER (WHERE day >= @since::date), 0)::bigint AS placement_inbox,
  coalesce(sum(placement_spam) FILTER (WHERE day >= @since::date), 0)::bigint AS placement_spam
FROM analytics_mailbox_days
WHERE organization_id = @organization_id::uuid AND mailbox_id = ANY(@mailbox_ids::uuid[]) AND kind = 'warmup'
GROUP BY mailbox_id;
