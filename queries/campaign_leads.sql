-- Campaign leads held and resumed by hand (part 2 "paused": a flow held by an out-of-office reply or by hand).
-- A hold keeps the lead's state, so a resume continues where the lead stopped; the status shown is paused while
-- hold_since is set (contacts.LeadStatusSQL). Every statement names organization_id; RLS is the second wall.

-- name: CampaignLeadHoldGet :one
SELECT hold_since, hold_until, hold_reason, hold_source FROM campaign_leads
WHERE organization_id = @organization_id AND campaign_id = @campaign_id AND contact_id = @contact_id;

-- name: CampaignLeadHoldSet :one
-- Holds one lead, replacing any hold it had. A waiting lead (pending or active) is due again when the hold
-- ends, never while it is open, and carries the hold as its wait reason; a finished lead's timing is left alone.
UPDATE campaign_leads SET hold_since = @since, hold_until = sqlc.narg(until)::timestamptz, hold_reason = @reason,
  hold_source = @source::text,
  due_at = CASE WHEN state IN ('pending', 'active') THEN sqlc.narg(until)::timestamptz ELSE due_at END,
  wait_reason = CASE WHEN state IN ('pending', 'active') THEN @wait_reason::text ELSE wait_reason END,
  updated_at = @since
WHERE organization_id = @organization_id AND campaign_id = @campaign_id AND contact_id = @contact_id
RETURNING hold_since, hold_until, hold_reason, hold_source;

-- name: CampaignLeadHoldClear :exec
-- Lifts a lead's hold; a waiting lead is due at once, so the engine decides its next send under the current
-- settings. A lead that is not held is not touched.
UPDATE campaign_leads SET hold_since = NULL, hold_until = NULL, hold_reason = '', hold_source = NULL,
  due_at = CASE WHEN state IN ('pending', 'active') THEN @now::timestamptz ELSE due_at END,
  wait_reason = CASE WHEN state IN ('pending', 'active') THEN '' ELSE wait_reason END,
  updated_at = @now
WHERE organization_id = @organization_id AND campaign_id = @campaign_id AND contact_id = @contact_id
  AND hold_since IS NOT NULL;

-- name: CampaignLeadWait :one
-- Why a lead is waiting and when the engine looks at it next (the engine's wait_reason and due_at), and whether
-- a step of it is being sent, with its campaign's park (a lead due within it waits for the park's end).
SELECT l.wait_reason, l.due_at, (l.task_id IS NOT NULL)::boolean AS sending, c.parked_before, c.parked_until,
  c.parked_reason
FROM campaign_leads l JOIN campaigns c ON c.organization_id = l.organization_id AND c.id = l.campaign_id
WHERE l.organization_id = @organization_id AND l.campaign_id = @campaign_id AND l.contact_id = @contact_id;

-- name: CampaignLeadsAdd :many
-- Adds each (contact_ids[i], campaign_ids[i]) as a pending lead and answers the pairs that are new; existing
-- leads are left as they are.
INSERT INTO campaign_leads (organization_id, campaign_id, contact_id)
SELECT @organization_id::uuid, pb.campaign_id, pa.contact_id
FROM unnest(@contact_ids::uuid[]) WITH ORDINALITY AS pa(contact_id, n)
JOIN unnest(@campaign_ids::uuid[]) WITH ORDINALITY AS pb(campaign_id, n) USING (n)
ON CONFLICT DO NOTHING
RETURNING contact_id, campaign_id;
