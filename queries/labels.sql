-- name: LabelLockKind :exec
-- Serializes every write that changes the order of one kind of label in one organization (create, move,
-- delete) for the rest of the transaction. Row locks cannot do this alone: a concurrent insert is not among
-- the rows another transaction locked, so two creates would both take position n and both pass the cap.
SELECT pg_advisory_xact_lock(hashtextextended('labels:' || (@organization_id::uuid)::text || ':' || @kind::text, 0));

-- name: LabelCountKind :one
SELECT count(*) FROM labels WHERE organization_id = @organization_id::uuid AND kind = @kind::text;

-- name: LabelCreate :one
INSERT INTO labels (organization_id, id, kind, title, color, position)
VALUES (@organization_id::uuid, @id::uuid, @kind::text, @title::text, @color::text, @position::int)
RETURNING *;

-- name: LabelGet :one
SELECT * FROM labels WHERE organization_id = @organization_id::uuid AND kind = @kind::text AND id = @id::uuid;

-- name: LabelUpdate :one
-- A NULL title or color keeps the stored value.
UPDATE labels
SET title = coalesce(sqlc.narg(title)::text, title), color = coalesce(sqlc.narg(color)::text, color), updated_at = now()
WHERE organization_id = @organization_id::uuid AND kind = @kind::text AND id = @id::uuid
RETURNING *;

-- name: LabelDelete :one
DELETE FROM labels WHERE organization_id = @organization_id::uuid AND kind = @kind::text AND id = @id::uuid
RETURNING title;

-- name: LabelRenumber :exec
-- Closes the gaps in one kind's order (0..n-1 by position, then id), touching only the rows that move.
UPDATE labels l SET position = o.rn - 1, updated_at = now()
FROM (
  SELECT id, row_number() OVER (ORDER BY position, id) AS rn
  FROM labels WHERE organization_id = @organization_id::uuid AND kind = @kind::text
) o
WHERE l.organization_id = @organization_id::uuid AND l.id = o.id AND l.position <> o.rn - 1;

-- name: LabelOrderForUpdate :many
-- One kind's labels in display order, locked until the transaction ends (at most the per-kind cap of rows).
SELECT id, title FROM labels
WHERE organization_id = @organization_id::uuid AND kind = @kind::text
ORDER BY position, id
FOR UPDATE;

-- name: LabelSetPositions :exec
-- Writes a whole new order: ids[i] takes position i. Rows already at their position are left alone.
UPDATE labels l SET position = o.pos - 1, updated_at = now()
FROM unnest(@ids::uuid[]) WITH ORDINALITY AS o(id, pos)
WHERE l.organization_id = @organization_id::uuid AND l.id = o.id AND l.position <> o.pos - 1;

-- name: LabelListAll :many
-- Every label of the organization, by kind and position (the profile's folder, tag and category lists).
SELECT id, kind, title FROM labels WHERE organization_id = $1 ORDER BY kind, position, id;
