-- The sequence engine (internal/campaigns/engine): due campaigns and leads, the sender pool with what each
-- mailbox has left, and the writes of one planning pass and of each send's result.

-- name: EngineCampaignsDue :many
SELECT organization_id::uuid AS organization_id, campaign_id::uuid AS campaign_id
FROM campaigns_due(@now::timestamptz, @row_limit::integer);

-- name: EngineCampaignLock :one
-- The campaign a planning pass works, locked so one pass at a time plans it; a campaign another worker is
-- planning is skipped (no rows).
SELECT * FROM campaigns WHERE organization_id = @organization_id AND id = @id
  AND status IN ('active', 'completed')
FOR UPDATE SKIP LOCKED;

-- name: EngineCampaignRan :exec
UPDATE campaigns SET engine_ran_at = @at::timestamptz, ramp_level = @ramp_level, ramp_day = sqlc.narg(ramp_day),
  rotation_cursor = @rotation_cursor, idle_since = sqlc.narg(idle_since)
WHERE organization_id = @organization_id AND id = @id;

-- name: EngineCampaignStatus :one
-- Moves the campaign to status (completed, paused_no_accounts, paused, active) with the reason, when it is in
-- one of from_statuses; no row when it was not.
UPDATE campaigns SET status = @status, paused_reason = @paused_reason, last_status_change_at = @at, updated_at = @at,
  completed_at = CASE WHEN @status = 'completed' THEN @at::timestamptz ELSE completed_at END,
  idle_since = CASE WHEN @status = 'active' THEN NULL ELSE idle_since END
WHERE organization_id = @organization_id AND id = @id AND status = ANY(@from_statuses::text[])
RETURNING *;

-- name: EngineCampaignDay :one
-- The campaign's counters for its local day (zeros when it has sent nothing that day).
SELECT coalesce(max(sent), 0)::integer AS sent, coalesce(max(new_leads), 0)::integer AS new_leads
FROM campaign_send_days WHERE organization_id = @organization_id AND campaign_id = @campaign_id AND day = @day;

-- name: EngineCampaignDayAdd :exec
-- Charges (or, negative, credits back) the campaign's day.
INSERT INTO campaign_send_days (organization_id, campaign_id, day, sent, new_leads)
VALUES (@organization_id, @campaign_id, @day, greatest(@sent::integer, 0), greatest(@new_leads::integer, 0))
ON CONFLICT (organization_id, campaign_id, day) DO UPDATE
SET sent = greatest(campaign_send_days.sent + @sent::integer, 0),
  new_leads = greatest(campaign_send_days.new_leads + @new_leads::integer, 0);

