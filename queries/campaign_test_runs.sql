-- Campaign test runs: the real sequence sent to one prospect with compressed waits (internal/campaigns/testrun).

-- name: CampaignTestRunInsert :one
INSERT INTO campaign_test_runs (organization_id, campaign_id, id, contact_id, mailbox_id, prospect_email,
  current_step_id, steps)
VALUES (@organization_id, @campaign_id, @id, sqlc.narg(contact_id), @mailbox_id, @prospect_email,
  sqlc.narg(current_step_id), @steps)
RETURNING *;

-- name: CampaignTestRunGet :one
SELECT * FROM campaign_test_runs
WHERE organization_id = @organization_id AND campaign_id = @campaign_id AND id = @id;

-- name: CampaignTestRunLock :one
-- A run and its progress, locked: its step jobs, a settling job and a cancel take turns on it.
SELECT * FROM campaign_test_runs WHERE organization_id = @organization_id AND id = @id FOR UPDATE;

-- name: CampaignTestRunList :many
-- A campaign's runs newest first by id (UUIDv7), after the cursor's run when one is sent.
SELECT * FROM campaign_test_runs
WHERE organization_id = @organization_id AND campaign_id = @campaign_id
  AND (sqlc.narg(after)::uuid IS NULL OR id < sqlc.narg(after)::uuid)
ORDER BY id DESC
LIMIT @row_limit;

-- name: CampaignTestRunSave :one
UPDATE campaign_test_runs SET state = @state, current_step_id = sqlc.narg(current_step_id), steps = @steps,
  error_code = @error_code, error_message = @error_message, error_fix = @error_fix,
  completed_at = sqlc.narg(completed_at), updated_at = now()
WHERE organization_id = @organization_id AND id = @id
RETURNING *;

-- name: CampaignTestRunTask :one
-- Where a run's step message is in the send pipeline.
SELECT status, error_code, error_message FROM send_tasks WHERE organization_id = @organization_id AND id = @id;

-- name: CampaignTestRunTaskCancel :one
-- Cancels a cancelled run's step message unless an attempt has claimed it, and answers its status after.
UPDATE send_tasks SET status = CASE WHEN status = 'queued' THEN 'canceled' ELSE status END,
  error_code = CASE WHEN status = 'queued' THEN 'test_run_cancelled' ELSE error_code END,
  error_message = CASE WHEN status = 'queued' THEN 'The test run was cancelled before this message was sent.' ELSE error_message END
WHERE organization_id = @organization_id AND id = @id
RETURNING status;
