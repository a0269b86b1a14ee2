-- name: SuppressionAdd :many
-- One batch of normalized entries. A value already suppressed is left as it is (and not returned), unless its
-- entry expired: then it is suppressed again from now. The returned values are the ones added.
INSERT INTO suppressions AS s (organization_id, id, kind, value, reason, source)
SELECT @organization_id::uuid, e.id, e.kind, e.value, e.reason, @source::text
FROM (SELECT unnest(@ids::uuid[]) AS id, unnest(@kinds::text[]) AS kind, unnest(@suppressed_values::text[]) AS value,
             unnest(@reasons::text[]) AS reason) AS e
ON CONFLICT (organization_id, kind, value) DO UPDATE
  SET reason = EXCLUDED.reason, source = EXCLUDED.source, campaign_id = NULL, expires_at = NULL,
      created_at = now(), updated_at = now()
  WHERE s.expires_at IS NOT NULL AND s.expires_at <= now()
RETURNING s.value;

-- name: SuppressionList :many
-- Newest first, entries still in force only; q matches part of the value (trigram index).
SELECT * FROM suppressions
WHERE organization_id = @organization_id::uuid
  AND (expires_at IS NULL OR expires_at > now())
  AND (sqlc.narg(q)::text IS NULL OR value LIKE '%' || sqlc.narg(q)::text || '%')
  AND (sqlc.narg(before_created_at)::timestamptz IS NULL
       OR (created_at, id) < (sqlc.narg(before_created_at)::timestamptz, sqlc.narg(before_id)::uuid))
ORDER BY created_at DESC, id DESC
LIMIT @row_limit::int;

-- name: SuppressionDelete :one
DELETE FROM suppressions WHERE organization_id = @organization_id::uuid AND id = @id::uuid
RETURNING kind, value;

-- name: SuppressionInForce :one
-- The entry in force that stops mail to an address: its own entry first, else its domain's, newest first.
SELECT * FROM suppressions
WHERE organization_id = $1
  AND ((kind = 'email' AND value = sqlc.arg(email)::text) OR (kind = 'domain' AND value = sqlc.arg(domain)::text))
  AND (expires_at IS NULL OR expires_at > now())
ORDER BY kind = 'email' DESC, created_at DESC
LIMIT 1;

-- name: SuppressionsInForceAny :many
-- The entries in force against any of the addresses (their own entries) or domains (whole-domain entries).
SELECT * FROM suppressions
WHERE organization_id = @organization_id
  AND ((kind = 'email' AND value = ANY(@emails::text[])) OR (kind = 'domain' AND value = ANY(@domains::text[])))
  AND (expires_at IS NULL OR expires_at > now());

-- name: SuppressionRecord :execrows
-- Suppresses one address for good because of what its recipient's side said (source bounce, complaint or
-- unsubscribe), naming the campaign whose send it was about. An entry in force for good is left as it is (no
-- row); an expiring or expired one becomes this one.
INSERT INTO suppressions AS s (organization_id, id, kind, value, reason, source, campaign_id)
VALUES (@organization_id, @id, 'email', @value, @reason, @source, sqlc.narg(campaign_id))
ON CONFLICT (organization_id, kind, value) DO UPDATE
  SET reason = EXCLUDED.reason, source = EXCLUDED.source, campaign_id = EXCLUDED.campaign_id, expires_at = NULL,
      created_at = now(), updated_at = now()
  WHERE s.expires_at IS NOT NULL;