-- name: EnginePool :many
-- The mailboxes the campaign sends from, usable now: active and in active rotation (not held in reserve, not
-- resting); its enabled explicit senders, the mailboxes carrying any of its tags (a tagged mailbox that is a
-- disabled sender stays out), and every such mailbox of the organization when every_mailbox is set (the tags
-- strategy with neither senders nor tags). weight is the explicit sender's (1 otherwise). Only the columns a
-- pass reads (planning, the message's sender and signature, its tracking host, the enqueue): a pass reads the
-- whole pool.
SELECT m.organization_id, m.id, m.email, m.send_as_email, m.name, m.signature_html, m.signature_plain, m.provider,
  m.timezone, m.campaign_limit, m.min_wait_time, m.last_capped_send_at, m.auth_failing_since,
  m.tracking_domain, m.tracking_domain_verified,
  coalesce(cm.weight, 1)::integer AS weight
FROM mailboxes m
LEFT JOIN campaign_mailboxes cm ON cm.organization_id = m.organization_id AND cm.campaign_id = @campaign_id
  AND cm.mailbox_id = m.id
WHERE m.organization_id = @organization_id AND m.status = 'active' AND m.rotation_state = 'active'
  AND coalesce(cm.enabled, true)
  AND (cm.mailbox_id IS NOT NULL OR m.tags && @tag_ids::uuid[] OR @every_mailbox::boolean)
ORDER BY m.id;

-- name: EnginePlansEnsure :exec
INSERT INTO mailbox_plans (organization_id, mailbox_id, day)
SELECT @organization_id, unnest(@mailbox_ids::uuid[]), '1970-01-01'::date
ON CONFLICT (organization_id, mailbox_id) DO NOTHING;

-- name: EnginePlansLock :many
-- The pool's plans, locked in mailbox order (campaigns sharing mailboxes plan one after another).
SELECT * FROM mailbox_plans WHERE organization_id = @organization_id AND mailbox_id = ANY(@mailbox_ids::uuid[])
ORDER BY mailbox_id
FOR UPDATE;

-- name: EnginePlansSave :exec
UPDATE mailbox_plans p SET day = u.day, planned = u.planned, planned_until = u.planned_until
FROM (SELECT unnest(@mailbox_ids::uuid[]) AS mailbox_id, unnest(@days::date[]) AS day,
  unnest(@planned::integer[]) AS planned, unnest(@planned_until::timestamptz[]) AS planned_until) u
WHERE p.organization_id = @organization_id AND p.mailbox_id = u.mailbox_id;

-- name: EnginePlanCredit :exec
-- Planned sends that did not go out give their places in the plan's day back.
UPDATE mailbox_plans SET planned = greatest(planned - @sends::integer, 0)
WHERE organization_id = @organization_id AND mailbox_id = @mailbox_id AND day = @day;

-- name: EngineDueLeads :many
-- Up to row_limit leads due at now and after after (the end of the campaign's park when it is in force), in
-- the order the campaign sends them: follow-ups before new leads (new leads first with prioritize_new), then
-- contact_order_by/dir (custom_field by the contact's custom field order_field), then the contact's creation
-- (its id: a contact id is a UUIDv7 whose time is its created_at, so the leads alone give that order, and the
-- contacts are joined only for an order by their fields). Leads another pass holds are skipped. The order is
-- chosen on narrow rows first (a bounded top-N sort; with the lock on the same level the whole due set would
-- be sorted), then those leads are locked by primary key and read whole; the lock's recheck of a lead changed
-- meanwhile is one opaque condition (IS TRUE), so no plan (statistics not yet analyzed after an import, say)
-- walks the due index once per picked lead.
WITH picked AS (
  SELECT l.contact_id,
    (CASE WHEN @prioritize_new::boolean THEN l.step_position > 0 ELSE l.step_position = 0 END) AS k_kind,
    CASE WHEN NOT @descending::boolean THEN (CASE @order_by::text WHEN 'first_name' THEN c.first_name
      WHEN 'last_name' THEN c.last_name WHEN 'email' THEN c.email WHEN 'company' THEN c.company
      WHEN 'custom_field' THEN c.custom_fields ->> @order_field::text END) END AS k_up,
    CASE WHEN @descending::boolean THEN (CASE @order_by::text WHEN 'first_name' THEN c.first_name
      WHEN 'last_name' THEN c.last_name WHEN 'email' THEN c.email WHEN 'company' THEN c.company
      WHEN 'custom_field' THEN c.custom_fields ->> @order_field::text END) END AS k_down,
    CASE WHEN NOT @descending::boolean THEN l.contact_id END AS k_first,
    CASE WHEN @descending::boolean THEN l.contact_id END AS k_last
  FROM campaign_leads l
  LEFT JOIN LATERAL (SELECT c.first_name, c.last_name, c.email, c.company, c.custom_fields FROM contacts c
    WHERE @order_by::text IN ('first_name', 'last_name', 'email', 'company', 'custom_field')
      AND c.organization_id = l.organization_id AND c.id = l.contact_id) c ON true
  WHERE l.organization_id = @organization_id AND l.campaign_id = @campaign_id
    AND l.state IN ('pending', 'active') AND l.due_at IS NOT NULL AND l.task_id IS NULL
    AND l.due_at <= @now::timestamptz AND l.due_at > @after::timestamptz
  ORDER BY k_kind, k_up ASC, k_down DESC, k_first ASC, k_last DESC
  LIMIT @row_limit
)
SELECT l.contact_id, l.state, l.step_position, l.entered_at, l.due_at, l.mailbox_id, l.thread_refs, l.attempts,
  l.last_step_at, l.hold_since, l.hold_until, l.sent, l.opened, l.clicked, l.replied, l.bounced, l.variant_id, l.app,
  c.email, c.first_name, c.last_name, c.company, c.phone, c.custom_fields, c.subscribed, c.verification_status,
  c.verification_source, c.verification_checked_at, c.verification_reason, c.esp_provider
FROM picked p
JOIN campaign_leads l ON l.organization_id = @organization_id AND l.campaign_id = @campaign_id
  AND l.contact_id = p.contact_id
JOIN contacts c ON c.organization_id = l.organization_id AND c.id = l.contact_id
WHERE (l.state IN ('pending', 'active') AND l.task_id IS NULL AND l.due_at <= @now::timestamptz
  AND l.due_at > @after::timestamptz) IS TRUE
ORDER BY p.k_kind, p.k_up ASC, p.k_down DESC, p.k_first ASC, p.k_last DESC
FOR UPDATE OF l SKIP LOCKED;

-- name: EngineLeadsSave :exec
-- Writes one planning pass's decisions, one row per lead, with the Message-ID of the send just enqueued for it
-- added to its conversation (ref; '' when none). A nil uuid is NULL; a due_at or last_step_at whose flag is
-- false is NULL.
UPDATE campaign_leads l SET state = u.state, step_position = u.step_position,
  due_at = CASE WHEN u.has_due THEN u.due_at END, wait_reason = u.wait_reason,
  task_id = nullif(u.task_id, '00000000-0000-0000-0000-000000000000'::uuid),
  mailbox_id = nullif(u.mailbox_id, '00000000-0000-0000-0000-000000000000'::uuid),
  variant_id = nullif(u.variant_id, '00000000-0000-0000-0000-000000000000'::uuid),
  last_step_at = CASE WHEN u.has_last THEN u.last_step_at END, attempts = u.attempts,
  failure_reason = u.failure_reason,
  hold_since = CASE WHEN u.hold_lifted THEN NULL ELSE l.hold_since END,
  hold_until = CASE WHEN u.hold_lifted THEN NULL ELSE l.hold_until END,
  hold_reason = CASE WHEN u.hold_lifted THEN '' ELSE l.hold_reason END,
  hold_source = CASE WHEN u.hold_lifted THEN NULL ELSE l.hold_source END,
  thread_refs = CASE WHEN u.ref = '' THEN l.thread_refs
    ELSE (l.thread_refs || u.ref)[greatest(cardinality(l.thread_refs) + 1 - 99, 1):] END,
  updated_at = now()
FROM (SELECT unnest(@contact_ids::uuid[]) AS contact_id, unnest(@states::text[]) AS state,
  unnest(@step_positions::integer[]) AS step_position, unnest(@has_due::boolean[]) AS has_due,
  unnest(@due_ats::timestamptz[]) AS due_at, unnest(@wait_reasons::text[]) AS wait_reason,
  unnest(@task_ids::uuid[]) AS task_id, unnest(@mailbox_ids::uuid[]) AS mailbox_id,
  unnest(@variant_ids::uuid[]) AS variant_id, unnest(@has_last::boolean[]) AS has_last,
  unnest(@last_step_ats::timestamptz[]) AS last_step_at, unnest(@attempts::smallint[]) AS attempts,
  unnest(@failure_reasons::text[]) AS failure_reason, unnest(@holds_lifted::boolean[]) AS hold_lifted,
  unnest(@refs::text[]) AS ref) u
WHERE l.organization_id = @organization_id AND l.campaign_id = @campaign_id AND l.contact_id = u.contact_id;

-- name: EngineLeadForTask :one
-- The lead a campaign send belongs to, locked, when the send is still its in-flight one.
SELECT * FROM campaign_leads
WHERE organization_id = @organization_id AND campaign_id = @campaign_id AND contact_id = @contact_id
  AND task_id = @task_id
FOR UPDATE;

-- name: EngineLeadSettle :exec
-- Applies a send's result to its lead. undo takes the failed send's step back: its Message-ID leaves the
-- conversation and the retried step is not held to its delay again (last_step_at cleared).
UPDATE campaign_leads SET state = @state, step_position = @step_position, due_at = sqlc.narg(due_at),
  wait_reason = @wait_reason, task_id = NULL, attempts = @attempts, failure_reason = @failure_reason,
  sent = sent + @sent_delta::integer, bounced = bounced + @bounced_delta::integer,
  current_step = CASE WHEN @current_step::text = '' THEN current_step ELSE @current_step::text END,
  sender = CASE WHEN sender = '' THEN @sender::text ELSE sender END,
  thread_refs = CASE WHEN @undo::boolean THEN thread_refs[1:greatest(cardinality(thread_refs) - 1, 0)]
    ELSE thread_refs END,
  last_step_at = CASE WHEN @undo::boolean THEN NULL ELSE last_step_at END,
  last_activity_at = CASE WHEN @sent_delta::integer > 0 THEN now() ELSE last_activity_at END,
  updated_at = now()
WHERE organization_id = @organization_id AND campaign_id = @campaign_id AND contact_id = @contact_id;

-- name: EngineLeadsOpen :one
-- Whether the campaign has a lead with something left to do (its completion waits for none).
SELECT EXISTS (SELECT 1 FROM campaign_leads
  WHERE organization_id = @organization_id AND campaign_id = @campaign_id
    AND (state IN ('pending', 'active') AND (due_at IS NOT NULL OR task_id IS NOT NULL) OR hold_since IS NOT NULL
      AND state IN ('pending', 'active', 'paused')));

-- name: EngineLeadsRestartRefused :exec
-- A completed campaign that could not restart leaves its new leads waiting for a person (start makes them due).
UPDATE campaign_leads SET due_at = NULL, wait_reason = @wait_reason, updated_at = now()
WHERE organization_id = @organization_id AND campaign_id = @campaign_id AND state IN ('pending', 'active')
  AND task_id IS NULL AND due_at IS NOT NULL;

-- name: EngineVariants :many
SELECT * FROM campaign_variants WHERE organization_id = @organization_id AND campaign_id = @campaign_id
  AND is_active
ORDER BY created_at, id;

-- name: EngineCampaignPark :exec
-- The campaign cannot send before until: its leads due at or before now wait until then, saying why.
UPDATE campaigns SET parked_before = @now::timestamptz, parked_until = @until::timestamptz, parked_reason = @reason
WHERE organization_id = @organization_id AND id = @id;

-- name: EngineCampaignUnpark :exec
-- Ends the campaign's park: a place in its day came back (a send cancelled or failed), so its waiting leads are
-- looked at again. The first write of a cancel, so the campaign is locked before its leads and plans, in the
-- order a planning pass locks them.
UPDATE campaigns SET parked_until = NULL
WHERE organization_id = @organization_id AND id = @id AND parked_until IS NOT NULL;

-- name: EngineLeadsPark :execrows
-- Moves the campaign's leads due at now and after after (those its park in force does not cover) to until,
-- saying why: the campaign is parked until then already, for another reason its earlier leads keep.
UPDATE campaign_leads SET due_at = @until::timestamptz, wait_reason = @wait_reason, updated_at = now()
WHERE organization_id = @organization_id AND campaign_id = @campaign_id AND state IN ('pending', 'active')
  AND due_at IS NOT NULL AND task_id IS NULL AND due_at <= @now::timestamptz AND due_at > @after::timestamptz;

-- name: EngineFollowUpsDue :one
-- Whether a lead past its first step is due at now (a park in force or not).
SELECT EXISTS (SELECT 1 FROM campaign_leads
  WHERE organization_id = @organization_id AND campaign_id = @campaign_id AND state IN ('pending', 'active')
    AND due_at IS NOT NULL AND task_id IS NULL AND due_at <= @now::timestamptz
    AND (step_position > 0 OR sent > 0))::boolean AS due;

-- name: EngineLeadsParkNew :execrows
-- Moves the campaign's new leads due at now (their first step not yet sent) to until, saying why: the day's
-- new-lead quota is taken.
UPDATE campaign_leads SET due_at = @until::timestamptz, wait_reason = @wait_reason, updated_at = now()
WHERE organization_id = @organization_id AND campaign_id = @campaign_id AND state IN ('pending', 'active')
  AND due_at IS NOT NULL AND task_id IS NULL AND due_at <= @now::timestamptz AND step_position = 0 AND sent = 0;

-- name: EngineLeadsLined :one
-- The campaign's leads lined up for a busy sender's slot before until (wait_reason is the engine's gap reason),
-- and the new ones among them: what today's remaining sends and new-lead quota already go to.
SELECT count(*)::integer AS leads, (count(*) FILTER (WHERE step_position = 0 AND sent = 0))::integer AS new_leads
FROM campaign_leads
WHERE organization_id = @organization_id AND campaign_id = @campaign_id AND state IN ('pending', 'active')
  AND due_at IS NOT NULL AND task_id IS NULL AND due_at > @now::timestamptz AND due_at < @until::timestamptz
  AND wait_reason = @wait_reason;

-- name: EngineCampaignIdle :exec
-- A continuous campaign with nothing left to do stays active and waits for new leads from at.
UPDATE campaigns SET idle_since = coalesce(idle_since, @at::timestamptz)
WHERE organization_id = @organization_id AND id = @id;

-- name: EngineStepCount :one
SELECT count(*)::integer FROM campaign_steps WHERE organization_id = @organization_id AND campaign_id = @campaign_id;

-- name: EngineMailboxZone :one
SELECT timezone FROM mailboxes WHERE organization_id = @organization_id AND id = @id;

-- name: EngineABJudged :exec
UPDATE campaigns SET ab_judged_at = @at::timestamptz WHERE organization_id = @organization_id AND id = @id;

-- name: EngineRestartHandled :exec
-- The engine has acted on a lead added after completion (restarted the campaign, or logged why it could not).
UPDATE campaigns SET restart_due = false WHERE organization_id = @organization_id AND id = @id;

-- name: EngineReplyMatch :many
-- The campaign sends an inbound message answers: sends of the organization whose Message-ID the message names
-- (In-Reply-To or References), handed over to the address the message comes from; one per lead, the send it
-- answers directly first, then the newest. campaign_id IS NOT NULL lets send_tasks_message_id answer it.
SELECT DISTINCT ON (campaign_id, contact_id) * FROM send_tasks
WHERE organization_id = @organization_id AND campaign_id IS NOT NULL AND message_id = ANY(@message_ids::text[])
  AND kind = 'campaign' AND contact_id IS NOT NULL AND status IN ('sent', 'ambiguous')
  AND lower(to_email) = lower(@from_email::text)
ORDER BY campaign_id, contact_id, message_id = @in_reply_to::text DESC, created_at DESC, id DESC;

-- name: EngineTaskReplied :execrows
-- Stamps the first reply to a campaign send; no row when one was stamped before (a later message of the
-- conversation, or the same message stored again from another folder, counts once).
UPDATE send_tasks SET replied_at = @at::timestamptz
WHERE organization_id = @organization_id AND id = @id AND replied_at IS NULL;

-- name: EngineLeadTaskCancel :one
-- Cancels the lead's queued send (its contact replied or is away); a send being attempted finishes. Locks only
-- the task, as the send pipeline does before it settles a lead. No row when the lead has no queued send.
UPDATE send_tasks t SET status = 'canceled', error_code = @error_code, error_message = @reason
FROM campaign_leads l
WHERE l.organization_id = @organization_id AND l.campaign_id = @campaign_id AND l.contact_id = @contact_id
  AND t.organization_id = l.organization_id AND t.id = l.task_id AND t.status = 'queued'
RETURNING t.*;

-- name: EngineLeadLock :one
SELECT * FROM campaign_leads
WHERE organization_id = @organization_id AND campaign_id = @campaign_id AND contact_id = @contact_id
FOR UPDATE;

-- name: EngineLeadAnswered :exec
-- Writes what an inbound answer did to its lead: replied (counted, and stopped when the campaign stops on
-- reply) or away (held until its hold ends). undo: its queued send was cancelled (see EngineLeadSettle).
UPDATE campaign_leads SET state = @state, step_position = @step_position, due_at = sqlc.narg(due_at),
  wait_reason = @wait_reason, task_id = sqlc.narg(task_id), thread_refs = @thread_refs::text[],
  replied = replied + @replied_delta::integer, last_activity_at = coalesce(sqlc.narg(activity_at), last_activity_at),
  hold_since = sqlc.narg(hold_since), hold_until = sqlc.narg(hold_until), hold_reason = @hold_reason,
  hold_source = sqlc.narg(hold_source),
  last_step_at = CASE WHEN @undo::boolean THEN NULL ELSE last_step_at END, updated_at = now()
WHERE organization_id = @organization_id AND campaign_id = @campaign_id AND contact_id = @contact_id;

-- name: EngineLeadAwaitOutcome :exec
-- The lead's in-flight send may or may not have gone out: the lead keeps waiting on it, saying why, until its
-- outcome is settled (found in the Sent folder, sent again, or decided by a person).
UPDATE campaign_leads SET wait_reason = @wait_reason
WHERE organization_id = @organization_id AND campaign_id = @campaign_id AND contact_id = @contact_id
  AND task_id = @task_id;
