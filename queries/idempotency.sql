-- name: IdempotencyClaim :one
-- Inserts the in-progress record; returns no row when (credential, key) is already taken.
INSERT INTO idempotency_keys (organization_id, credential_id, key, request_hash, state, locked_until, expires_at)
VALUES (@organization_id::uuid, @credential_id::uuid, @key::text, @request_hash::bytea, 'in_progress',
        now() + make_interval(secs => @lock_seconds::int), now() + make_interval(secs => @ttl_seconds::int))
ON CONFLICT (organization_id, credential_id, key) DO NOTHING
RETURNING created_at;

-- name: IdempotencyGet :one
SELECT *, (locked_until < now())::boolean AS lock_expired, (expires_at < now())::boolean AS expired
FROM idempotency_keys
WHERE organization_id = @organization_id::uuid AND credential_id = @credential_id::uuid AND key = @key::text
FOR UPDATE;

-- name: IdempotencyReclaim :exec
-- Takes over a record whose holder died (lock expired) or that outlived its retention.
UPDATE idempotency_keys
SET state = 'in_progress', request_hash = @request_hash::bytea,
    locked_until = now() + make_interval(secs => @lock_seconds::int),
    expires_at = now() + make_interval(secs => @ttl_seconds::int),
    response_status = NULL, response_content_type = NULL, response_body = NULL, created_at = now()
WHERE organization_id = @organization_id::uuid AND credential_id = @credential_id::uuid AND key = @key::text;

-- name: IdempotencyComplete :exec
UPDATE idempotency_keys
SET state = 'completed', response_status = @response_status::int,
    response_content_type = @response_content_type::text, response_body = @response_body::bytea
WHERE organization_id = @organization_id::uuid AND credential_id = @credential_id::uuid AND key = @key::text;

-- name: IdempotencyRelease :exec
DELETE FROM idempotency_keys
WHERE organization_id = @organization_id::uuid AND credential_id = @credential_id::uuid AND key = @key::text;

-- name: IdempotencySweep :one
-- Cross-organization by design: the SECURITY DEFINER function deletes expired records of every organization.
SELECT idempotency_sweep()::bigint AS deleted;
