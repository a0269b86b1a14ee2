-- name: APIKeyCreate :one
INSERT INTO api_keys (organization_id, id, user_id, name, description, key_hash, key_prefix, key_suffix, permissions,
                      allowed_ips, allowed_email_accounts, rate_limit_per_minute, expires_at)
VALUES (@organization_id::uuid, @id::uuid, sqlc.narg(user_id)::uuid, @name::text, @description::text,
        @key_hash::bytea, @key_prefix::text, @key_suffix::text, @permissions::bigint,
        COALESCE(sqlc.narg(allowed_ips)::text[], '{}'), COALESCE(sqlc.narg(allowed_email_accounts)::uuid[], '{}'),
        @rate_limit_per_minute::int, sqlc.narg(expires_at)::timestamptz)
RETURNING *;

-- name: APIKeyLookup :one
-- Authentication does not know the organization yet: the narrow SECURITY DEFINER function is the only
-- cross-organization read of api_keys, and it answers by hash alone.
SELECT * FROM auth_api_key_lookup(@key_hash::bytea);

-- name: APIKeyRevokeByName :execrows
UPDATE api_keys
SET status = 'revoked', revoked_at = now(), revoked_reason = @reason::text, updated_at = now()
WHERE organization_id = @organization_id::uuid AND user_id = @user_id::uuid AND name = @name::text AND status = 'active';

-- name: APIKeyGet :one
SELECT * FROM api_keys WHERE organization_id = @organization_id::uuid AND id = @id::uuid;

-- name: APIKeyGetForUpdate :one
SELECT * FROM api_keys WHERE organization_id = @organization_id::uuid AND id = @id::uuid FOR UPDATE;

-- name: APIKeyList :many
-- Newest first; the (created_at, id) keyset walks api_keys_newest without an OFFSET.
SELECT * FROM api_keys
WHERE organization_id = @organization_id::uuid
  AND (sqlc.narg(before_created_at)::timestamptz IS NULL
       OR (created_at, id) < (sqlc.narg(before_created_at)::timestamptz, sqlc.narg(before_id)::uuid))
ORDER BY created_at DESC, id DESC
LIMIT @row_limit::int;

-- name: APIKeyUpdate :one
-- Each field is replaced only when given; a NULL leaves it as it is.
UPDATE api_keys SET
  name = COALESCE(sqlc.narg(name)::text, name),
  description = COALESCE(sqlc.narg(description)::text, description),
  permissions = COALESCE(sqlc.narg(permissions)::bigint, permissions),
  allowed_ips = COALESCE(sqlc.narg(allowed_ips)::text[], allowed_ips),
  allowed_email_accounts = COALESCE(sqlc.narg(allowed_email_accounts)::uuid[], allowed_email_accounts),
  rate_limit_per_minute = COALESCE(sqlc.narg(rate_limit_per_minute)::int, rate_limit_per_minute),
  updated_at = now()
WHERE organization_id = @organization_id::uuid AND id = @id::uuid
RETURNING *;

-- name: APIKeyRevoke :one
-- Revoking twice keeps the first revocation's time and reason.
UPDATE api_keys SET
  status = 'revoked',
  revoked_at = COALESCE(revoked_at, now()),
  revoked_reason = COALESCE(revoked_reason, @reason::text),
  updated_at = CASE WHEN status = 'revoked' THEN updated_at ELSE now() END
WHERE organization_id = @organization_id::uuid AND id = @id::uuid
RETURNING *;

-- name: APIKeyDelete :execrows
DELETE FROM api_keys WHERE organization_id = @organization_id::uuid AND id = @id::uuid;

-- name: APIKeyCounts :one
-- Expired keys still read active (expiry is judged at read time), so they are counted apart from both.
SELECT
  count(*) FILTER (WHERE status = 'active' AND (expires_at IS NULL OR expires_at > now()))::int AS active_keys,
  count(*) FILTER (WHERE status = 'revoked')::int AS revoked_keys,
  count(*) FILTER (WHERE status = 'active' AND expires_at <= now())::int AS expired_keys
FROM api_keys WHERE organization_id = @organization_id::uuid;

-- name: APIKeyLastCall :many
SELECT last_used_at FROM api_keys
WHERE organization_id = @organization_id::uuid AND last_used_at IS NOT NULL
ORDER BY last_used_at DESC
LIMIT 1;

-- name: APIKeyTouch :exec
-- Batched last-use marks: one row per key with its newest request; never moves a mark backwards.
UPDATE api_keys k SET last_used_at = u.at, last_request_ip = u.ip
FROM (SELECT unnest(@ids::uuid[]) AS id, unnest(@ats::timestamptz[]) AS at, unnest(@ips::text[]) AS ip) AS u
WHERE k.organization_id = @organization_id::uuid AND k.id = u.id
  AND (k.last_used_at IS NULL OR k.last_used_at < u.at);

-- name: APIKeyUsageInsert :execrows
-- One batch of request-log rows of one organization. Rows of a key deleted meanwhile are dropped.
INSERT INTO api_key_usage_logs (organization_id, id, api_key_id, endpoint, method, ip_address, user_agent,
                                response_code, response_time_ms, created_at)
