-- name: WebhookEndpointListForDispatch :many
-- The endpoints an event of the organization may go to: enabled and verified (unverified endpoints get only
-- challenges). For an OAuth app's managed endpoint, the organization's live grant to the app comes along; the
-- consumer filters by event type, firehose opt-in and the grant's scopes.
SELECT e.id, e.event_types, e.oauth_client_id, e.secret_generation,
       (g.id IS NOT NULL)::boolean AS has_grant, COALESCE(g.scopes, 0)::bigint AS grant_scopes
FROM webhook_endpoints e
LEFT JOIN oauth_grants g
  ON g.organization_id = e.organization_id AND g.client_id = e.oauth_client_id AND g.revoked_at IS NULL
WHERE e.organization_id = @organization_id::uuid AND e.enabled AND e.verified_at IS NOT NULL
ORDER BY e.id;

-- name: WebhookAppGet :one
-- An OAuth app's delivery settings, for its managed endpoint in the transaction's organization (organization_id
-- is the scope webhook_app checks).
SELECT a.webhook_url::text AS webhook_url, a.webhook_events::text[] AS webhook_events,
       a.allowed_webhook_domains::text[] AS allowed_webhook_domains, a.webhook_secret_sealed::bytea AS webhook_secret_sealed,
       a.scopes::bigint AS scopes
FROM webhook_app(@client_id::uuid) AS a;

-- name: WebhookRateHit :many
-- Counts one event against the organization's per-event-type throttle (the nil endpoint's counter) and each
-- endpoint's limit, in one shard of the window, and returns each limit's count so far: this shard's (with the
-- event) plus the committed counts of the other shards. Rows are locked in one order (the organization's
-- counter first, then endpoints by id), so concurrent dispatches cannot deadlock.
WITH keys AS (
  SELECT 0 AS ord, '00000000-0000-0000-0000-000000000000'::uuid AS endpoint_id, @event_type::text AS event_type
  UNION ALL
  SELECT 1, e.id, '' FROM (SELECT DISTINCT unnest(@endpoint_ids::uuid[]) AS id) e
), hit AS (
  INSERT INTO webhook_rate_windows AS w (organization_id, endpoint_id, event_type, window_start, shard)
  SELECT @organization_id::uuid, k.endpoint_id, k.event_type, @window_start::timestamptz, @shard::smallint
  FROM keys k ORDER BY k.ord, k.endpoint_id
  ON CONFLICT (organization_id, endpoint_id, event_type, window_start, shard) DO UPDATE SET hits = w.hits + 1
  RETURNING w.endpoint_id, w.event_type, w.hits
)
SELECT hit.endpoint_id, (hit.hits + COALESCE((
  SELECT sum(o.hits) FROM webhook_rate_windows o
  WHERE o.organization_id = @organization_id::uuid AND o.endpoint_id = hit.endpoint_id AND o.event_type = hit.event_type
    AND o.window_start = @window_start::timestamptz AND o.shard <> @shard::smallint), 0))::integer AS hits
FROM hit;

-- name: WebhookThrottleDropRecord :exec
-- Counts one suppressed event in the drop record of its window (one row per window, limit and type).
INSERT INTO webhook_throttle_drops (organization_id, id, endpoint_id, event_type, reason, window_start, window_end, dropped, last_dropped_at)
VALUES (@organization_id::uuid, @id::uuid, sqlc.narg(endpoint_id)::uuid, @event_type::text, @reason::text,
        @window_start::timestamptz, @window_end::timestamptz, 1, @now::timestamptz)
ON CONFLICT (organization_id, COALESCE(endpoint_id, '00000000-0000-0000-0000-000000000000'::uuid), event_type, reason, window_start)
DO UPDATE SET dropped = webhook_throttle_drops.dropped + 1, last_dropped_at = EXCLUDED.last_dropped_at;

-- name: WebhookDeliveryCreate :one
-- One delivery per event and endpoint; a second dispatch of the same event creates nothing (no row returned).
INSERT INTO webhook_deliveries (organization_id, id, endpoint_id, event_id, event_type, status, next_attempt_at, secret_generation, max_attempts)
VALUES (@organization_id::uuid, @id::uuid, @endpoint_id::uuid, @event_id::uuid, @event_type::text, 'pending',
        @next_attempt_at::timestamptz, @secret_generation::integer, @max_attempts::integer)
