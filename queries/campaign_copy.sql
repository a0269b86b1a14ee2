-- Duplicating a campaign: the parts a copy takes (part 3 "Duplicate"), with step ids mapped from the source's
-- (old_ids[i] becomes new_ids[i]) so step-scoped variants and attachments follow their step.

-- name: CampaignLabelsCopy :exec
INSERT INTO campaign_labels (organization_id, campaign_id, label_id)
SELECT l.organization_id, @new_campaign_id, l.label_id FROM campaign_labels l
WHERE l.organization_id = @organization_id AND l.campaign_id = @campaign_id;

-- name: CampaignSendersCopy :exec
INSERT INTO campaign_mailboxes (organization_id, campaign_id, mailbox_id, weight, enabled, created_at)
SELECT s.organization_id, @new_campaign_id, s.mailbox_id, s.weight, s.enabled, s.created_at FROM campaign_mailboxes s
WHERE s.organization_id = @organization_id AND s.campaign_id = @campaign_id;

-- name: CampaignVariantsCopy :exec
INSERT INTO campaign_variants (organization_id, campaign_id, id, step_id, name, weight, subject, body_plain, body_html,
  is_control, is_active, metadata, created_at)
SELECT v.organization_id, @new_campaign_id, gen_random_uuid(), m.new_id, v.name, v.weight, v.subject, v.body_plain,
  v.body_html, v.is_control, v.is_active, v.metadata, v.created_at
FROM campaign_variants v
LEFT JOIN (SELECT unnest(@old_ids::uuid[]) AS old_id, unnest(@new_ids::uuid[]) AS new_id) m ON m.old_id = v.step_id
WHERE v.organization_id = @organization_id AND v.campaign_id = @campaign_id;

-- name: CampaignAttachmentsCopy :exec
INSERT INTO campaign_attachments (organization_id, campaign_id, id, step_id, filename, mime_type, size, sha256, content,
  created_at)
SELECT a.organization_id, @new_campaign_id, gen_random_uuid(), m.new_id, a.filename, a.mime_type, a.size, a.sha256,
  a.content, a.created_at
FROM campaign_attachments a
LEFT JOIN (SELECT unnest(@old_ids::uuid[]) AS old_id, unnest(@new_ids::uuid[]) AS new_id) m ON m.old_id = a.step_id
WHERE a.organization_id = @organization_id AND a.campaign_id = @campaign_id;
