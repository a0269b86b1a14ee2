-- Campaign validation and preflight (internal/campaigns/checks): what the checks read about a campaign beyond
-- its row and steps, and the reports preflight stores.

-- name: CampaignChecksVariants :many
SELECT id, step_id, name, weight, subject, body_plain, body_html, is_control, is_active FROM campaign_variants
WHERE organization_id = @organization_id AND campaign_id = @campaign_id
ORDER BY created_at, id;

-- name: CampaignChecksPool :many
-- The mailboxes a campaign would send from, each once, usable or not: its explicit senders (with their enabled
-- flag), the mailboxes carrying any of tag_ids, and every mailbox of the organization when every_mailbox is set
-- (the tags strategy with neither senders nor tags). A tagged mailbox that is also a disabled sender stays
-- disabled.
SELECT m.id, m.email, (m.status = 'active')::boolean AS active, coalesce(cm.enabled, true)::boolean AS enabled,
  m.campaign_limit
FROM mailboxes m
LEFT JOIN campaign_mailboxes cm ON cm.organization_id = m.organization_id AND cm.campaign_id = @campaign_id
  AND cm.mailbox_id = m.id
WHERE m.organization_id = @organization_id
  AND (cm.mailbox_id IS NOT NULL OR m.tags && @tag_ids::uuid[] OR @every_mailbox::boolean)
ORDER BY m.email, m.id;

-- name: CampaignChecksCustomFieldKeys :many
-- The custom-field keys the organization's contacts carry. It reads every contact of the organization with
-- custom fields, so the checks ask only when a template names a custom field without a fallback.
SELECT DISTINCT k.key::text FROM contacts c CROSS JOIN LATERAL jsonb_object_keys(c.custom_fields) AS k(key)
WHERE c.organization_id = @organization_id AND c.custom_fields <> '{}'::jsonb
ORDER BY 1;

-- name: CampaignPreflightReportInsert :one
INSERT INTO campaign_preflight_reports (organization_id, campaign_id, id, passed, score, checks, recommendations)
VALUES (@organization_id, @campaign_id, @id, @passed, @score, @checks, @recommendations)
RETURNING *;
