-- name: TrackingLock :exec
-- Serializes one organization's tracking writes (the batcher's batches, its direct writes and the deferred
-- click effects): the burst rule then sees every click stored before it, and a send's first open or click
-- moves its counters exactly once.
SELECT pg_advisory_xact_lock(hashtextextended('tracking:' || (@organization_id::uuid)::text, 0));

-- name: TrackingTasks :many
-- The sends a batch of opens and clicks names, with what classification reads (the dispatch time), what the
-- effects stamp and count, the data of their campaign events, whether a machine open was already counted for
-- the send (a human open then upgrades it) and whether a machine clicked it (counted on the lead while no
-- person's click applied, clicked_at), and what its opens and clicks count in the analytics rollups so
-- far (package internal/analytics/rollup: the first open's and click's times, whether a person opened, how
-- many of its clicks are a person's) with the attribution the rollups read (kind, the mailbox's provider). The
-- stored events are grouped in one pass over tracking_events_task for every send named.
WITH e AS (
  SELECT x.task_id, min(x.at) FILTER (WHERE x.kind = 'open') AS first_open,
         bool_or(x.verdict = 'human') FILTER (WHERE x.kind = 'open') AS human_open,
         bool_or(x.verdict = 'machine') FILTER (WHERE x.kind = 'open') AS machine_open,
         min(x.at) FILTER (WHERE x.kind = 'click') AS first_click,
         bool_or(x.verdict = 'machine') FILTER (WHERE x.kind = 'click') AS machine_click,
         count(*) FILTER (WHERE x.kind = 'click' AND x.verdict = 'human') AS human_clicks
  FROM tracking_events x
  WHERE x.organization_id = @organization_id::uuid AND x.task_id = ANY(@ids::uuid[])
  GROUP BY x.task_id
)
SELECT t.id, t.sent_at, t.opened_at, t.campaign_id, t.contact_id, t.step_id, t.step_name, t.to_email, t.subject,
       t.message_id, t.mailbox_id, t.from_email, t.from_name, t.variant_id, coalesce(c.name, '')::text AS campaign_name,
       coalesce(e.machine_open, false)::boolean AS machine_opened, t.clicked_at,
       coalesce(e.machine_click, false)::boolean AS machine_clicked,
       CASE t.kind WHEN 'campaign' THEN 'campaign' WHEN 'warmup' THEN 'warmup' ELSE 'direct' END::text AS rollup_kind,
       coalesce(m.provider, '')::text AS provider,
       (e.first_open IS NOT NULL)::boolean AS opened, coalesce(e.first_open, 'epoch')::timestamptz AS first_open,
       coalesce(e.human_open, false)::boolean AS human_open, (e.first_click IS NOT NULL)::boolean AS clicked,
       coalesce(e.first_click, 'epoch')::timestamptz AS first_click, coalesce(e.human_clicks, 0)::int AS human_clicks
FROM send_tasks t
LEFT JOIN campaigns c ON c.organization_id = t.organization_id AND c.id = t.campaign_id
LEFT JOIN mailboxes m ON m.organization_id = t.organization_id AND m.id = t.mailbox_id
LEFT JOIN e ON e.task_id = t.id
WHERE t.organization_id = @organization_id::uuid AND t.id = ANY(@ids::uuid[]);

-- name: TrackingClicksNear :many
-- The stored clicks the burst rule may pair with the batch's clicks: on the same send, between since and until
-- (the batch's clicks widened by the burst window), from the same source (address hash or network) as one of
-- the batch's clicks (the tuples) on a different link. Clicks no batch click could pair with, such as one
-- source's repeated clicks on one link, are not read. pending is true for a human click whose effects have
-- not applied yet.
SELECT c.id, c.task_id, c.at, coalesce(c.link_index, 0)::int AS link_index, c.ip_hash, c.source_network,
       (c.verdict = 'human' AND c.effects_due_at IS NOT NULL AND c.effects_applied_at IS NULL)::boolean AS pending
FROM tracking_events c
WHERE c.organization_id = @organization_id::uuid AND c.task_id = ANY(@task_ids::uuid[]) AND c.kind = 'click'
  AND c.at BETWEEN @since::timestamptz AND @until::timestamptz
  AND EXISTS (
    SELECT 1
    FROM (SELECT unnest(@tuple_tasks::uuid[]) AS task_id, unnest(@tuple_links::int[]) AS link_index,
                 unnest(@tuple_hashes::text[]) AS ip_hash, unnest(@tuple_networks::text[]) AS source_network) AS p
    WHERE p.task_id = c.task_id AND p.link_index <> c.link_index
      AND (p.ip_hash <> '' AND p.ip_hash = c.ip_hash OR p.source_network <> '' AND p.source_network = c.source_network));

-- name: TrackingEventsInsert :execrows
-- One batch of opens and clicks of one organization, each with its verdict and the rule that decided it.
-- link_index and url are NULL for an open; effects_due_at (the dues entry) is set where pendings says a human
-- click of an existing send waits for its effects.
INSERT INTO tracking_events (organization_id, id, task_id, kind, at, user_agent, ip_hash, source_network, scanner,
                             scanner_probable, privacy_proxy, link_index, url, ticket_issued, verdict, rule,
                             effects_due_at, country)
SELECT @organization_id::uuid, u.id, u.task_id, u.kind, u.at, u.ua, u.ip_hash, u.network, u.scanner,
       u.probable, u.proxy, CASE WHEN u.kind = 'click' THEN u.link_index END, CASE WHEN u.kind = 'click' THEN u.url END,
       u.ticket, u.verdict, u.rule, CASE WHEN u.pending THEN u.due END, u.country
FROM (SELECT unnest(@ids::uuid[]) AS id, unnest(@task_ids::uuid[]) AS task_id, unnest(@kinds::text[]) AS kind,
             unnest(@ats::timestamptz[]) AS at, unnest(@uas::text[]) AS ua, unnest(@ip_hashes::text[]) AS ip_hash,
             unnest(@networks::text[]) AS network, unnest(@scanners::text[]) AS scanner,
             unnest(@probables::boolean[]) AS probable, unnest(@proxies::boolean[]) AS proxy,
             unnest(@link_indexes::int[]) AS link_index, unnest(@urls::text[]) AS url,
             unnest(@tickets::boolean[]) AS ticket, unnest(@verdicts::text[]) AS verdict,
             unnest(@rules::text[]) AS rule, unnest(@dues::timestamptz[]) AS due,
             unnest(@pendings::boolean[]) AS pending, unnest(@countries::text[]) AS country) AS u;

-- name: TrackingClicksRejudge :execrows
-- Human clicks whose effects are still pending become machine clicks by rule (a burst a later click made);
-- a click whose effects already applied keeps its verdict.
UPDATE tracking_events SET verdict = 'machine', rule = @rule::text, effects_due_at = NULL
WHERE organization_id = @organization_id::uuid AND id = ANY(@ids::uuid[]) AND kind = 'click' AND verdict = 'human'
  AND effects_applied_at IS NULL;

-- name: TrackingOpenStamp :many
-- Stamps each send's first human open; a send already stamped keeps its time. Returns the sends stamped now.
UPDATE send_tasks t SET opened_at = u.at
FROM (SELECT unnest(@ids::uuid[]) AS id, unnest(@ats::timestamptz[]) AS at) AS u
WHERE t.organization_id = @organization_id::uuid AND t.id = u.id AND t.opened_at IS NULL
RETURNING t.id;

-- name: TrackingLeadCount :exec
-- Moves campaign leads' engagement counts by the deltas given per send (summed per lead, since one batch may
-- hold two sends of one lead): opened and clicked count human opens and clicks, machine_opened the sends
-- opened only by machines so far, machine_clicked the sends clicked only by machines so far (until a person's
-- click applies). last_activity_at follows the newest human open or click.
UPDATE campaign_leads l
SET opened = l.opened + d.opened, machine_opened = greatest(l.machine_opened + d.machine_opened, 0),
    clicked = l.clicked + d.clicked, machine_clicked = greatest(l.machine_clicked + d.machine_clicked, 0),
    last_activity_at = greatest(l.last_activity_at, d.activity_at)
FROM (SELECT u.campaign_id, u.contact_id, sum(u.opened)::int AS opened, sum(u.machine_opened)::int AS machine_opened,
             sum(u.clicked)::int AS clicked, sum(u.machine_clicked)::int AS machine_clicked,
             max(u.at) FILTER (WHERE u.opened > 0 OR u.clicked > 0) AS activity_at
      FROM (SELECT unnest(@campaign_ids::uuid[]) AS campaign_id, unnest(@contact_ids::uuid[]) AS contact_id,
                   unnest(@opened::int[]) AS opened, unnest(@machine_opened::int[]) AS machine_opened,
                   unnest(@clicked::int[]) AS clicked, unnest(@machine_clicked::int[]) AS machine_clicked,
                   unnest(@ats::timestamptz[]) AS at) AS u
      GROUP BY u.campaign_id, u.contact_id) AS d
WHERE l.organization_id = @organization_id::uuid AND l.campaign_id = d.campaign_id AND l.contact_id = d.contact_id;

-- name: TrackingActivityInsert :exec
-- The contact activities of human opens or clicks (one type per call), at the time of each; a contact deleted
-- since its send gets none.
INSERT INTO contact_activities (organization_id, id, contact_id, activity_type, metadata, created_at)
SELECT @organization_id::uuid, a.id, a.contact_id, @activity_type::text, a.metadata, a.at
FROM (SELECT unnest(@ids::uuid[]) AS id, unnest(@contact_ids::uuid[]) AS contact_id,
             unnest(@metadata::jsonb[]) AS metadata, unnest(@ats::timestamptz[]) AS at) AS a
WHERE EXISTS (SELECT 1 FROM contacts c WHERE c.organization_id = @organization_id::uuid AND c.id = a.contact_id);

-- name: TrackingClickPending :one
-- A human click whose deferred effects have not applied. No row: the click was re-judged a burst, or its
-- effects already applied.
SELECT id, task_id, at, coalesce(url, '')::text AS url, coalesce(link_index, 0)::int AS link_index,
       effects_due_at::timestamptz AS effects_due_at
FROM tracking_events
WHERE organization_id = @organization_id::uuid AND id = @id::uuid AND kind = 'click' AND verdict = 'human'
  AND effects_due_at IS NOT NULL AND effects_applied_at IS NULL;

-- name: TrackingSendHTML :one
-- A send's HTML body, where a clicked link's label is found.
SELECT body_html FROM send_tasks WHERE organization_id = @organization_id::uuid AND id = @id::uuid;

-- name: TrackingClickApplied :exec
UPDATE tracking_events SET effects_applied_at = @at::timestamptz
WHERE organization_id = @organization_id::uuid AND id = @id::uuid;

-- name: TrackingClickStamp :execrows
-- Stamps a send's first human click; 0 rows when it was stamped before.
UPDATE send_tasks SET clicked_at = @at::timestamptz
WHERE organization_id = @organization_id::uuid AND id = @id::uuid AND clicked_at IS NULL;
