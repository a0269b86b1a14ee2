-- What composing a campaign message reads: the contact it is personalised for, the mailbox it goes out from and
-- the files it carries (internal/campaigns/compose).

-- name: ComposeContact :one
SELECT id, email, first_name, last_name, company, phone, custom_fields FROM contacts
WHERE organization_id = @organization_id AND id = @id;

-- name: ComposeContactByEmail :one
-- The contact of an address: the primary one when an import created duplicates.
SELECT id, email, first_name, last_name, company, phone, custom_fields FROM contacts
WHERE organization_id = @organization_id AND email = @email
ORDER BY duplicate_seq LIMIT 1;

-- name: ComposeFirstLead :one
-- The campaign's first lead by enrolment: who a test email is rendered for when its recipient is no contact.
SELECT c.id, c.email, c.first_name, c.last_name, c.company, c.phone, c.custom_fields
FROM campaign_leads l JOIN contacts c ON c.organization_id = l.organization_id AND c.id = l.contact_id
WHERE l.organization_id = @organization_id AND l.campaign_id = @campaign_id
ORDER BY l.created_at, l.contact_id LIMIT 1;

-- name: ComposeFirstSender :one
-- The active mailbox a campaign sends from first: an enabled explicit sender in pool order, else a mailbox
-- carrying one of tag_ids, else, when fallback is set (the tags strategy with no tags, or no campaign at all)
-- and the campaign has no explicit sender, the organization's first mailbox. only_ids, when set, limits the
-- choice to a mailbox-scoped key's mailboxes.
SELECT m.* FROM mailboxes m
LEFT JOIN campaign_mailboxes cm ON cm.organization_id = m.organization_id AND cm.campaign_id = @campaign_id
  AND cm.mailbox_id = m.id AND cm.enabled
WHERE m.organization_id = @organization_id AND m.status = 'active'
  AND (sqlc.narg(only_ids)::uuid[] IS NULL OR m.id = ANY(sqlc.narg(only_ids)::uuid[]))
  AND (cm.mailbox_id IS NOT NULL OR m.tags && @tag_ids::uuid[]
    OR (@fallback::boolean AND NOT EXISTS (SELECT 1 FROM campaign_mailboxes x
      WHERE x.organization_id = @organization_id AND x.campaign_id = @campaign_id)))
ORDER BY cm.mailbox_id IS NULL, cm.created_at, m.created_at, m.id
LIMIT 1;

-- name: ComposeStepFiles :many
-- The files a step sends: the campaign's own (step_id NULL) and the step's, in the order they were added.
SELECT id, filename, mime_type, size FROM campaign_attachments
WHERE organization_id = @organization_id AND campaign_id = @campaign_id
  AND (step_id IS NULL OR step_id = sqlc.narg(step_id))
ORDER BY created_at, id;
