-- name: WebhookEndpointCreate :one
INSERT INTO webhook_endpoints (organization_id, id, url, description, event_types, enabled, secret_sealed)
VALUES (@organization_id::uuid, @id::uuid, @url::text, @description::text, @event_types::text[], @enabled::boolean,
        @secret_sealed::bytea)
RETURNING *;

-- name: WebhookEndpointList :many
-- The whole list in one answer (the API does not page it), newest first along webhook_endpoints_newest.
SELECT * FROM webhook_endpoints
WHERE organization_id = @organization_id::uuid
ORDER BY created_at DESC, id DESC;

-- name: WebhookEndpointGet :one
SELECT * FROM webhook_endpoints WHERE organization_id = @organization_id::uuid AND id = @id::uuid;

-- name: WebhookEndpointGetForUpdate :one
SELECT * FROM webhook_endpoints WHERE organization_id = @organization_id::uuid AND id = @id::uuid FOR UPDATE;

-- name: WebhookEndpointUpdate :one
-- Full replace of the settings a person edits; rearm (a changed URL host) makes the endpoint unverified again.
-- The CASEs read the row as it was before this update.
UPDATE webhook_endpoints SET
  url = @url::text,
  description = @description::text,
  event_types = @event_types::text[],
  enabled = @enabled::boolean,
  disabled_reason = CASE WHEN @enabled::boolean THEN NULL ELSE disabled_reason END,
  -- Enabling a disabled endpoint starts its failure count afresh: the auto-disable window must run again in
  -- full before it is disabled again.
  consecutive_failures = CASE WHEN @enabled::boolean AND NOT enabled THEN 0 ELSE consecutive_failures END,
  failing_since = CASE WHEN @enabled::boolean AND NOT enabled THEN NULL ELSE failing_since END,
  verified_at = CASE WHEN @rearm::boolean THEN NULL ELSE verified_at END,
  ownership_confirmed = ownership_confirmed AND NOT @rearm::boolean,
  updated_at = now()
WHERE organization_id = @organization_id::uuid AND id = @id::uuid
RETURNING *;

-- name: WebhookEndpointDelete :execrows
-- Deliveries go with the endpoint through the foreign key's cascade.
DELETE FROM webhook_endpoints WHERE organization_id = @organization_id::uuid AND id = @id::uuid;

-- name: WebhookEndpointRotateSecret :one
-- The current secret becomes the previous one and the generation moves on: deliveries created under the old
-- generation keep signing with the old secret until they settle.
UPDATE webhook_endpoints SET
  previous_secret_sealed = secret_sealed,
  secret_sealed = @secret_sealed::bytea,
  secret_generation = secret_generation + 1,
  updated_at = now()
WHERE organization_id = @organization_id::uuid AND id = @id::uuid AND oauth_client_id IS NULL
RETURNING secret_generation;

-- name: WebhookEndpointMarkVerified :one
-- A successful challenge: verified_at keeps the first success; ownership is confirmed when the answer echoed
-- the challenge. Only while the URL is still the one challenged (a concurrent host change re-armed it).
UPDATE webhook_endpoints SET
  verified_at = COALESCE(verified_at, @now::timestamptz),
  ownership_confirmed = ownership_confirmed OR @echoed::boolean,
  updated_at = @now::timestamptz
WHERE organization_id = @organization_id::uuid AND id = @id::uuid AND url = @url::text
RETURNING *;

-- name: WebhookEndpointCreateManaged :one
-- An OAuth app's managed endpoint in the organization that authorizes it: the app's URL, no secret of its own
-- (it signs with the app's), unverified until the app echoes a challenge.
INSERT INTO webhook_endpoints (organization_id, id, url, description, secret_sealed, oauth_client_id)
VALUES (@organization_id::uuid, @id::uuid, @url::text, @description::text, '\x'::bytea, @oauth_client_id::uuid)
RETURNING *;

-- name: WebhookEndpointDeleteManaged :many
-- The app's grant in the organization ended: its managed endpoint (and its deliveries) go.
DELETE FROM webhook_endpoints
WHERE organization_id = @organization_id::uuid AND oauth_client_id = @oauth_client_id::uuid
RETURNING id;

-- name: WebhookEndpointGetManaged :one
SELECT * FROM webhook_endpoints
WHERE organization_id = @organization_id::uuid AND oauth_client_id = @oauth_client_id::uuid;

-- name: OAuthAppWebhookEndpointList :many
-- Across organizations through the narrow SECURITY DEFINER function, which answers only for an app of the
-- organization the transaction is scoped to.
SELECT * FROM oauth_app_webhook_endpoints(@client_id::uuid);

-- name: OAuthAppWebhookEndpointSync :one
-- After an app's webhook_url changed, in the app's organization (which the function checks).
SELECT oauth_app_webhook_endpoints_sync(@client_id::uuid, @rearm::boolean)::bigint AS touched;
