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

-- name: CampaignSendersRetain :exec
-- Drops the senders not among keep_ids (a replaced pool); the kept ones keep their last_sent_at.
DELETE FROM campaign_mailboxes
WHERE organization_id = @organization_id AND campaign_id = @campaign_id AND mailbox_id <> ALL(@keep_ids::uuid[]);

-- name: CampaignSenderInsert :exec
-- Adds a sender or, for one already in the pool, sets its weight, flag and place (created_at orders the pool).
INSERT INTO campaign_mailboxes (organization_id, campaign_id, mailbox_id, weight, enabled, created_at)
VALUES (@organization_id, @campaign_id, @mailbox_id, @weight, @enabled, @created_at)
ON CONFLICT (organization_id, campaign_id, mailbox_id)
DO UPDATE SET weight = excluded.weight, enabled = excluded.enabled, created_at = excluded.created_at;

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

-- name: CampaignStepUpdate :exec
UPDATE campaign_steps SET position = @position, name = @name, kind = @kind, subject = @subject,
  body_plain = @body_plain, body_html = @body_html, body_sync = @body_sync, body_code = @body_code,
  wait_after = @wait_after, thread_reply = @thread_reply, conditions = sqlc.narg(conditions),
  action = sqlc.narg(action), on_timeout = @on_timeout, updated_at = now()
WHERE organization_id = @organization_id AND campaign_id = @campaign_id AND id = @id;

-- name: CampaignStepDelete :exec
-- Step-scoped variants and attachments go with the step (foreign keys).
DELETE FROM campaign_steps WHERE organization_id = @organization_id AND campaign_id = @campaign_id AND id = @id;

-- name: CampaignStepsReposition :exec
-- Writes a sequence's order after an insert, move or delete: ids[i] goes to position i. The unique position index
-- is checked at commit, so the rows may pass through equal positions on the way.
UPDATE campaign_steps s SET position = o.ord::integer - 1, updated_at = now()
FROM unnest(@ids::uuid[]) WITH ORDINALITY AS o(id, ord)
WHERE s.organization_id = @organization_id AND s.campaign_id = @campaign_id AND s.id = o.id
  AND s.position <> o.ord - 1;

-- name: CampaignLeadsRemapSteps :exec
-- Moves the leads at step position from_positions[i] to to_positions[i] (each lead matches one pair, by its
-- position before the statement), so a reordered sequence carries each lead on after the step it was last sent.
UPDATE campaign_leads l SET step_position = m.to_position, updated_at = now()
FROM (SELECT unnest(@from_positions::integer[]) AS from_position, unnest(@to_positions::integer[]) AS to_position) m
WHERE l.organization_id = @organization_id AND l.campaign_id = @campaign_id AND l.step_position = m.from_position;

-- name: CampaignTouch :exec
-- Marks a campaign changed when one of its parts (steps, variants, senders, attachments) did.
UPDATE campaigns SET updated_at = now() WHERE organization_id = @organization_id AND id = @id;

-- name: CampaignPoolSize :one
-- How many active mailboxes a campaign can send from: its enabled explicit senders and the mailboxes carrying one
-- of its tags (the explicit strategy never widens past these).
SELECT count(*) FROM mailboxes m
WHERE m.organization_id = @organization_id AND m.status = 'active' AND (
  m.tags && @tag_ids::uuid[]
  OR EXISTS (SELECT 1 FROM campaign_mailboxes s WHERE s.organization_id = m.organization_id
    AND s.campaign_id = @campaign_id AND s.mailbox_id = m.id AND s.enabled));
