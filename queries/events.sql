-- name: EventInsert :exec
INSERT INTO event_outbox (organization_id, id, event_type, data)
VALUES (@organization_id::uuid, @id::uuid, @event_type::text, @data::jsonb);

-- name: EventInsertMany :exec
-- Several events of one type at once (a batch of tracked opens raises one per send).
INSERT INTO event_outbox (organization_id, id, event_type, data)
SELECT @organization_id::uuid, e.id, @event_type::text, e.data
FROM (SELECT unnest(@ids::uuid[]) AS id, unnest(@data::jsonb[]) AS data) AS e;

-- name: EventGetForDispatch :one
SELECT * FROM event_outbox
WHERE organization_id = @organization_id::uuid AND id = @id::uuid
FOR UPDATE;

-- name: EventMarkDispatched :exec
UPDATE event_outbox SET dispatched_at = now()
WHERE organization_id = @organization_id::uuid AND id = @id::uuid;

-- name: EventOutboxPrune :one
-- Deletes up to row_limit events created before the cutoff, in every organization (event_outbox_prune, a
-- definer function: the narrow cross-organization path of the retention job).
SELECT event_outbox_prune(@before::timestamptz, @row_limit::integer)::bigint AS removed;
