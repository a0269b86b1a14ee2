-- Bounces and complaints (internal/campaigns/deliverability): the evidence of each, the campaign send it is
-- about, the address's suppression and the campaign's rolling rates.

-- name: DeliverabilityEventInsert :execrows
-- Records one event with its evidence; no row when an event with the same idempotency key was recorded before
-- (the same report stored again, an ingested event posted twice).
INSERT INTO deliverability_events (organization_id, id, event_type, source, at, recipient_email, contact_id,
  campaign_id, task_id, mailbox_id, provider, reason, bounce_type, status_code, smtp_code, diagnostic, feedback_type,
  matched_by, inbound_message_id, metadata, idempotency_key)
VALUES (@organization_id, @id, @event_type, @source, @at, @recipient_email, sqlc.narg(contact_id),
  sqlc.narg(campaign_id), sqlc.narg(task_id), sqlc.narg(mailbox_id), @provider, @reason, sqlc.narg(bounce_type),
  @status_code, sqlc.narg(smtp_code), @diagnostic, @feedback_type, @matched_by, sqlc.narg(inbound_message_id),
  @metadata, sqlc.narg(idempotency_key))
ON CONFLICT (organization_id, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING;

-- name: DeliverabilityTaskEvents :one
-- How many events of one kind (a bounce of one type, or a complaint) are recorded about a campaign send: its
-- effects apply with the first. Naming the campaign and the contact lets deliverability_events_contact answer.
SELECT count(*)::integer FROM deliverability_events
WHERE organization_id = @organization_id AND contact_id = @contact_id::uuid AND campaign_id = @campaign_id::uuid
  AND task_id = @task_id::uuid AND event_type = @event_type
  AND bounce_type IS NOT DISTINCT FROM sqlc.narg(bounce_type)::text;

-- name: DeliverabilityStepSoftBounces :one
-- How many of a lead's sends of one step bounced softly: the attempts of that step a soft bounce counts
-- against the lead's limit (a retried send is a new send task of the same step).
SELECT count(DISTINCT d.task_id)::integer FROM deliverability_events d
JOIN send_tasks t ON t.organization_id = d.organization_id AND t.id = d.task_id
WHERE d.organization_id = @organization_id AND d.contact_id = @contact_id::uuid
  AND d.campaign_id = @campaign_id::uuid AND d.event_type = 'bounce' AND d.bounce_type = 'soft'
  AND t.step_id IS NOT DISTINCT FROM sqlc.narg(step_id)::uuid;

-- name: DeliverabilitySend :one
-- A campaign send of the organization by id, whatever became of it (the caller judges its status).
SELECT * FROM send_tasks
WHERE organization_id = @organization_id AND id = @id AND kind = 'campaign' AND campaign_id IS NOT NULL
  AND contact_id IS NOT NULL;

-- name: DeliverabilityLatestSend :one
-- The contact's newest send of a campaign handed over to the address: what an event naming only the recipient
-- and the campaign is about.
SELECT * FROM send_tasks
WHERE organization_id = @organization_id AND contact_id = @contact_id::uuid AND kind = 'campaign'
  AND campaign_id = @campaign_id::uuid AND status IN ('sent', 'ambiguous') AND lower(to_email) = lower(@email::text)
ORDER BY created_at DESC, id DESC
LIMIT 1;

-- name: DeliverabilityContactEmail :one
-- The address of a contact an ingested event names.
SELECT email FROM contacts WHERE organization_id = @organization_id AND id = @id;

-- name: DeliverabilityTaskBounced :exec
-- Stamps a campaign send's hard bounce (its first).
UPDATE send_tasks SET bounced_at = @at::timestamptz
WHERE organization_id = @organization_id AND id = @id AND bounced_at IS NULL;

-- name: DeliverabilityWindow :one
-- A campaign's sends since since (handed over, or refused by the recipient's server) and how many distinct
-- sends (or events without one) hard-bounced and drew a complaint since then: the rolling rates the early
-- warning and the spike pause read.
SELECT
  (SELECT count(*) FROM send_tasks t
   WHERE t.organization_id = @organization_id AND t.campaign_id = @campaign_id::uuid
     AND t.created_at >= @since::timestamptz
     AND (t.status IN ('sent', 'ambiguous') OR t.error_code = 'recipient_rejected'))::integer AS sends,
  (SELECT count(DISTINCT coalesce(d.task_id, d.id)) FROM deliverability_events d
   WHERE d.organization_id = @organization_id AND d.campaign_id = @campaign_id::uuid AND d.event_type = 'bounce'
     AND d.bounce_type = 'hard' AND d.at >= @since::timestamptz)::integer AS bounced,
  (SELECT count(DISTINCT coalesce(d.task_id, d.id)) FROM deliverability_events d
   WHERE d.organization_id = @organization_id AND d.campaign_id = @campaign_id::uuid AND d.event_type = 'complaint'
     AND d.at >= @since::timestamptz)::integer AS complained;