ON CONFLICT (organization_id, endpoint_id, event_id) DO NOTHING
RETURNING id;

-- name: WebhookDeliveryClaim :one
-- Takes a delivery for one attempt and reads what the attempt sends and where (the endpoint's URL, state and
-- secrets, the event the body is built from; no event when the outbox no longer has it). The delivery must be
-- due (pending or failed) or in flight past its lease (its process died), and its endpoint must have fewer
-- than max_in_flight slow attempts (in flight under a live lease, started before slow_before): a hanging
-- receiver holds a bounded number of workers, while a fast one, whose attempts finish before they count as
-- slow, is never held back. The attempt is counted now: an attempt cut short by a crash may have reached the
-- receiver. Two workers racing for the same delivery: the row lock makes the second re-check and miss.
WITH claimed AS (
  UPDATE webhook_deliveries d
  SET status = 'in_flight', lease_until = @lease_until::timestamptz, attempt_count = d.attempt_count + 1,
      last_attempt_at = @now::timestamptz, updated_at = @now::timestamptz
  WHERE d.organization_id = @organization_id::uuid AND d.id = @id::uuid
    AND ((d.status IN ('pending', 'failed') AND d.next_attempt_at <= @now::timestamptz)
         OR (d.status = 'in_flight' AND d.lease_until < @now::timestamptz))
    AND d.attempt_count < d.max_attempts
    AND (SELECT count(*) FROM webhook_deliveries x
         WHERE x.organization_id = d.organization_id AND x.endpoint_id = d.endpoint_id
           AND x.status = 'in_flight' AND x.lease_until >= @now::timestamptz
           AND x.last_attempt_at < @slow_before::timestamptz) < @max_in_flight::integer
  RETURNING d.organization_id, d.endpoint_id, d.event_id, d.event_type, d.attempt_count, d.max_attempts,
            d.secret_generation, d.lease_until
)
SELECT c.endpoint_id, c.event_id, c.event_type, c.attempt_count, c.max_attempts, c.secret_generation, c.lease_until,
       e.url, e.enabled, (e.verified_at IS NOT NULL)::boolean AS verified, e.secret_sealed, e.previous_secret_sealed,
       e.secret_generation AS endpoint_secret_generation, e.oauth_client_id,
       o.data AS event_data, o.created_at AS event_created_at
FROM claimed c
JOIN webhook_endpoints e ON e.organization_id = c.organization_id AND e.id = c.endpoint_id
LEFT JOIN event_outbox o ON o.organization_id = c.organization_id AND o.id = c.event_id;

-- name: WebhookDeliveryState :one
-- Why a claim missed: the delivery's state as it is now.
SELECT status, next_attempt_at, lease_until, attempt_count, max_attempts FROM webhook_deliveries
WHERE organization_id = @organization_id::uuid AND id = @id::uuid;

-- name: WebhookDeliveryRecord :execrows
-- Settles an attempt, only while the claim still holds (same lease): a redelivery or a reclaim after the lease
-- ran out has started a newer attempt, whose outcome is the one to keep.
UPDATE webhook_deliveries
SET status = @status::text, lease_until = NULL, next_attempt_at = @next_attempt_at::timestamptz,
    response_status = sqlc.narg(response_status)::integer, response_body_excerpt = sqlc.narg(response_body_excerpt)::text,
    error_reason = sqlc.narg(error_reason)::text, updated_at = @now::timestamptz
WHERE organization_id = @organization_id::uuid AND id = @id::uuid AND status = 'in_flight'
  AND lease_until = @lease_until::timestamptz;

