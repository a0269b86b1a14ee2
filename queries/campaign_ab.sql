-- A/B analysis of a campaign's variants (internal/campaigns/abtest): what each variant's sends did, and the
-- promotion of a group's winner.

-- name: CampaignVariantCounts :many
-- Every variant of the campaign with what its sends did, oldest variant first; a variant without sends counts
-- zeros. A send counts once handed over (sent, or ambiguous: it may have reached the provider), and opens,
-- clicks and replies count only on those. A bounce is a send the recipient's server refused (failed with
-- recipient_rejected: counted as rejected, never as sent) or a handed-over send that bounced later. The join
-- names the campaign so send_tasks_campaign_variant serves it.
SELECT v.id, v.name, v.step_id, v.is_control, v.is_active, v.promoted_at,
  count(t.id) FILTER (WHERE t.status IN ('sent', 'ambiguous'))::bigint AS sent,
  count(t.id) FILTER (WHERE t.status IN ('sent', 'ambiguous') AND t.opened_at IS NOT NULL)::bigint AS opened,
  count(t.id) FILTER (WHERE t.status IN ('sent', 'ambiguous') AND t.clicked_at IS NOT NULL)::bigint AS clicked,
  count(t.id) FILTER (WHERE t.status IN ('sent', 'ambiguous') AND t.replied_at IS NOT NULL)::bigint AS replied,
  count(t.id) FILTER (WHERE (t.status = 'failed' AND t.error_code = 'recipient_rejected')
    OR (t.status IN ('sent', 'ambiguous') AND t.bounced_at IS NOT NULL))::bigint AS bounced,
  count(t.id) FILTER (WHERE t.status = 'failed' AND t.error_code = 'recipient_rejected')::bigint AS rejected
FROM campaign_variants v
LEFT JOIN send_tasks t ON t.organization_id = @organization_id AND t.campaign_id = @campaign_id::uuid AND t.variant_id = v.id
WHERE v.organization_id = @organization_id AND v.campaign_id = @campaign_id
GROUP BY v.organization_id, v.id
ORDER BY v.created_at, v.id;

-- name: CampaignVariantPromote :execrows
-- Stamps a group's winner as promoted unless a variant of its group (the same step, or the campaign-level
-- variants) already is: a promotion is made once and never moved or taken back. The caller holds the
-- campaign's row lock, so two promotions of one group cannot both see none.
UPDATE campaign_variants v SET promoted_at = @promoted_at::timestamptz
WHERE v.organization_id = @organization_id AND v.campaign_id = @campaign_id AND v.id = @id AND v.promoted_at IS NULL
  AND NOT EXISTS (
    SELECT 1 FROM campaign_variants o
    WHERE o.organization_id = @organization_id AND o.campaign_id = @campaign_id
      AND o.step_id IS NOT DISTINCT FROM v.step_id AND o.promoted_at IS NOT NULL);
