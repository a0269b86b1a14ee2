-- +goose Up
-- Webhook delivery: the rate windows behind the per-endpoint rate limit and the per-organization per-event-type
-- dispatch throttle, the throttle reason named as the API names it, and the narrow cross-organization reads
-- the delivery worker needs (an OAuth app's delivery settings, stalled deliveries, an app's deliveries across
-- the organizations that authorized it).

-- One fixed one-minute window of one limit, split in shards: each event counts in one shard chosen at random,
-- and a limit's count is the sum over its shards. The counting dispatch transaction keeps its shard row locked
-- until it commits, so one row per limit would make every dispatch of a busy organization wait for the one
-- before; with shards only one in sixteen does. Rows older than a few windows are swept.
CREATE TABLE webhook_rate_windows (
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  -- The endpoint of the per-endpoint limit; the nil UUID for the organization's per-event-type throttle.
  endpoint_id uuid NOT NULL,
  -- The event type of the per-event-type throttle; '' for the per-endpoint limit, which counts every type.
  event_type text NOT NULL,
  window_start timestamptz NOT NULL,
  shard smallint NOT NULL CHECK (shard BETWEEN 0 AND 63),
  hits integer NOT NULL DEFAULT 1,
  PRIMARY KEY (organization_id, endpoint_id, event_type, window_start, shard)
);
CREATE INDEX webhook_rate_windows_start ON webhook_rate_windows (window_start);
ALTER TABLE webhook_rate_windows ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON webhook_rate_windows USING (organization_id = current_org()) WITH CHECK (organization_id = current_org());
GRANT SELECT, INSERT, UPDATE, DELETE ON webhook_rate_windows TO outflow_app;

-- The API calls the organization-wide throttle org_event_type_throttle; the table says the same.
ALTER TABLE webhook_throttle_drops DROP CONSTRAINT webhook_throttle_drops_reason_check;
ALTER TABLE webhook_throttle_drops ADD CONSTRAINT webhook_throttle_drops_reason_check
  CHECK (reason IN ('endpoint_rate_limit', 'org_event_type_throttle'));

-- The claim counts an endpoint's slow attempts in flight (a hanging receiver holds a bounded number of workers).
CREATE INDEX webhook_deliveries_in_flight ON webhook_deliveries (organization_id, endpoint_id) WHERE status = 'in_flight';
-- An app's managed endpoints across organizations (its delivery list).
CREATE INDEX webhook_endpoints_oauth_client_deliveries ON webhook_endpoints (oauth_client_id) WHERE oauth_client_id IS NOT NULL;

-- webhook_app returns what delivering to an OAuth app's managed endpoint needs from the app: its declared
-- events, allowed domains, scopes and sealed signing secret. oauth_clients rows belong to the developer's
-- organization, the endpoint to the authorizing one, so this is a narrow SECURITY DEFINER read: it answers
-- only for an app that has a managed endpoint in the organization the transaction is scoped to.
-- +goose StatementBegin
CREATE FUNCTION webhook_app(p_client_id uuid)
RETURNS TABLE (webhook_url text, webhook_events text[], allowed_webhook_domains text[], webhook_secret_sealed bytea, scopes bigint)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, public
AS $$
  SELECT c.webhook_url, c.webhook_events, c.allowed_webhook_domains, c.webhook_secret_sealed, c.scopes
  FROM oauth_clients c
  WHERE c.id = p_client_id
    AND EXISTS (SELECT 1 FROM webhook_endpoints e WHERE e.organization_id = current_org() AND e.oauth_client_id = p_client_id)
$$;
-- +goose StatementEnd

-- webhook_app_deliveries lists the deliveries of every managed endpoint of an app, across the organizations
-- that authorized it, newest first, for the app's developer: only when the app belongs to the organization the
-- transaction is scoped to. Keyset: (created_at, id) strictly before the given position.
-- +goose StatementBegin
CREATE FUNCTION webhook_app_deliveries(p_client_id uuid, p_status text, p_event_type text,
                                       p_before_created_at timestamptz, p_before_id uuid, p_limit integer)
