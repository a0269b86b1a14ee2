-- name: ApprovalInsert :one
INSERT INTO approvals (organization_id, id, run_id, action_type, payload, reasons, policy_id, credential_kind, credential_id,
  requested_by_user_id, expires_at, created_at, updated_at)
VALUES (@organization_id::uuid, @id::uuid, sqlc.narg(run_id)::uuid, @action_type::text, @payload::jsonb, @reasons::text[],
  sqlc.narg(policy_id)::uuid, @credential_kind::text, @credential_id::uuid, sqlc.narg(requested_by_user_id)::uuid,
  @expires_at::timestamptz, @created_at::timestamptz, @created_at::timestamptz)
RETURNING *;

-- name: ApprovalGet :one
SELECT * FROM approvals WHERE organization_id = @organization_id::uuid AND id = @id::uuid;

-- name: ApprovalList :many
-- Newest first (approvals_recent).
SELECT * FROM approvals WHERE organization_id = @organization_id::uuid
ORDER BY created_at DESC, id DESC
LIMIT @row_limit::integer;

-- name: ApprovalDecide :one
-- The decision: only a pending approval that has not expired at now changes, so a decision, a second decision
-- and the expiry can never both win.
UPDATE approvals SET status = @status::text, decided_by = sqlc.narg(decided_by)::uuid, decision_reason = @decision_reason::text,
  decided_at = @now::timestamptz, updated_at = @now::timestamptz
WHERE organization_id = @organization_id::uuid AND id = @id::uuid AND status = 'pending' AND expires_at > @now::timestamptz
RETURNING *;

-- name: ApprovalExpire :one
-- Marks a pending approval whose time ran out at now expired (nothing when it was decided meanwhile).
UPDATE approvals SET status = 'expired', updated_at = @now::timestamptz
WHERE organization_id = @organization_id::uuid AND id = @id::uuid AND status = 'pending' AND expires_at <= @now::timestamptz
RETURNING *;

-- name: ApprovalFinish :one
-- What acting on an approved approval produced: executed with its result, or still approved with the error a
-- hard gate answered.
UPDATE approvals SET status = @status::text, executed_at = sqlc.narg(executed_at)::timestamptz, result = @result::jsonb,
  updated_at = @now::timestamptz
WHERE organization_id = @organization_id::uuid AND id = @id::uuid AND status = 'approved'
RETURNING *;

-- name: ApprovalDeciders :many
-- Who may decide the organization's approvals: members whose role holds permission, a built-in role listed in
-- roles or a custom role whose permissions have the bit.
SELECT m.user_id FROM memberships m
LEFT JOIN custom_roles r ON r.organization_id = m.organization_id AND r.id = m.custom_role_id
WHERE m.organization_id = @organization_id::uuid
  AND (m.role = ANY (@roles::text[]) OR (r.permissions & @permission::bigint) = @permission::bigint)
ORDER BY m.user_id;
