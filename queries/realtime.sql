-- name: EventNotify :exec
-- Publishes one realtime notice on the gateway's channel. Inside a transaction Postgres delivers it on commit
-- (and never for a rollback), so listeners hear only of events whose realtime acknowledgement committed.
SELECT pg_notify(@channel::text, @payload::text);

-- name: EventGetAnnounced :one
-- The realtime listener's fetch of an event whose notice was too large for NOTIFY to carry the data: an event
-- the realtime consumer (@consumer) has acknowledged, which is when its notice went out.
SELECT o.id, o.organization_id, o.event_type, o.data, o.created_at FROM event_outbox o
WHERE o.organization_id = @organization_id::uuid AND o.id = @id::uuid
  AND EXISTS (SELECT FROM event_consumer_acks a
              WHERE a.organization_id = o.organization_id AND a.event_id = o.id AND a.consumer = @consumer::text);

-- name: EventListAnnouncedAfter :many
-- An organization's events announced after a cursor id (acknowledged by the realtime consumer, @consumer,
-- whose notice commits with its acknowledgement), oldest first, for a realtime client's resume. Event ids are
-- uuid v7, so the acknowledgements' primary key (organization_id, event_id, consumer) serves the range in
-- time order and stops at the limit; events not announced yet are left to the live path, which delivers them
-- when they are.
SELECT o.id, o.organization_id, o.event_type, o.data, o.created_at
FROM event_consumer_acks a
JOIN event_outbox o ON o.organization_id = a.organization_id AND o.id = a.event_id
WHERE a.organization_id = @organization_id::uuid AND a.event_id > @after::uuid AND a.consumer = @consumer::text
ORDER BY a.event_id
LIMIT @max_rows::int;

-- name: EventListAnnouncedSince :many
-- An organization's events announced (acknowledged by @consumer) at or after since, for the realtime
-- listener's catch-up after its connection dropped. The id floor (a uuid v7 of an earlier time) bounds the
-- primary-key range the filter on acknowledged_at has to read.
SELECT o.id, o.organization_id, o.event_type, o.data, o.created_at
FROM event_consumer_acks a
JOIN event_outbox o ON o.organization_id = a.organization_id AND o.id = a.event_id
WHERE a.organization_id = @organization_id::uuid AND a.event_id > @after::uuid AND a.consumer = @consumer::text
  AND a.acknowledged_at >= @since::timestamptz
ORDER BY a.event_id
LIMIT @max_rows::int;
