-- name: AgentPolicyCheck :one
-- The gate in one statement. p is the credential's one enabled policy (the partial unique indexes
-- agent_policies_api_key and agent_policies_oauth_grant); fits keeps it only when the action breaks none of its
-- rules; counted adds the action to the policy's day, only while both daily limits hold. The upsert locks the
-- day's row, so of two concurrent actions racing for the last unit the second sees the first's count (READ
-- COMMITTED re-checks the WHERE on the newest row version) and counts nothing; the count rolls back with the
-- caller's transaction. It answers the policy's id and whether the action was counted (no row: the credential
-- has no enabled policy).
WITH p AS (
  SELECT * FROM agent_policies
  WHERE organization_id = @organization_id::uuid AND enabled
    AND (api_key_id = sqlc.narg(api_key_id)::uuid OR oauth_grant_id = sqlc.narg(oauth_grant_id)::uuid)
), fits AS (
  SELECT p.organization_id, p.id, p.max_recipients_per_day, p.max_actions_per_day FROM p
  WHERE p.expires_at > @now::timestamptz
    AND @capability::text = ANY (p.capabilities)
    AND @mailbox_ids::uuid[] <@ p.mailbox_ids
    AND @recipients::integer <= p.max_recipients_per_run
    AND @recipients::integer <= p.max_recipients_per_day
    AND (@capability::text <> 'mailbox.provision' OR @monthly_spend_cents::bigint <= p.max_monthly_mailbox_spend_cents)
), counted AS (
  INSERT INTO agent_policy_usage AS u (organization_id, policy_id, day, recipients, actions)
  SELECT fits.organization_id, fits.id, @day::date, @recipients::integer, 1 FROM fits
  ON CONFLICT (organization_id, policy_id, day) DO UPDATE
    SET recipients = u.recipients + excluded.recipients, actions = u.actions + 1
    WHERE u.recipients + excluded.recipients <= (SELECT fits.max_recipients_per_day FROM fits)
      AND u.actions + 1 <= (SELECT fits.max_actions_per_day FROM fits)
  RETURNING u.policy_id
)
SELECT p.id, EXISTS (SELECT 1 FROM counted) AS counted FROM p;

-- name: AgentPolicyExplain :one
-- A refusal's explanation (the gate's cold path): the credential's enabled policy with what it used on day.
SELECT p.id, p.expires_at, p.capabilities, p.mailbox_ids, p.max_recipients_per_run, p.max_recipients_per_day,
  p.max_actions_per_day, p.max_monthly_mailbox_spend_cents,
  coalesce(u.recipients, 0)::integer AS used_recipients, coalesce(u.actions, 0)::integer AS used_actions
FROM agent_policies p
LEFT JOIN agent_policy_usage u ON u.organization_id = p.organization_id AND u.policy_id = p.id AND u.day = @day::date
WHERE p.organization_id = @organization_id::uuid AND p.enabled AND p.id = @id::uuid;

-- name: AgentPolicyDisabledExists :one
-- Whether the credential has a policy that is switched off (the gate's explanation when no enabled one exists).
SELECT EXISTS (SELECT 1 FROM agent_policies
  WHERE organization_id = @organization_id::uuid AND NOT enabled
    AND (api_key_id = sqlc.narg(api_key_id)::uuid OR oauth_grant_id = sqlc.narg(oauth_grant_id)::uuid));

-- name: AgentPolicyList :many
SELECT * FROM agent_policies WHERE organization_id = @organization_id::uuid ORDER BY created_at DESC, id DESC;

-- name: AgentPolicyGet :one
SELECT * FROM agent_policies WHERE organization_id = @organization_id::uuid AND id = @id::uuid;

-- name: AgentPolicyEffective :one
-- The enabled policy bound to a credential (exactly one of api_key_id and oauth_grant_id is set).
SELECT * FROM agent_policies
WHERE organization_id = @organization_id::uuid AND enabled
  AND (api_key_id = sqlc.narg(api_key_id)::uuid OR oauth_grant_id = sqlc.narg(oauth_grant_id)::uuid);

-- name: AgentPolicyInsert :one
INSERT INTO agent_policies (organization_id, id, name, enabled, api_key_id, oauth_grant_id, capabilities, mailbox_ids,
  max_recipients_per_run, max_recipients_per_day, max_actions_per_day, max_monthly_mailbox_spend_cents, expires_at, created_by)
VALUES (@organization_id::uuid, @id::uuid, @name::text, @enabled::boolean, sqlc.narg(api_key_id)::uuid, sqlc.narg(oauth_grant_id)::uuid,
  @capabilities::text[], @mailbox_ids::uuid[], @max_recipients_per_run::integer, @max_recipients_per_day::integer,
  @max_actions_per_day::integer, sqlc.narg(max_monthly_mailbox_spend_cents)::bigint, @expires_at::timestamptz, sqlc.narg(created_by)::uuid)
RETURNING *;

-- name: AgentPolicyReplace :one
-- PUT: every field of the policy is the request's; the usage counted so far stays with it.
UPDATE agent_policies SET name = @name::text, enabled = @enabled::boolean, api_key_id = sqlc.narg(api_key_id)::uuid,
  oauth_grant_id = sqlc.narg(oauth_grant_id)::uuid, capabilities = @capabilities::text[], mailbox_ids = @mailbox_ids::uuid[],
  max_recipients_per_run = @max_recipients_per_run::integer, max_recipients_per_day = @max_recipients_per_day::integer,
  max_actions_per_day = @max_actions_per_day::integer,
  max_monthly_mailbox_spend_cents = sqlc.narg(max_monthly_mailbox_spend_cents)::bigint, expires_at = @expires_at::timestamptz,
  updated_at = now()
WHERE organization_id = @organization_id::uuid AND id = @id::uuid
RETURNING *;

-- name: AgentPolicyDelete :execrows
DELETE FROM agent_policies WHERE organization_id = @organization_id::uuid AND id = @id::uuid;

-- name: AgentPolicyAPIKeyLive :one
-- Whether an API key of the organization exists and may still be used (a policy binds only a live key).
SELECT EXISTS (SELECT 1 FROM api_keys WHERE organization_id = @organization_id::uuid AND id = @id::uuid
  AND status = 'active' AND (expires_at IS NULL OR expires_at > @now::timestamptz));

-- name: AgentPolicyOAuthGrantLive :one
-- Whether an OAuth grant of the organization exists and is not revoked.
SELECT EXISTS (SELECT 1 FROM oauth_grants WHERE organization_id = @organization_id::uuid AND id = @id::uuid
  AND revoked_at IS NULL);

-- name: AgentPolicyUnknownMailboxes :many
-- The ids of ids that are not mailboxes of the organization, in the order given.
SELECT m.id::uuid AS id FROM unnest(@ids::uuid[]) WITH ORDINALITY AS m (id, n)
WHERE NOT EXISTS (SELECT 1 FROM mailboxes b WHERE b.organization_id = @organization_id::uuid AND b.id = m.id)
ORDER BY m.n;