RETURNS SETOF webhook_deliveries
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, public
AS $$
  SELECT d.*
  FROM oauth_clients c
  JOIN webhook_endpoints e ON e.oauth_client_id = c.id
  JOIN webhook_deliveries d ON d.organization_id = e.organization_id AND d.endpoint_id = e.id
  WHERE c.id = p_client_id AND c.organization_id = current_org()
    AND (p_status IS NULL OR d.status = p_status)
    AND (p_event_type IS NULL OR d.event_type = p_event_type)
    AND (p_before_created_at IS NULL OR (d.created_at, d.id) < (p_before_created_at, p_before_id))
  ORDER BY d.created_at DESC, d.id DESC
  LIMIT p_limit
$$;
-- +goose StatementEnd

-- webhook_app_events returns the events (organization, id pairs) behind a page of webhook_app_deliveries, for
-- the payloads: only events delivered to a managed endpoint of the app, and only for the app's developer.
-- +goose StatementBegin
CREATE FUNCTION webhook_app_events(p_client_id uuid, p_organization_ids uuid[], p_event_ids uuid[])
RETURNS SETOF event_outbox
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, public
AS $$
  SELECT o.*
  FROM unnest(p_organization_ids, p_event_ids) AS k (organization_id, id)
  JOIN event_outbox o ON o.organization_id = k.organization_id AND o.id = k.id
  WHERE EXISTS (SELECT 1 FROM oauth_clients c WHERE c.id = p_client_id AND c.organization_id = current_org())
    AND EXISTS (SELECT 1 FROM webhook_endpoints e
                JOIN webhook_deliveries d ON d.organization_id = e.organization_id AND d.endpoint_id = e.id
                WHERE e.organization_id = o.organization_id AND e.oauth_client_id = p_client_id AND d.event_id = o.id)
$$;
-- +goose StatementEnd

-- webhook_delivery_stalled finds, in every organization, deliveries whose attempt job went missing: due
-- (pending or failed) since before p_due_before, or in flight past their lease at p_now (the attempting
-- process died).
-- The periodic sweep enqueues an attempt for each; the attempt's claim makes a duplicate harmless.
-- +goose StatementBegin
CREATE FUNCTION webhook_delivery_stalled(p_now timestamptz, p_due_before timestamptz, p_limit integer)
RETURNS TABLE (organization_id uuid, id uuid)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, public
AS $$
  SELECT d.organization_id, d.id
  FROM webhook_deliveries d
  WHERE d.status IN ('pending', 'failed', 'in_flight') AND d.next_attempt_at < p_now
    AND ((d.status <> 'in_flight' AND d.next_attempt_at < p_due_before)
         OR (d.status = 'in_flight' AND d.lease_until < p_now))
  ORDER BY d.next_attempt_at
  LIMIT p_limit
$$;
-- +goose StatementEnd

-- webhook_limits_sweep removes rate windows that ended before p_windows_before and throttle-drop records
-- whose window started before p_drops_before, in every organization.
-- +goose StatementBegin
CREATE FUNCTION webhook_limits_sweep(p_windows_before timestamptz, p_drops_before timestamptz) RETURNS bigint
LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, public
AS $$
  WITH w AS (DELETE FROM webhook_rate_windows WHERE window_start < p_windows_before RETURNING 1),
       d AS (DELETE FROM webhook_throttle_drops WHERE window_start < p_drops_before RETURNING 1)
  SELECT (SELECT count(*) FROM w) + (SELECT count(*) FROM d)
$$;
-- +goose StatementEnd

REVOKE ALL ON FUNCTION webhook_app(uuid) FROM PUBLIC;
REVOKE ALL ON FUNCTION webhook_app_deliveries(uuid, text, text, timestamptz, uuid, integer) FROM PUBLIC;
REVOKE ALL ON FUNCTION webhook_app_events(uuid, uuid[], uuid[]) FROM PUBLIC;
REVOKE ALL ON FUNCTION webhook_delivery_stalled(timestamptz, timestamptz, integer) FROM PUBLIC;
REVOKE ALL ON FUNCTION webhook_limits_sweep(timestamptz, timestamptz) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION webhook_app(uuid) TO outflow_app;
GRANT EXECUTE ON FUNCTION webhook_app_deliveries(uuid, text, text, timestamptz, uuid, integer) TO outflow_app;
GRANT EXECUTE ON FUNCTION webhook_app_events(uuid, uuid[], uuid[]) TO outflow_app;
GRANT EXECUTE ON FUNCTION webhook_delivery_stalled(timestamptz, timestamptz, integer) TO outflow_app;
GRANT EXECUTE ON FUNCTION webhook_limits_sweep(timestamptz, timestamptz) TO outflow_app;
