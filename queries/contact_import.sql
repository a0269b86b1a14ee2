-- The load itself works on a temporary staging table sqlc cannot see; those statements live in
-- internal/audience/contactimport (plan.go).

-- name: ContactImportCategoriesByKey :many
-- The organization's categories whose lowercased title is one of keys; of two categories spelled alike the
-- first in the list's order wins.
SELECT DISTINCT ON (lower(title)) lower(title)::text AS key, id FROM labels
WHERE organization_id = @organization_id::uuid AND kind = 'category' AND lower(title) = ANY(@keys::text[])
ORDER BY lower(title), position, id;

-- name: ContactImportCategoriesCreate :many
-- New categories named in an import file, appended after the organization's last category (offsets are
-- 0, 1, 2, ... in file order).
INSERT INTO labels (organization_id, id, kind, title, position)
SELECT @organization_id::uuid, n.id, 'category', n.title,
  (SELECT coalesce(max(position) + 1, 0) FROM labels WHERE organization_id = @organization_id::uuid AND kind = 'category')
    + n.offset_by
FROM (SELECT unnest(@ids::uuid[]) AS id, unnest(@titles::text[]) AS title, unnest(@offsets::int[]) AS offset_by) AS n
RETURNING lower(title)::text AS key, id;

-- name: ContactImportOrgEmpty :one
-- Whether the organization has no contacts yet: its first import has no existing addresses to check rows
-- against.
SELECT NOT EXISTS (SELECT 1 FROM contacts WHERE organization_id = @organization_id::uuid) AS empty;

-- name: ContactImportPendingRange :exec
-- Records the range of ids an import generated for its new rows (written outside the search indexes), where
-- searches and the index job find them until they are indexed.
INSERT INTO contact_index_pending (organization_id, lo, hi) VALUES (@organization_id::uuid, @lo::uuid, @hi::uuid);

-- name: ContactImportSettle :one
-- After an import's insert, in its transaction: analyzes the organization column when the planner's picture
-- of the organization is far off, so searches before the index job has run plan with the right sizes, and
-- answers whether it did (contacts_import_settle; its migration says why and when).
SELECT contacts_import_settle() AS analyzed;