-- name: WebhookDeliveryRecordDelivered :exec
-- Settles a delivered attempt (while the claim still holds, as WebhookDeliveryRecord) and resets the
-- endpoint's failure health, in one statement. The endpoint row is left alone while it is healthy and marked a
-- success within the last second, so a busy endpoint's row is not rewritten by every delivery.
WITH r AS (
  UPDATE webhook_deliveries
  SET status = 'delivered', lease_until = NULL, next_attempt_at = @now::timestamptz,
      response_status = @response_status::integer, response_body_excerpt = @response_body_excerpt::text,
      error_reason = NULL, updated_at = @now::timestamptz
  WHERE organization_id = @organization_id::uuid AND id = @id::uuid AND status = 'in_flight'
    AND lease_until = @lease_until::timestamptz
  RETURNING endpoint_id
)
UPDATE webhook_endpoints e
SET last_success_at = @now::timestamptz, consecutive_failures = 0, failing_since = NULL
FROM r
WHERE e.organization_id = @organization_id::uuid AND e.id = r.endpoint_id
  AND NOT (e.consecutive_failures = 0 AND e.failing_since IS NULL AND e.last_success_at IS NOT NULL
           AND e.last_success_at > @fresh_after::timestamptz);

-- name: WebhookEndpointRecordFailure :one
-- A failed attempt extends the endpoint's unbroken run of failures.
UPDATE webhook_endpoints
SET last_failure_at = @now::timestamptz, last_failure_reason = @reason::text,
    consecutive_failures = consecutive_failures + 1, failing_since = COALESCE(failing_since, @now::timestamptz)
WHERE organization_id = @organization_id::uuid AND id = @id::uuid
RETURNING enabled, consecutive_failures, failing_since, url;

-- name: WebhookDeliveryAbandonInterrupted :execrows
-- A delivery whose last allowed attempt was cut short (its process died in flight) is abandoned.
UPDATE webhook_deliveries
SET status = 'abandoned', lease_until = NULL, error_reason = @reason::text, updated_at = @now::timestamptz
WHERE organization_id = @organization_id::uuid AND id = @id::uuid AND status = 'in_flight'
  AND lease_until < @now::timestamptz AND attempt_count >= max_attempts;

-- name: WebhookEndpointAutoDisable :execrows
UPDATE webhook_endpoints
SET enabled = false, disabled_reason = @reason::text, updated_at = @now::timestamptz
WHERE organization_id = @organization_id::uuid AND id = @id::uuid AND enabled;

-- name: WebhookOrgAdmins :many
-- Who hears that an endpoint was disabled: the organization's owners and admins.
SELECT user_id FROM memberships
WHERE organization_id = @organization_id::uuid AND role IN ('owner', 'admin')
ORDER BY user_id;

-- name: WebhookEndpointExists :one
SELECT id FROM webhook_endpoints WHERE organization_id = @organization_id::uuid AND id = @id::uuid;

-- name: WebhookDeliveryListByOrg :many
-- Newest first over webhook_deliveries_newest; the filters are few-valued, so they filter that index walk.
SELECT sqlc.embed(d), o.data AS event_data, o.created_at AS event_created_at
FROM webhook_deliveries d
LEFT JOIN event_outbox o ON o.organization_id = d.organization_id AND o.id = d.event_id
WHERE d.organization_id = @organization_id::uuid
  AND (sqlc.narg(status)::text IS NULL OR d.status = sqlc.narg(status)::text)
  AND (sqlc.narg(event_type)::text IS NULL OR d.event_type = sqlc.narg(event_type)::text)
  AND (sqlc.narg(before_created_at)::timestamptz IS NULL
       OR (d.created_at, d.id) < (sqlc.narg(before_created_at)::timestamptz, sqlc.narg(before_id)::uuid))
ORDER BY d.created_at DESC, d.id DESC
LIMIT @row_limit::integer;

-- name: WebhookDeliveryListByEndpoint :many
-- One endpoint's deliveries, newest first over webhook_deliveries_endpoint.
SELECT sqlc.embed(d), o.data AS event_data, o.created_at AS event_created_at
FROM webhook_deliveries d
LEFT JOIN event_outbox o ON o.organization_id = d.organization_id AND o.id = d.event_id
WHERE d.organization_id = @organization_id::uuid AND d.endpoint_id = @endpoint_id::uuid
  AND (sqlc.narg(status)::text IS NULL OR d.status = sqlc.narg(status)::text)
  AND (sqlc.narg(event_type)::text IS NULL OR d.event_type = sqlc.narg(event_type)::text)
  AND (sqlc.narg(before_created_at)::timestamptz IS NULL
       OR (d.created_at, d.id) < (sqlc.narg(before_created_at)::timestamptz, sqlc.narg(before_id)::uuid))
