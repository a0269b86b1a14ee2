-- name: AuditInsert :exec
INSERT INTO audit_log (organization_id, id, actor_type, actor_id, action, target_type, target_id, metadata,
                       ip_address, user_agent, request_id)
VALUES (@organization_id::uuid, @id::uuid, @actor_type::text, sqlc.narg(actor_id)::uuid, @action::text,
        @target_type::text, @target_id::text, @metadata::jsonb, @ip_address::text, @user_agent::text, @request_id::text);
