-- name: UnsubscribeTask :one
-- The campaign send an unsubscribe token names: its recipient, its sender and what it belongs to.
SELECT t.id, t.to_email, t.from_email, t.from_name, t.campaign_id, t.contact_id, t.mailbox_id
FROM send_tasks t
WHERE t.organization_id = @organization_id AND t.id = @id AND t.kind = 'campaign' AND t.campaign_id IS NOT NULL;

-- name: UnsubscribeTaskLock :one
-- UnsubscribeTask, locked: requests with one token (a provider's one-click POST sent twice, a double
-- click) take turns, so the second finds the first's unsubscribe recorded. The send has been sent, so
-- nothing else holds it for long.
SELECT t.id, t.to_email, t.from_email, t.from_name, t.campaign_id, t.contact_id, t.mailbox_id
FROM send_tasks t
WHERE t.organization_id = @organization_id AND t.id = @id AND t.kind = 'campaign' AND t.campaign_id IS NOT NULL
FOR NO KEY UPDATE;

-- name: UnsubscribeContact :one
-- Whether the contact an unsubscribe applies to is subscribed.
SELECT subscribed FROM contacts WHERE organization_id = @organization_id AND id = @id;

-- name: UnsubscribeRecorded :one
-- Whether the unsubscribe of this send is recorded already (read through the campaign's events index).
SELECT EXISTS (SELECT 1 FROM deliverability_events
  WHERE organization_id = @organization_id AND campaign_id = @campaign_id AND event_type = 'unsubscribe'
    AND task_id = @task_id);

-- name: UnsubscribeEventInsert :exec
-- Records an unsubscribe: matched to its send as matched_by says (token: the signed token it came with;
-- address: the newest send to the sender of a request that answers none), with the inbound message that
-- asked for it, if any.
INSERT INTO deliverability_events (organization_id, id, event_type, source, at, recipient_email, contact_id,
  campaign_id, task_id, mailbox_id, matched_by, reason, inbound_message_id)
VALUES (@organization_id, @id, 'unsubscribe', @source, @at, @recipient_email, sqlc.narg(contact_id),
  sqlc.narg(campaign_id), sqlc.narg(task_id), sqlc.narg(mailbox_id), @matched_by, @reason,
  sqlc.narg(inbound_message_id));

-- name: UnsubscribeLatestSend :one
-- The campaign send an unsubscribe request that answers no send is taken for: the newest campaign send to a
-- contact with the sender's address (contacts_email, then send_tasks_contact answer it; duplicates of an
-- import included), one from the mailbox the request reached first: a mail client sends the mailto of our
-- List-Unsubscribe header to the sending address.
SELECT t.id, t.campaign_id FROM contacts c
JOIN send_tasks t ON t.organization_id = c.organization_id AND t.contact_id = c.id
WHERE c.organization_id = @organization_id AND c.email = lower(@email::text)
  AND t.kind = 'campaign' AND t.campaign_id IS NOT NULL AND t.status IN ('sent', 'ambiguous')
ORDER BY t.mailbox_id = @mailbox_id::uuid DESC, t.created_at DESC, t.id DESC
LIMIT 1;

-- name: UnsubscribeLeadCampaigns :many
-- The campaigns the contact is a lead of, in one order for every caller (their locks are taken in it).
SELECT campaign_id FROM campaign_leads
WHERE organization_id = @organization_id AND contact_id = @contact_id
ORDER BY campaign_id;
