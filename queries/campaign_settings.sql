-- Campaign settings written beside the main update: the advanced blocks (PATCH /campaigns/:id/advanced and
-- create's advanced_overrides) and the outcome of a tracking-domain check. Every statement names
-- organization_id; RLS is the second wall.

-- name: CampaignAdvancedSet :exec
UPDATE campaigns SET advanced = @advanced, advanced_updated_at = @at, updated_at = @at
WHERE organization_id = @organization_id AND id = @id;

-- name: CampaignTrackingVerifiedSet :exec
-- Stores when the campaign's tracking domain was verified (NULL: it is not), only while the domain checked is
-- still the campaign's, so an edit made during the DNS lookup is never marked verified.
UPDATE campaigns SET tracking_domain_verified_at = sqlc.narg(verified_at)
WHERE organization_id = @organization_id AND id = @id AND tracking_domain = @tracking_domain;
