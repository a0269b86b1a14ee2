-- name: EventNotify :exec
-- Publishes one realtime notice on the gateway's channel. Inside a transaction Postgres delivers it on commit
-- (and never for a rollback), so listeners hear only of events whose dispatch committed.
SELECT pg_notify(@channel::text, @payload::text);

-- name: EventGetDispatched :one
-- The realtime listener's fetch of an event whose notice was too large for NOTIFY to carry the data.
SELECT id, organization_id, event_type, data, created_at FROM event_outbox
WHERE organization_id = @organization_id::uuid AND id = @id::uuid AND dispatched_at IS NOT NULL;

-- name: EventListDispatchedAfter :many
-- An organization's dispatched events after a cursor id, oldest first, for a realtime client's resume. Event
-- ids are uuid v7, so the primary key (organization_id, id) serves the range in time order and stops at the
-- limit; events not dispatched yet are left to the live path, which delivers them when they are.
SELECT id, organization_id, event_type, data, created_at FROM event_outbox
WHERE organization_id = @organization_id::uuid AND id > @after::uuid AND dispatched_at IS NOT NULL
ORDER BY id
LIMIT @max_rows::int;

-- name: EventListDispatchedSince :many
-- An organization's events dispatched at or after since, for the realtime listener's catch-up after its
-- connection dropped. The id floor (a uuid v7 of an earlier time) bounds the primary-key range the filter
-- on dispatched_at has to read.
SELECT id, organization_id, event_type, data, created_at FROM event_outbox
WHERE organization_id = @organization_id::uuid AND id > @after::uuid AND dispatched_at >= @since::timestamptz
ORDER BY id
LIMIT @max_rows::int;