ORDER BY d.created_at DESC, d.id DESC
LIMIT @row_limit::integer;

-- name: WebhookDeliveryGet :one
SELECT sqlc.embed(d), o.data AS event_data, o.created_at AS event_created_at
FROM webhook_deliveries d
LEFT JOIN event_outbox o ON o.organization_id = d.organization_id AND o.id = d.event_id
WHERE d.organization_id = @organization_id::uuid AND d.id = @id::uuid;

-- name: WebhookDeliveryRedeliver :execrows
-- A new attempt lifecycle for the same event: pending and due now, no attempts yet, signed with the endpoint's
-- current secret. The previous lifecycle's last answer is cleared; an attempt still in flight loses its lease
-- and its outcome is not recorded.
UPDATE webhook_deliveries d
SET status = 'pending', attempt_count = 0, next_attempt_at = @now::timestamptz, lease_until = NULL,
    response_status = NULL, response_body_excerpt = NULL, error_reason = NULL, updated_at = @now::timestamptz,
    secret_generation = e.secret_generation
FROM webhook_endpoints e
WHERE d.organization_id = @organization_id::uuid AND d.id = @id::uuid
  AND e.organization_id = d.organization_id AND e.id = d.endpoint_id;

-- name: WebhookThrottleDropList :many
SELECT id, endpoint_id, event_type, reason, window_start, window_end, dropped, last_dropped_at
FROM webhook_throttle_drops
WHERE organization_id = @organization_id::uuid
  AND window_start >= @from_at::timestamptz AND window_start < @to_at::timestamptz
  AND (sqlc.narg(event_type)::text IS NULL OR event_type = sqlc.narg(event_type)::text)
  AND (sqlc.narg(reason)::text IS NULL OR reason = sqlc.narg(reason)::text)
  AND (sqlc.narg(before_window_start)::timestamptz IS NULL
       OR (window_start, id) < (sqlc.narg(before_window_start)::timestamptz, sqlc.narg(before_id)::uuid))
ORDER BY window_start DESC, id DESC
LIMIT @row_limit::integer;

-- name: WebhookThrottleDropTotal :one
SELECT COALESCE(sum(dropped), 0)::bigint AS total
FROM webhook_throttle_drops
WHERE organization_id = @organization_id::uuid
  AND window_start >= @from_at::timestamptz AND window_start < @to_at::timestamptz
  AND (sqlc.narg(event_type)::text IS NULL OR event_type = sqlc.narg(event_type)::text)
  AND (sqlc.narg(reason)::text IS NULL OR reason = sqlc.narg(reason)::text);

-- name: WebhookAppDeliveryList :many
-- An app's deliveries across the organizations that authorized it; webhook_app_deliveries answers only when the
-- app belongs to the transaction's organization (each row carries its own organization_id).
SELECT * FROM webhook_app_deliveries(@client_id::uuid, sqlc.narg(status)::text, sqlc.narg(event_type)::text,
                                     sqlc.narg(before_created_at)::timestamptz, sqlc.narg(before_id)::uuid, @row_limit::integer);

-- name: WebhookAppEventList :many
-- The events behind a page of an app's deliveries, by (organization_id, id).
SELECT * FROM webhook_app_events(@client_id::uuid, @organization_ids::uuid[], @event_ids::uuid[]);

-- name: WebhookDeliveryStalled :many
-- Deliveries of every organization whose attempt job went missing (see webhook_delivery_stalled).
SELECT s.organization_id::uuid AS organization_id, s.id::uuid AS id
FROM webhook_delivery_stalled(@now::timestamptz, @due_before::timestamptz, @row_limit::integer) AS s;

-- name: WebhookLimitsSweep :one
SELECT webhook_limits_sweep(@windows_before::timestamptz, @drops_before::timestamptz)::bigint AS removed;
