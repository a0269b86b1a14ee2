-- name: RunInsert :one
-- A new run, queued. A second request with the same credential and Idempotency-Key inserts nothing (the
-- unique key is the second line behind the idempotency middleware), and the caller reads the first run.
INSERT INTO runs (organization_id, id, intent, input, credential_kind, credential_id, user_id, idempotency_key,
  created_at, updated_at)
VALUES (@organization_id::uuid, @id::uuid, @intent::text, @input::jsonb, @credential_kind::text, @credential_id::uuid,
  sqlc.narg(user_id)::uuid, @idempotency_key::text, @now::timestamptz, @now::timestamptz)
ON CONFLICT (organization_id, credential_id, idempotency_key) DO NOTHING
RETURNING *;

-- name: RunByKey :one
SELECT * FROM runs
WHERE organization_id = @organization_id::uuid AND credential_id = @credential_id::uuid
  AND idempotency_key = @idempotency_key::text;

-- name: RunGet :one
SELECT * FROM runs WHERE organization_id = @organization_id::uuid AND id = @id::uuid;

-- name: RunLock :one
-- Every transition locks its run first, so transitions of one run apply one after the other and its events
-- are numbered without gaps or repeats.
SELECT * FROM runs WHERE organization_id = @organization_id::uuid AND id = @id::uuid FOR UPDATE;

-- name: RunList :many
-- Newest first (runs_recent).
SELECT * FROM runs WHERE organization_id = @organization_id::uuid
ORDER BY created_at DESC, id DESC
LIMIT @row_limit::integer;

-- name: RunSave :one
-- Writes what a transition changed; the state machine in Go decides which moves are allowed.
UPDATE runs SET state = @state::text, campaign_id = sqlc.narg(campaign_id)::uuid,
  frozen_sender_ids = @frozen_sender_ids::uuid[], recipient_count = @recipient_count::integer,
  action_count = @action_count::integer, policy_decision = @policy_decision::jsonb,
  preflight_report = sqlc.narg(preflight_report)::jsonb, error_details = sqlc.narg(error_details)::jsonb,
  approval_id = sqlc.narg(approval_id)::uuid, updated_at = @now::timestamptz
WHERE organization_id = @organization_id::uuid AND id = @id::uuid
RETURNING *;

-- name: RunEventAppend :one
-- Appends the run's next event: seq is one past the run's last (the caller holds the run's row lock).
INSERT INTO run_events (organization_id, run_id, seq, id, type, state, message, data, created_at)
SELECT @organization_id::uuid, @run_id::uuid, coalesce(max(e.seq), 0) + 1, @id::uuid, @type::text, @state::text,
  @message::text, @data::jsonb, @now::timestamptz
FROM run_events e WHERE e.organization_id = @organization_id::uuid AND e.run_id = @run_id::uuid
RETURNING *;

-- name: RunEventsOf :many
-- A run's events, oldest first.
SELECT * FROM run_events
WHERE organization_id = @organization_id::uuid AND run_id = @run_id::uuid
ORDER BY seq;

-- name: RunCampaignStatus :one
-- The status of the campaign a run launched (no row once the campaign was deleted).
SELECT status FROM campaigns WHERE organization_id = @organization_id::uuid AND id = @id::uuid;

-- name: RunAppConnection :one
-- The app connection a run step names, by id or by name (names are unique per organization, ignoring case).
SELECT id FROM app_connections
WHERE organization_id = @organization_id::uuid
  AND (id = sqlc.narg(id)::uuid OR lower(name) = lower(@name::text))
ORDER BY id = sqlc.narg(id)::uuid DESC
LIMIT 1;

-- name: RunAudience :one
-- Who of a campaign's open leads (pending, active or paused) the plan counts as recipients, and why the others
-- will get nothing, in the engine's order of reasons: a suppression in force (the address's own entry or its
-- domain's), unsubscribed, a verdict of invalid, or risky when the campaign does not send to risky addresses.
SELECT
  count(*) FILTER (WHERE x.reason = '')::integer AS recipients,
  count(*) FILTER (WHERE x.reason = 'suppressed')::integer AS suppressed,
  count(*) FILTER (WHERE x.reason = 'unsubscribed')::integer AS unsubscribed,
  count(*) FILTER (WHERE x.reason = 'invalid')::integer AS invalid,
  count(*) FILTER (WHERE x.reason = 'risky')::integer AS risky,
  count(*) FILTER (WHERE x.verification_status = 'unknown')::integer AS unverified
FROM (
  SELECT c.verification_status, CASE
    WHEN EXISTS (SELECT 1 FROM suppressions s
      WHERE s.organization_id = l.organization_id
        AND ((s.kind = 'email' AND s.value = c.email) OR (s.kind = 'domain' AND s.value = split_part(c.email, '@', 2)))
        AND (s.expires_at IS NULL OR s.expires_at > now())) THEN 'suppressed'
    WHEN NOT c.subscribed THEN 'unsubscribed'
    WHEN c.verification_status = 'invalid' THEN 'invalid'
    WHEN c.verification_status = 'risky' AND NOT @risky_emails::boolean THEN 'risky'
    ELSE '' END AS reason
  FROM campaign_leads l
  JOIN contacts c ON c.organization_id = l.organization_id AND c.id = l.contact_id
  WHERE l.organization_id = @organization_id::uuid AND l.campaign_id = @campaign_id::uuid
    AND l.state IN ('pending', 'active', 'paused')
) x;
