-- Campaign steps, variants and senders: the sequence a campaign sends and who sends it.

-- name: CampaignStepInsert :exec
INSERT INTO campaign_steps (organization_id, campaign_id, id, position, name, kind, subject, body_plain, body_html,
  body_sync, body_code, wait_after, thread_reply, conditions, action, on_timeout)
VALUES (@organization_id, @campaign_id, @id, @position, @name, @kind, @subject, @body_plain, @body_html,
  @body_sync, @body_code, @wait_after, @thread_reply, sqlc.narg(conditions), sqlc.narg(action), @on_timeout);

-- name: CampaignStepsOf :many
SELECT * FROM campaign_steps WHERE organization_id = @organization_id AND campaign_id = @campaign_id
ORDER BY position;

-- name: CampaignSendersOf :many
SELECT * FROM campaign_mailboxes WHERE organization_id = @organization_id AND campaign_id = @campaign_id
ORDER BY created_at, mailbox_id;

-- name: CampaignSendersClear :exec
DELETE FROM campaign_mailboxes WHERE organization_id = @organization_id AND campaign_id = @campaign_id;

-- name: CampaignSenderInsert :exec
INSERT INTO campaign_mailboxes (organization_id, campaign_id, mailbox_id, weight, enabled, created_at)
VALUES (@organization_id, @campaign_id, @mailbox_id, @weight, @enabled, @created_at);

-- name: MailboxesExisting :many
-- The ids among mailbox_ids that are mailboxes of the organization.
SELECT id FROM mailboxes WHERE organization_id = @organization_id AND id = ANY(@mailbox_ids::uuid[]);

-- name: CampaignPoolCap :one
-- The highest daily cap among the mailboxes a campaign would send from: its explicit senders plus the mailboxes
-- carrying its tags; with the tags strategy and neither, every active mailbox of the organization.
SELECT coalesce(max(m.campaign_limit), 0)::integer FROM mailboxes m
WHERE m.organization_id = @organization_id AND (
  m.id = ANY(@mailbox_ids::uuid[])
  OR m.tags && @tag_ids::uuid[]
  OR (@fallback::boolean AND m.status = 'active'));
