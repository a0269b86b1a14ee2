-- name: CampaignEstimateSegmentsKnown :many
-- Which of the ids are segments of the organization: a foreign id is as unknown as a made-up one.
SELECT id FROM segments WHERE organization_id = @organization_id::uuid AND id = ANY(@ids::uuid[]);

-- name: CampaignEstimateTagsKnown :many
-- Which of the ids are mailbox tags (labels of kind tag) of the organization.
SELECT id FROM labels WHERE organization_id = @organization_id::uuid AND kind = 'tag' AND id = ANY(@ids::uuid[]);

-- name: CampaignEstimateMailboxes :many
-- The mailboxes a campaign would send from: active and in active rotation (not held in reserve, not resting),
-- carrying any of the tags when tags are given (every such mailbox otherwise), and only those in only_ids for
-- a mailbox-scoped key. At most the organization's mailbox allowance of rows; the handler drops the ones
-- whose domain failed authentication past the grace period (mailbox.AuthBlocked).
SELECT * FROM mailboxes
WHERE organization_id = @organization_id::uuid AND status = 'active' AND rotation_state = 'active'
  AND (sqlc.narg(tags)::uuid[] IS NULL OR tags && sqlc.narg(tags)::uuid[])
  AND (sqlc.narg(only_ids)::uuid[] IS NULL OR id = ANY(sqlc.narg(only_ids)::uuid[]))
ORDER BY id;

-- name: CampaignEstimateSentToday :many
-- What each mailbox's counter holds toward campaign_limit for the day given beside it (the mailbox's own
-- local day, as the send pipeline charges it); a mailbox with no row has sent nothing that day.
SELECT d.mailbox_id, d.capped FROM mailbox_send_days d
WHERE d.organization_id = @organization_id::uuid
  AND (d.mailbox_id, d.day) IN (SELECT unnest(@mailbox_ids::uuid[]), unnest(@days::date[]));
