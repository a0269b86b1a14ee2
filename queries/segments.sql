-- name: SegmentLockOrg :exec
-- Serializes segment creation per organization for the rest of the transaction, so two concurrent creates
-- cannot both pass the per-organization cap (a row lock cannot: the new row is not there to lock).
SELECT pg_advisory_xact_lock(hashtextextended('segments:' || (@organization_id::uuid)::text, 0));

-- name: SegmentCount :one
SELECT count(*) FROM segments WHERE organization_id = @organization_id::uuid;

-- name: SegmentCreate :one
INSERT INTO segments (organization_id, id, name, description, kind, filters)
VALUES (@organization_id::uuid, @id::uuid, @name::text, @description::text, @kind::text, sqlc.narg(filters)::jsonb)
RETURNING *;

-- name: SegmentGet :one
SELECT * FROM segments WHERE organization_id = @organization_id::uuid AND id = @id::uuid;

-- name: SegmentGetForUpdate :one
-- Locks the segment until the transaction ends: definition changes and membership changes of one segment
-- run one after the other, so each one's added/removed counts describe what it did. NO KEY UPDATE leaves
-- writes that only reference the segment (a pin, a campaign link) free to go on: a membership change that
-- goes on to lock the segment's campaigns (the agent lead gate) never deadlocks with a campaign update that
-- links the segment.
SELECT * FROM segments WHERE organization_id = @organization_id::uuid AND id = @id::uuid FOR NO KEY UPDATE;

-- name: SegmentUpdate :one
-- Writes the whole definition; the handler has merged the fields sent into the stored ones.
UPDATE segments
SET name = @name::text, description = @description::text, kind = @kind::text, filters = sqlc.narg(filters)::jsonb,
    updated_at = now()
WHERE organization_id = @organization_id::uuid AND id = @id::uuid
RETURNING *;

-- name: SegmentDelete :one
-- Pins go with the segment (ON DELETE CASCADE).
DELETE FROM segments WHERE organization_id = @organization_id::uuid AND id = @id::uuid
RETURNING name, kind;

-- name: SegmentList :many
-- Newest first through segments_newest; q is an escaped, lowercased LIKE pattern body matched anywhere in the
-- name. An organization has at most 500 segments, so the name filter is a recheck over that index range.
SELECT * FROM segments
WHERE organization_id = @organization_id::uuid
  AND (sqlc.narg(q)::text IS NULL OR lower(name) LIKE '%' || sqlc.narg(q)::text || '%')
  AND (sqlc.narg(before_created_at)::timestamptz IS NULL
       OR (created_at, id) < (sqlc.narg(before_created_at)::timestamptz, sqlc.narg(before_id)::uuid))
ORDER BY created_at DESC, id DESC
LIMIT @row_limit::int;

-- name: SegmentPinsDeleteExcludes :exec
-- A static segment is its include pins only: exclude pins left from a dynamic definition mean nothing there.
DELETE FROM segment_pins
WHERE organization_id = @organization_id::uuid AND segment_id = @segment_id::uuid AND NOT include;

-- name: SegmentPinsOf :many
-- The pins the given contacts have in one segment.
SELECT contact_id, include FROM segment_pins
WHERE organization_id = @organization_id::uuid AND segment_id = @segment_id::uuid AND contact_id = ANY(@contact_ids::uuid[]);

-- name: SegmentPinsExclude :execrows
-- Keeps contacts out of a dynamic segment although they match its filters; an include pin turns into an
-- exclude pin.
INSERT INTO segment_pins (organization_id, segment_id, contact_id, include)
SELECT @organization_id::uuid, @segment_id::uuid, unnest(@contact_ids::uuid[]), false
ON CONFLICT (organization_id, segment_id, contact_id) DO UPDATE SET include = false, created_at = now()
WHERE segment_pins.include;

-- name: SegmentPinsDeleteIncludes :execrows
DELETE FROM segment_pins
WHERE organization_id = @organization_id::uuid AND segment_id = @segment_id::uuid AND include
  AND contact_id = ANY(@contact_ids::uuid[]);
