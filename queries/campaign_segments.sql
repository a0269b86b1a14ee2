-- Segment links of campaigns: the members of a linked segment become the campaign's pending leads when the
-- link is made and, through the periodic enrolment, as they join. Membership itself is compiled by the
-- contacts package (dynamic SQL), so the enrolling INSERT ... SELECT is built there, not here.

-- name: CampaignSegmentsOf :many
SELECT campaign_id, segment_id FROM campaign_segments
WHERE organization_id = @organization_id::uuid AND campaign_id = ANY(@campaign_ids::uuid[])
ORDER BY campaign_id, created_at, segment_id;

-- name: CampaignSegmentsExisting :many
-- The ids among segment_ids that are segments of the organization.
SELECT id FROM segments WHERE organization_id = @organization_id::uuid AND id = ANY(@segment_ids::uuid[]);

-- name: CampaignSegmentsRetain :exec
-- Drops the campaign's links to segments not in keep_ids (a replaced set).
DELETE FROM campaign_segments
WHERE organization_id = @organization_id::uuid AND campaign_id = @campaign_id::uuid
  AND NOT (segment_id = ANY(@keep_ids::uuid[]));

-- name: CampaignSegmentsAdd :exec
-- Links the segments; a link already there keeps its created_at.
INSERT INTO campaign_segments (organization_id, campaign_id, segment_id, created_at)
SELECT @organization_id::uuid, @campaign_id::uuid, s.id, now() + (s.n * interval '1 microsecond')
FROM unnest(@segment_ids::uuid[]) WITH ORDINALITY AS s(id, n)
ON CONFLICT DO NOTHING;

-- name: CampaignSegmentsEnrolled :exec
-- Records that the campaign's links were enrolled now (the periodic job takes the oldest first).
UPDATE campaign_segments SET enrolled_at = now()
WHERE organization_id = @organization_id::uuid AND campaign_id = @campaign_id::uuid;

-- name: CampaignSegmentsDue :many
-- Across organizations (SECURITY DEFINER function), the campaigns whose links were enrolled longest ago.
SELECT s.organization_id::uuid AS organization_id, s.campaign_id::uuid AS campaign_id
FROM campaign_segments_due(@enrolled_before::timestamptz, @row_limit::integer) AS s;

-- name: CampaignSegmentsCopy :exec
INSERT INTO campaign_segments (organization_id, campaign_id, segment_id, created_at)
SELECT s.organization_id, @new_campaign_id, s.segment_id, s.created_at FROM campaign_segments s
WHERE s.organization_id = @organization_id AND s.campaign_id = @campaign_id;
