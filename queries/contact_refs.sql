-- name: ContactRefCategories :many
-- Which of the given ids are categories of the organization: what a contact write may link.
SELECT id FROM labels
WHERE organization_id = @organization_id::uuid AND kind = 'category' AND id = ANY(@ids::uuid[]);

-- name: ContactRefCampaigns :many
SELECT id FROM campaigns
WHERE organization_id = @organization_id::uuid AND id = ANY(@ids::uuid[]);

-- name: ContactRefSegments :many
SELECT id FROM segments
WHERE organization_id = @organization_id::uuid AND id = ANY(@ids::uuid[]);
