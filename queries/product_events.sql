-- name: ProductEventContact :one
-- The contact an event names by id, with its address (to check an address sent beside the id).
SELECT id, email FROM contacts
WHERE organization_id = @organization_id::uuid AND id = @id::uuid;

-- name: ProductEventInsert :one
-- Records one event. A key the organization already used records nothing (no row): the event it recorded is
-- the answer (ProductEventByKey). A concurrent insert under the same key waits for the first to commit.
INSERT INTO product_events (organization_id, id, contact_id, name, data, occurred_at, received_at, idempotency_key)
VALUES (@organization_id::uuid, @id::uuid, @contact_id::uuid, @name::text, @data::jsonb, @occurred_at::timestamptz,
        @received_at::timestamptz, @idempotency_key::text)
ON CONFLICT (organization_id, idempotency_key) DO NOTHING
RETURNING *;

-- name: ProductEventByKey :one
SELECT * FROM product_events
WHERE organization_id = @organization_id::uuid AND idempotency_key = @idempotency_key::text;

-- name: ProductEventGet :one
SELECT * FROM product_events
WHERE organization_id = @organization_id::uuid AND id = @id::uuid;

-- name: ProductEventList :many
-- Newest received first. Each filter applies when set: the event's name, the contact's id, the contact's
-- address (every contact holding it), received at or after since. The page starts after (received_at, id).
SELECT * FROM product_events e
WHERE e.organization_id = @organization_id::uuid
  AND (sqlc.narg(name)::text IS NULL OR e.name = sqlc.narg(name)::text)
  AND (sqlc.narg(contact_id)::uuid IS NULL OR e.contact_id = sqlc.narg(contact_id)::uuid)
  AND (sqlc.narg(email)::text IS NULL OR e.contact_id IN (
    SELECT c.id FROM contacts c WHERE c.organization_id = @organization_id::uuid AND c.email = sqlc.narg(email)::text))
  AND (sqlc.narg(since)::timestamptz IS NULL OR e.received_at >= sqlc.narg(since)::timestamptz)
  AND (sqlc.narg(before_received_at)::timestamptz IS NULL
       OR (e.received_at, e.id) < (sqlc.narg(before_received_at)::timestamptz, sqlc.narg(before_id)::uuid))
ORDER BY e.received_at DESC, e.id DESC
LIMIT @row_limit::int;

-- name: ProductEventResumedRuns :many
-- The wait_for_event step runs an event resumed, for the answer to a replayed event.
SELECT id, campaign_id, step_id, contact_id FROM campaign_step_runs
WHERE organization_id = @organization_id::uuid AND contact_id = @contact_id::uuid AND kind = 'wait_for_event'
  AND resumed_by_event = @event_id::uuid
ORDER BY campaign_id, step_id;
