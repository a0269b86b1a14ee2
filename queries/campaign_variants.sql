-- A/B variants of a campaign: step-scoped (step_id) or campaign-level (step_id NULL).

-- name: CampaignVariantsOf :many
SELECT * FROM campaign_variants WHERE organization_id = @organization_id AND campaign_id = @campaign_id
ORDER BY created_at, id;

-- name: CampaignVariantGet :one
SELECT * FROM campaign_variants WHERE organization_id = @organization_id AND campaign_id = @campaign_id AND id = @id;

-- name: CampaignVariantCount :one
SELECT count(*) FROM campaign_variants WHERE organization_id = @organization_id AND campaign_id = @campaign_id;

-- name: CampaignVariantControlOf :many
-- The control variant of a step other than the variant being written (at most one: a unique index).
SELECT id, name FROM campaign_variants
WHERE organization_id = @organization_id AND step_id = @step_id AND is_control AND id <> @id;

-- name: CampaignVariantInsert :one
INSERT INTO campaign_variants (organization_id, campaign_id, id, step_id, name, weight, subject, body_plain, body_html,
  is_control, is_active, metadata)
VALUES (@organization_id, @campaign_id, @id, sqlc.narg(step_id), @name, @weight, @subject, @body_plain, @body_html,
  @is_control, @is_active, @metadata)
RETURNING *;

-- name: CampaignVariantUpdate :one
UPDATE campaign_variants SET name = @name, weight = @weight, subject = @subject, body_plain = @body_plain,
  body_html = @body_html, is_control = @is_control, is_active = @is_active, metadata = @metadata, updated_at = now()
WHERE organization_id = @organization_id AND campaign_id = @campaign_id AND id = @id
RETURNING *;

-- name: CampaignVariantDelete :execrows
DELETE FROM campaign_variants WHERE organization_id = @organization_id AND campaign_id = @campaign_id AND id = @id;
