-- name: AuditInsert :exec
INSERT INTO audit_log (organization_id, id, actor_type, actor_id, user_id, action, event, target_type, target_id,
                       metadata, ip_address, user_agent, request_id)
VALUES (@organization_id::uuid, @id::uuid, @actor_type::text, sqlc.narg(actor_id)::uuid, sqlc.narg(user_id)::uuid,
        @action::text, @event::text, @target_type::text, @target_id::text, @metadata::jsonb, @ip_address::text, @user_agent::text,
        @request_id::text);

-- name: AuditLogPosition :one
-- The keyset position a list cursor names: the cursor is the id of the last entry of the previous page.
SELECT created_at FROM audit_log WHERE organization_id = @organization_id::uuid AND id = @id::uuid;

-- name: AuditLogList :many
-- Newest first. The keyset bound is always a row comparison (open bounds become 'infinity' and the greatest
-- uuid) rather than "cursor IS NULL OR ...": that keeps it an index condition on audit_log_created, so a deep
-- page starts where the previous one ended instead of filtering every newer row again. The filters are
-- optional and checked on the rows that index scan yields.
-- The acting person (user_id, recorded with the entry: the session's user, the API key's owner, the OAuth
-- grant's approver) is joined; actor is null once that user is deleted. actor_id matches either the person or
-- the credential.
SELECT a.id, a.organization_id, a.actor_type, a.actor_id, a.user_id, a.action, a.event, a.target_type, a.target_id,
       a.metadata, a.ip_address, a.user_agent, a.request_id, a.created_at,
       u.id AS actor_user_id, u.first_name AS actor_first_name, u.last_name AS actor_last_name,
       u.email AS actor_email
FROM audit_log a
LEFT JOIN users u ON u.id = a.user_id
WHERE a.organization_id = @organization_id::uuid
  AND (a.created_at, a.id) < (coalesce(sqlc.narg(before_created_at)::timestamptz, 'infinity'::timestamptz),
                              coalesce(sqlc.narg(before_id)::uuid, 'ffffffff-ffff-ffff-ffff-ffffffffffff'::uuid))
  AND (sqlc.narg(actor_id)::uuid IS NULL OR a.actor_id = sqlc.narg(actor_id)::uuid OR a.user_id = sqlc.narg(actor_id)::uuid)
  AND (sqlc.narg(entity_type)::text IS NULL OR a.target_type = sqlc.narg(entity_type)::text)
  AND (sqlc.narg(entity_id)::text IS NULL OR a.target_id = sqlc.narg(entity_id)::text)
  AND (sqlc.narg(action)::text IS NULL OR a.action = sqlc.narg(action)::text OR a.event = sqlc.narg(action)::text)
  AND (sqlc.narg(created_from)::timestamptz IS NULL OR a.created_at >= sqlc.narg(created_from)::timestamptz)
  AND (sqlc.narg(created_before)::timestamptz IS NULL OR a.created_at < sqlc.narg(created_before)::timestamptz)
ORDER BY a.created_at DESC, a.id DESC
LIMIT @row_limit::int;
