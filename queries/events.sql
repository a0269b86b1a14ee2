-- name: EventInsert :exec
INSERT INTO event_outbox (organization_id, id, event_type, data)
VALUES (@organization_id::uuid, @id::uuid, @event_type::text, @data::jsonb);

-- name: EventInsertMany :exec
-- Several events of one type at once (a batch of tracked opens raises one per send).
INSERT INTO event_outbox (organization_id, id, event_type, data)
SELECT @organization_id::uuid, e.id, @event_type::text, e.data
FROM (SELECT unnest(@ids::uuid[]) AS id, unnest(@data::jsonb[]) AS data) AS e;

-- name: EventConsumerClaim :one
-- One consumer's claim on an event, the first statement of the transaction that runs the consumer. It records
-- the consumer's acknowledgement (claimed) unless the event is dispatched or gone or a committed run already
-- acknowledged for this consumer (a concurrent run's uncommitted acknowledgement is waited for), and reads the
-- event with the consumers that had acknowledged it before this statement. With mark_if_complete (the
-- caller's last consumer) it also marks the event dispatched when the claim is made and every consumer in
-- others has acknowledged: the mark then commits, or rolls back, with the consumer's work. The claim, the
-- read and the mark are one statement, so a consumer's transaction costs one statement besides its own.
WITH ack AS (
  INSERT INTO event_consumer_acks (organization_id, event_id, consumer)
  SELECT o.organization_id, o.id, @consumer::text FROM event_outbox o
  WHERE o.organization_id = @organization_id::uuid AND o.id = @id::uuid AND o.dispatched_at IS NULL
  ON CONFLICT (organization_id, event_id, consumer) DO NOTHING
  RETURNING consumer
), mark AS (
  UPDATE event_outbox o SET dispatched_at = now()
  WHERE o.organization_id = @organization_id::uuid AND o.id = @id::uuid AND @mark_if_complete::boolean
    AND EXISTS (SELECT FROM ack)
    AND NOT EXISTS (SELECT FROM unnest(@others::text[]) AS c (name)
                    WHERE NOT EXISTS (SELECT FROM event_consumer_acks a
                                      WHERE a.organization_id = o.organization_id AND a.event_id = o.id
                                        AND a.consumer = c.name))
  RETURNING o.id
)
SELECT o.id, o.organization_id, o.event_type, o.data, o.created_at, o.dispatched_at,
       array(SELECT a.consumer FROM event_consumer_acks a
             WHERE a.organization_id = o.organization_id AND a.event_id = o.id)::text[] AS acknowledged,
       EXISTS (SELECT FROM ack) AS claimed
FROM event_outbox o
WHERE o.organization_id = @organization_id::uuid AND o.id = @id::uuid;

-- name: EventMarkDispatched :exec
-- Marks an event dispatched when every consumer named has acknowledged it, for a run that finds every
-- acknowledgement made (an earlier run was cut before its mark) or has no consumer; otherwise, or when it
-- already is, changes nothing.
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