SELECT @organization_id::uuid, u.id, u.api_key_id, u.endpoint, u.method, u.ip, u.ua, u.code, u.ms, u.at
FROM (SELECT unnest(@ids::uuid[]) AS id, unnest(@api_key_ids::uuid[]) AS api_key_id,
             unnest(@endpoints::text[]) AS endpoint, unnest(@methods::text[]) AS method, unnest(@ips::text[]) AS ip,
             unnest(@uas::text[]) AS ua, unnest(@codes::int[]) AS code, unnest(@ms::int[]) AS ms,
             unnest(@ats::timestamptz[]) AS at) AS u
WHERE EXISTS (SELECT 1 FROM api_keys k WHERE k.organization_id = @organization_id::uuid AND k.id = u.api_key_id);

-- name: APIKeyUsageTotals :one
SELECT count(*)::bigint AS requests,
       (count(*) FILTER (WHERE response_code >= 400))::bigint AS errors,
       COALESCE(avg(response_time_ms), 0)::float8 AS avg_latency_ms
FROM api_key_usage_logs
WHERE organization_id = @organization_id::uuid AND created_at >= @since::timestamptz;

-- name: APIKeyUsageBuckets :many
-- Every bucket of the range, empty ones included (charts need the gaps). sqlc.narg(api_key_id) NULL = every key.
WITH b AS (
  SELECT generate_series(date_trunc(@unit::text, @from_at::timestamptz, 'UTC'),
                         @to_at::timestamptz, ('1 ' || @unit::text)::interval) AS bucket
), l AS (
  SELECT date_trunc(@unit::text, created_at, 'UTC') AS bucket, response_code, response_time_ms
  FROM api_key_usage_logs
  WHERE organization_id = @organization_id::uuid
    AND (sqlc.narg(api_key_id)::uuid IS NULL OR api_key_id = sqlc.narg(api_key_id)::uuid)
    AND created_at >= @from_at::timestamptz AND created_at < @to_at::timestamptz
)
SELECT b.bucket::timestamptz AS bucket,
       count(l.bucket)::bigint AS total,
       (count(l.bucket) FILTER (WHERE l.response_code < 400))::bigint AS success,
       (count(l.bucket) FILTER (WHERE l.response_code >= 400 AND l.response_code < 500))::bigint AS client_errors,
       (count(l.bucket) FILTER (WHERE l.response_code >= 500))::bigint AS server_errors,
       COALESCE(avg(l.response_time_ms), 0)::float8 AS avg_latency_ms
FROM b LEFT JOIN l ON l.bucket = b.bucket
WHERE b.bucket < @to_at::timestamptz
GROUP BY b.bucket
ORDER BY b.bucket;

-- name: APIKeyUsageEndpoints :many
SELECT endpoint, method, count(*)::bigint AS count,
       (count(*) FILTER (WHERE response_code >= 400))::bigint AS error_count,
       avg(response_time_ms)::float8 AS avg_latency_ms
FROM api_key_usage_logs
WHERE organization_id = @organization_id::uuid
  AND (sqlc.narg(api_key_id)::uuid IS NULL OR api_key_id = sqlc.narg(api_key_id)::uuid)
  AND created_at >= @from_at::timestamptz AND created_at < @to_at::timestamptz
GROUP BY endpoint, method
ORDER BY count(*) DESC, endpoint, method
LIMIT 200;

-- name: APIKeyUsageLogList :many
SELECT * FROM api_key_usage_logs
WHERE organization_id = @organization_id::uuid AND api_key_id = @api_key_id::uuid
  AND (sqlc.narg(before_created_at)::timestamptz IS NULL
       OR (created_at, id) < (sqlc.narg(before_created_at)::timestamptz, sqlc.narg(before_id)::uuid))
ORDER BY created_at DESC, id DESC
LIMIT @row_limit::int;

-- name: RateLimitTake :one
-- Seconds until the credential may call again; 0 admits (and counts) this request.
SELECT rate_limit_take(@credential_id::uuid, @max_requests::int, @window_seconds::int)::int AS retry_after;

-- name: APIKeyUsageSweep :one
SELECT api_key_usage_sweep(@before::timestamptz)::bigint AS removed;

-- name: APIKeyAdmit :one
-- Authentication and admission in one round trip: the key by hash (the narrow cross-organization lookup) and,
-- when it can authenticate from this address, one request counted against its per-minute window.
-- retry_after is -1 when nothing was counted (revoked, expired, another address), 0 when the request is
-- admitted, else the seconds to wait. Go re-checks every condition; SQL only decides whether to count.
SELECT k.*,
       (CASE WHEN k.status = 'active' AND (k.expires_at IS NULL OR k.expires_at > now())
                  AND (cardinality(k.allowed_ips) = 0 OR sqlc.narg(ip)::inet <<= ANY (k.allowed_ips::inet[]))
             THEN rate_limit_take(k.id, CASE WHEN k.rate_limit_per_minute > 0 THEN k.rate_limit_per_minute
                                             ELSE @default_limit::int END, 60)
             ELSE -1
        END)::int AS retry_after
FROM auth_api_key_lookup(@key_hash::bytea) AS k;
