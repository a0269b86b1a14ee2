-- Campaign step runs (campaign_step_runs): one row per lead and app_action or wait_for_event step, the contract
-- between the sequence engine, the app_action job and product events. Its id is the app request's
-- X-Service-Event-Id and Idempotency-Key, kept across engine passes, job retries and manual retries.

-- name: StepRunForLead :one
-- The lead's run of a step, if it has one.
SELECT * FROM campaign_step_runs
WHERE organization_id = @organization_id AND campaign_id = @campaign_id AND contact_id = @contact_id
  AND step_id = @step_id;

-- name: StepRunStart :one
-- Starts the lead's run of a step: running (app_action) or waiting until wait_until (wait_for_event). A run
-- the lead left behind (the step's kind changed since) starts over under its id, so the app still sees one id
-- per lead and step.
INSERT INTO campaign_step_runs (organization_id, id, campaign_id, step_id, contact_id, kind, status,
  wait_event_name, wait_until, created_at, updated_at)
VALUES (@organization_id, @id, @campaign_id, @step_id, @contact_id, @kind, @status, @wait_event_name,
  sqlc.narg(wait_until), @now::timestamptz, @now::timestamptz)
ON CONFLICT (organization_id, campaign_id, contact_id, step_id) DO UPDATE
SET kind = excluded.kind, status = excluded.status, wait_event_name = excluded.wait_event_name,
  wait_until = excluded.wait_until, error = NULL, output = NULL, resumed_by_event = NULL,
  updated_at = excluded.updated_at
RETURNING *;

-- name: StepRunTimeOut :execrows
-- A wait whose time ran out: no row when an event resumed it first.
UPDATE campaign_step_runs SET status = 'timed_out', updated_at = @now::timestamptz
WHERE organization_id = @organization_id AND id = @id AND status = 'waiting';

-- name: StepRunLeadsLockForEvent :many
-- The open leads of the contact with a wait for the event, locked (in campaign order) before their waits are
-- resumed: the planning pass locks a lead before its step run, so a resume does the same.
SELECT l.campaign_id FROM campaign_leads l
WHERE l.organization_id = @organization_id AND l.contact_id = @contact_id AND l.state IN ('pending', 'active')
  AND EXISTS (SELECT 1 FROM campaign_step_runs r WHERE r.organization_id = l.organization_id
    AND r.campaign_id = l.campaign_id AND r.contact_id = l.contact_id AND r.status = 'waiting'
    AND r.wait_event_name = @event_name)
ORDER BY l.campaign_id
FOR UPDATE OF l;

-- name: StepRunsResume :many
-- Resumes the contact's open waits for the event in the campaigns given (their leads locked by the caller) and
-- makes their leads due now. One conditional update: a wait resumed or timed out already is not touched, so
-- two events never both resume it. A wait past its wait_until has timed out, whatever the engine has written.
WITH resumed AS (
  UPDATE campaign_step_runs r SET status = 'resumed', resumed_by_event = @event_id::uuid, updated_at = @now::timestamptz
  WHERE r.organization_id = @organization_id AND r.contact_id = @contact_id AND r.campaign_id = ANY(@campaign_ids::uuid[])
    AND r.status = 'waiting' AND r.wait_event_name = @event_name
    AND (r.wait_until IS NULL OR r.wait_until > @now::timestamptz)
  RETURNING r.id, r.campaign_id, r.step_id, r.contact_id
), due AS (
  UPDATE campaign_leads l SET due_at = @now::timestamptz, wait_reason = '', updated_at = now()
  FROM resumed r
  WHERE l.organization_id = @organization_id AND l.campaign_id = r.campaign_id AND l.contact_id = r.contact_id
    AND l.task_id IS NULL
  RETURNING l.contact_id
)
SELECT id, campaign_id, step_id, contact_id FROM resumed ORDER BY campaign_id;
