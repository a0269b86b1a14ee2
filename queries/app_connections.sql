-- App connections (internal/agents/apps): the customer apps campaign app_action steps call, with their sealed
-- signing secrets, and what the app_action job reads to make one call.

-- name: AppConnectionList :many
SELECT * FROM app_connections WHERE organization_id = @organization_id
ORDER BY created_at DESC, id DESC;

-- name: AppConnectionGet :one
SELECT * FROM app_connections WHERE organization_id = @organization_id AND id = @id;

-- name: AppConnectionGetForUpdate :one
-- The connection locked: a delete holds it while it checks no step references it, and a step that names it
-- holds it (AppConnectionsKeep) until its own transaction ends, so neither misses the other.
SELECT * FROM app_connections WHERE organization_id = @organization_id AND id = @id
FOR UPDATE;

-- name: AppConnectionInsert :one
INSERT INTO app_connections (organization_id, id, name, base_url, secret_sealed)
VALUES (@organization_id, @id, @name, @base_url, @secret_sealed)
RETURNING *;

-- name: AppConnectionUpdate :one
UPDATE app_connections SET name = @name, base_url = @base_url, updated_at = now()
WHERE organization_id = @organization_id AND id = @id
RETURNING *;

-- name: AppConnectionSetSecret :one
-- Replaces the signing secret: the old one signs nothing from now on.
UPDATE app_connections SET secret_sealed = @secret_sealed, updated_at = now()
WHERE organization_id = @organization_id AND id = @id
RETURNING *;

-- name: AppConnectionDelete :exec
DELETE FROM app_connections WHERE organization_id = @organization_id AND id = @id;

-- name: AppConnectionInUse :one
-- Whether a campaign step's app_action names the connection.
SELECT EXISTS (SELECT 1 FROM campaign_steps
  WHERE organization_id = @organization_id AND kind = 'action' AND action ->> 'type' = 'app_action'
    AND action ->> 'app_connection_id' = @id::text)::boolean AS in_use;

-- name: AppConnectionsKeep :many
-- The connections among ids that are the organization's, locked against a delete until the caller's
-- transaction (writing the steps that name them) ends.
SELECT id FROM app_connections WHERE organization_id = @organization_id AND id = ANY(@ids::uuid[])
ORDER BY id
FOR KEY SHARE;

-- name: AppActionContext :one
-- Everything one app_action call is made from: the step run, its step's config, the campaign's and step's
-- names, the contact's fields, what the lead's earlier app actions captured and whether the lead is still in
-- the sequence (lead_open).
SELECT r.id, r.campaign_id, r.step_id, r.contact_id, r.status, r.attempts, s.name AS step_name, s.action,
  c.name AS campaign_name, ct.email, ct.first_name, ct.last_name, ct.company, ct.phone, ct.custom_fields,
  coalesce(l.app, '{}'::jsonb)::jsonb AS app, coalesce(l.state IN ('pending', 'active'), false)::boolean AS lead_open
FROM campaign_step_runs r
JOIN campaign_steps s ON s.organization_id = r.organization_id AND s.id = r.step_id
JOIN campaigns c ON c.organization_id = r.organization_id AND c.id = r.campaign_id
JOIN contacts ct ON ct.organization_id = r.organization_id AND ct.id = r.contact_id
LEFT JOIN campaign_leads l ON l.organization_id = r.organization_id AND l.campaign_id = r.campaign_id
  AND l.contact_id = r.contact_id
WHERE r.organization_id = @organization_id AND r.id = @id;
