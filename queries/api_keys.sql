-- name: APIKeyCreate :one
INSERT INTO api_keys (organization_id, id, user_id, name, description, key_hash, key_prefix, key_suffix, permissions, expires_at)
VALUES (@organization_id::uuid, @id::uuid, sqlc.narg(user_id)::uuid, @name::text, @description::text,
        @key_hash::bytea, @key_prefix::text, @key_suffix::text, @permissions::bigint, sqlc.narg(expires_at)::timestamptz)
RETURNING *;

-- name: APIKeyLookup :one
-- Authentication does not know the organization yet: the narrow SECURITY DEFINER function is the only
-- cross-organization read of api_keys, and it answers by hash alone.
SELECT * FROM auth_api_key_lookup(@key_hash::bytea);

-- name: APIKeyRevokeByName :execrows
UPDATE api_keys
SET status = 'revoked', revoked_at = now(), revoked_reason = @reason::text, updated_at = now()
WHERE organization_id = @organization_id::uuid AND user_id = @user_id::uuid AND name = @name::text AND status = 'active';
