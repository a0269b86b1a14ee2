-- Files sent with a campaign's steps, stored in Postgres. Listing reads no content; the sender reads it.

-- name: CampaignAttachmentsOf :many
SELECT id, step_id, filename, mime_type, size, sha256, created_at FROM campaign_attachments
WHERE organization_id = @organization_id AND campaign_id = @campaign_id
ORDER BY created_at, id;

-- name: CampaignAttachmentsUsage :one
-- What a campaign's files take so far, against the per-campaign count and byte limits.
SELECT count(*) AS files, coalesce(sum(size), 0)::bigint AS bytes FROM campaign_attachments
WHERE organization_id = @organization_id AND campaign_id = @campaign_id;

-- name: CampaignAttachmentInsert :one
INSERT INTO campaign_attachments (organization_id, campaign_id, id, step_id, filename, mime_type, size, sha256, content)
VALUES (@organization_id, @campaign_id, @id, sqlc.narg(step_id), @filename, @mime_type, @size, @sha256, @content)
RETURNING created_at;

-- name: CampaignAttachmentDelete :execrows
DELETE FROM campaign_attachments WHERE organization_id = @organization_id AND campaign_id = @campaign_id AND id = @id;
