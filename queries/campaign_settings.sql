-- Campaign settings written beside the main update: the advanced blocks (PATCH /campaigns/:id/advanced and
-- create's advanced_overrides). Every statement names organization_id; RLS is the second wall.

-- name: CampaignAdvancedSet :exec
UPDATE campaigns SET advanced = @advanced, advanced_updated_at = @at, updated_at = @at
WHERE organization_id = @organization_id AND id = @id;
