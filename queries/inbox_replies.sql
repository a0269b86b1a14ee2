-- name: InboxMessageVerdictSet :exec
-- Stores the reply classifier's verdict on an inbound message and the campaign send it answers (none: NULL).
UPDATE inbox_messages SET intent = @intent, intent_confidence = @confidence, intent_evidence = @evidence::jsonb,
  unsubscribe_request = @unsubscribe, return_date = sqlc.narg(return_date)::date, classifier = @classifier,
  classified_at = @classified_at, send_task_id = sqlc.narg(send_task_id), campaign_id = sqlc.narg(campaign_id),
  contact_id = sqlc.narg(contact_id)
WHERE organization_id = @organization_id AND id = @id;

-- name: InboxConversationJoined :one
-- Whether the organization took part in the conversation a message answers: one of the Message-IDs it names
-- is a send of the organization's or a message one of its mailboxes wrote.
SELECT EXISTS (SELECT 1 FROM send_tasks s WHERE s.organization_id = @organization_id AND s.message_id = ANY(@message_ids::text[]))
  OR EXISTS (SELECT 1 FROM inbox_messages m WHERE m.organization_id = @organization_id AND m.outbound
    AND m.message_id = ANY(@message_ids::text[]));
