-- The campaign reports (internal/analytics/campaignstats) and the engagement rows (internal/analytics/engagement).
-- Reports read the rollups of one campaign and its small current-state rows (the campaign, its steps, the
-- count of its leads by the primary key's (organization_id, campaign_id) prefix); they never scan send_tasks
-- or tracking_events. Only the engagement rebuild reads the source rows.

-- name: EngagementUpsert :exec
-- Engagement rows of one organization: one per campaign, dimension, key and contact; a click marks its rows
-- clicked for good. Grouped first, so one statement may name a row twice.
INSERT INTO analytics_engagement AS a (organization_id, campaign_id, dimension, key, contact_id, clicked)
SELECT @organization_id::uuid, u.campaign_id, u.dimension, u.key, u.contact_id, bool_or(u.clicked)
FROM (SELECT unnest(@campaign_ids::uuid[]) AS campaign_id, unnest(@dimensions::text[]) AS dimension,
             unnest(@keys::text[]) AS key, unnest(@contact_ids::uuid[]) AS contact_id,
             unnest(@clicked::boolean[]) AS clicked) AS u
WHERE EXISTS (SELECT 1 FROM campaigns c WHERE c.organization_id = @organization_id::uuid AND c.id = u.campaign_id)
GROUP BY u.campaign_id, u.dimension, u.key, u.contact_id
ON CONFLICT (organization_id, campaign_id, dimension, key, contact_id)
DO UPDATE SET clicked = a.clicked OR excluded.clicked;

-- name: EngagementClear :exec
DELETE FROM analytics_engagement WHERE organization_id = @organization_id::uuid;

-- name: EngagementSources :many
-- What the engagement rows are made of, for a rebuild: each campaign contact's distinct (country, user agent)
-- pairs of human opens and of human clicks whose effects applied, and whether such a click is among them.
SELECT t.campaign_id::uuid AS campaign_id, t.contact_id::uuid AS contact_id, e.country, e.user_agent,
       bool_or(e.kind = 'click')::boolean AS clicked
FROM tracking_events e
JOIN send_tasks t ON t.organization_id = e.organization_id AND t.id = e.task_id
WHERE e.organization_id = @organization_id::uuid AND e.verdict = 'human'
  AND (e.kind = 'open' OR e.kind = 'click' AND e.effects_applied_at IS NOT NULL)
  AND t.campaign_id IS NOT NULL AND t.contact_id IS NOT NULL
GROUP BY t.campaign_id, t.contact_id, e.country, e.user_agent;

-- name: EngagementOfEvent :many
-- The campaign, contact, country and user agent of one stored tracking event (no row: the send is gone or is
-- not a campaign contact's).
SELECT t.campaign_id::uuid AS campaign_id, t.contact_id::uuid AS contact_id, e.country, e.user_agent
FROM tracking_events e
JOIN send_tasks t ON t.organization_id = e.organization_id AND t.id = e.task_id
WHERE e.organization_id = @organization_id::uuid AND e.id = @id::uuid
  AND t.campaign_id IS NOT NULL AND t.contact_id IS NOT NULL;

-- name: AnalyticsCampaignHead :one
-- One campaign with its lead counts, in one pass over its leads: every lead, the leads still in the sequence
-- (pending or active), and the distinct contacts behind its opens and clicks from the leads' engagement counts
-- (kept by the tracking writer): leads with a send opened (by a person: opened; only by machines so far:
-- machine_opened), those opened only by machines, leads with a send clicked (a person's click once its effects
-- applied: clicked; only machines' so far: machine_clicked), those clicked only by machines.
SELECT c.id, c.name, c.status, c.created_at, l.total_contacts, l.pending_contacts, l.opened, l.machine_opened,
       l.clicked, l.machine_clicked
FROM campaigns c
CROSS JOIN LATERAL (
  SELECT count(*)::bigint AS total_contacts,
         count(*) FILTER (WHERE x.state IN ('pending', 'active'))::bigint AS pending_contacts,
         count(*) FILTER (WHERE x.opened > 0 OR x.machine_opened > 0)::bigint AS opened,
         count(*) FILTER (WHERE x.opened = 0 AND x.machine_opened > 0)::bigint AS machine_opened,
         count(*) FILTER (WHERE x.clicked > 0 OR x.machine_clicked > 0)::bigint AS clicked,
         count(*) FILTER (WHERE x.clicked = 0 AND x.machine_clicked > 0)::bigint AS machine_clicked
  FROM campaign_leads x
  WHERE x.organization_id = c.organization_id AND x.campaign_id = c.id
) AS l
WHERE c.organization_id = @organization_id::uuid AND c.id = @id::uuid;

-- name: AnalyticsCampaignTotals :one
-- One campaign's counters over every day.
SELECT coalesce(sum(sent), 0)::bigint AS sent, coalesce(sum(opens), 0)::bigint AS opens,
       coalesce(sum(machine_opens), 0)::bigint AS machine_opens, coalesce(sum(clicks), 0)::bigint AS clicks,
       coalesce(sum(machine_clicks), 0)::bigint AS machine_clicks, coalesce(sum(replies), 0)::bigint AS replies,
       coalesce(sum(bounces_hard), 0)::bigint AS bounces_hard, coalesce(sum(bounces_soft), 0)::bigint AS bounces_soft,
       coalesce(sum(complaints), 0)::bigint AS complaints, coalesce(sum(unsubscribes), 0)::bigint AS unsubscribes
FROM analytics_campaign_days
WHERE organization_id = @organization_id::uuid AND campaign_id = @campaign_id::uuid;

-- name: AnalyticsCampaignSteps :many
-- Every step of one campaign in order, with its counters summed over variants and days (0 while unsent).
SELECT s.id, s.name, s.position,
       coalesce(d.sent, 0)::bigint AS sent, coalesce(d.opens, 0)::bigint AS opens,
       coalesce(d.machine_opens, 0)::bigint AS machine_opens, coalesce(d.clicks, 0)::bigint AS clicks,
       coalesce(d.machine_clicks, 0)::bigint AS machine_clicks, coalesce(d.replies, 0)::bigint AS replies,
       coalesce(d.bounces_hard, 0)::bigint AS bounces_hard, coalesce(d.bounces_soft, 0)::bigint AS bounces_soft
FROM campaign_steps s
LEFT JOIN (SELECT step_id, sum(sent) AS sent, sum(opens) AS opens, sum(machine_opens) AS machine_opens,
                  sum(clicks) AS clicks, sum(machine_clicks) AS machine_clicks, sum(replies) AS replies,
                  sum(bounces_hard) AS bounces_hard, sum(bounces_soft) AS bounces_soft
           FROM analytics_step_days
           WHERE organization_id = @organization_id::uuid AND campaign_id = @campaign_id::uuid
           GROUP BY step_id) d ON d.step_id = s.id
WHERE s.organization_id = @organization_id::uuid AND s.campaign_id = @campaign_id::uuid
ORDER BY s.position, s.id;

-- name: AnalyticsCampaignEngagement :many
-- The busiest keys of each dimension of one campaign: distinct contacts who opened (every row: a click
-- counts as an open) and who clicked, the first row_limit of each dimension by opens, then clicks, then key.
SELECT r.dimension, r.key, r.opens, r.clicks
FROM (SELECT dimension, key, count(*)::bigint AS opens, count(*) FILTER (WHERE clicked)::bigint AS clicks,
             row_number() OVER (PARTITION BY dimension ORDER BY count(*) DESC, count(*) FILTER (WHERE clicked) DESC, key) AS rank
      FROM analytics_engagement
      WHERE organization_id = @organization_id::uuid AND campaign_id = @campaign_id::uuid
      GROUP BY dimension, key) r
WHERE r.rank <= @row_limit::int
ORDER BY r.dimension, r.rank;

-- name: AnalyticsCampaignDays :many
-- One campaign's days between first and last (inclusive); days without a row are not returned.
SELECT day, sent, opens, machine_opens, clicks, machine_clicks, replies
FROM analytics_campaign_days
WHERE organization_id = @organization_id::uuid AND campaign_id = @campaign_id::uuid
  AND day BETWEEN @first::date AND @last::date
ORDER BY day;

-- name: AnalyticsCampaignHours :many
-- One campaign's hours in [since, until); hours without a row are not returned.
SELECT hour, sent, opens, machine_opens, clicks, machine_clicks, replies
FROM analytics_campaign_hours
WHERE organization_id = @organization_id::uuid AND campaign_id = @campaign_id::uuid
  AND hour >= @since::timestamptz AND hour < @until::timestamptz
ORDER BY hour;

-- name: AnalyticsCampaignsCompare :many
-- The named campaigns of the organization (unknown ids are absent) with their counters over the days between
-- first and last (inclusive), in the order of ids.
SELECT c.id, c.name, c.status,
       coalesce(d.sent, 0)::bigint AS sent, coalesce(d.opens, 0)::bigint AS opens,
       coalesce(d.machine_opens, 0)::bigint AS machine_opens, coalesce(d.clicks, 0)::bigint AS clicks,
       coalesce(d.machine_clicks, 0)::bigint AS machine_clicks, coalesce(d.replies, 0)::bigint AS replies,
       coalesce(d.bounces_hard, 0)::bigint AS bounces_hard, coalesce(d.bounces_soft, 0)::bigint AS bounces_soft
FROM campaigns c
LEFT JOIN (SELECT campaign_id, sum(sent) AS sent, sum(opens) AS opens, sum(machine_opens) AS machine_opens,
                  sum(clicks) AS clicks, sum(machine_clicks) AS machine_clicks, sum(replies) AS replies,
                  sum(bounces_hard) AS bounces_hard, sum(bounces_soft) AS bounces_soft
           FROM analytics_campaign_days
           WHERE organization_id = @organization_id::uuid AND campaign_id = ANY(@ids::uuid[])
             AND day BETWEEN @first::date AND @last::date
           GROUP BY campaign_id) d ON d.campaign_id = c.id
WHERE c.organization_id = @organization_id::uuid AND c.id = ANY(@ids::uuid[])
ORDER BY array_position(@ids::uuid[], c.id);

-- name: AnalyticsCampaignExists :one
SELECT EXISTS (SELECT 1 FROM campaigns WHERE organization_id = @organization_id::uuid AND id = @id::uuid)::boolean;
