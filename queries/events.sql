-- name: EventInsert :exec
INSERT INTO event_outbox (organization_id, id, event_type, data)
VALUES (@organization_id::uuid, @id::uuid, @event_type::text, @data::jsonb);

-- name: EventInsertMany :exec
-- Several events of one type at once (a batch of tracked opens raises one per send).
INSERT INTO event_outbox (organization_id, id, event_type, data)
SELECT @organization_id::uuid, e.id, @event_type::text, e.data
FROM (SELECT unnest(@ids::uuid[]) AS id, unnest(@data::jsonb[]) AS data) AS e;

-- name: EventGetForDispatch :one
-- An event with the names of the consumers that have acknowledged it, for one run of its dispatch. No lock:
-- each consumer's acknowledgement (EventConsumerAck) is what keeps two runs from both running it.
SELECT o.id, o.organization_id, o.event_type, o.data, o.created_at, o.dispatched_at,
       array(SELECT a.consumer FROM event_consumer_acks a
             WHERE a.organization_id = o.organization_id AND a.event_id = o.id)::text[] AS acknowledged
FROM event_outbox o
WHERE o.organization_id = @organization_id::uuid AND o.id = @id::uuid;

-- name: EventConsumerAck :execrows
-- Records a consumer's acknowledgement of an event in the transaction of the consumer's work, before the
-- work: one row means this transaction holds the acknowledgement (a concurrent run of the same event waits
-- here until it commits or rolls back); none means a committed run already acknowledged, and the consumer
-- must not run again.
INSERT INTO event_consumer_acks (organization_id, event_id, consumer)
VALUES (@organization_id::uuid, @event_id::uuid, @consumer::text)
ON CONFLICT (organization_id, event_id, consumer) DO NOTHING;

-- name: EventMarkDispatched :exec
-- Marks an event dispatched when every consumer of the dispatcher has acknowledged it (an acknowledgement
-- made in the calling transaction counts); otherwise, or when it already is, changes nothing.
UPDATE event_outbox o SET dispatched_at = now()
WHERE o.organization_id = @organization_id::uuid AND o.id = @id::uuid AND o.dispatched_at IS NULL
  AND NOT EXISTS (
    SELECT FROM unnest(@consumers::text[]) AS c (name)
    WHERE NOT EXISTS (SELECT FROM event_consumer_acks a
                      WHERE a.organization_id = o.organization_id AND a.event_id = o.id AND a.consumer = c.name));

-- name: EventOutboxPrune :one
-- Deletes up to row_limit events created before the cutoff, in every organization (event_outbox_prune, a
-- definer function: the narrow cross-organization path of the retention job).
SELECT event_outbox_prune(@before::timestamptz, @row_limit::integer)::bigint AS removed;
