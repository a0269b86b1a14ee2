-- +goose Up
-- Webhooks: the organization's endpoints (dashboard endpoints and the managed endpoint an OAuth app gets in
-- every organization that authorizes it), one delivery row per (event, endpoint) that retries update in
-- place, and the record of events the throttles suppressed.

CREATE TABLE webhook_endpoints (
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  id uuid NOT NULL,
  url text NOT NULL CHECK (length(url) BETWEEN 1 AND 2048),
  description text NOT NULL DEFAULT '' CHECK (length(description) <= 500),
  -- Subscribed types; empty = every non-firehose event.
  event_types text[] NOT NULL DEFAULT '{}' CHECK (cardinality(event_types) <= 100),
  enabled boolean NOT NULL DEFAULT true,
  -- The whsec_ signing secret, sealed with the keyring. secret_generation counts rotations: a delivery
  -- remembers the generation it was created under and keeps signing with that secret (kept here as the
  -- previous one) until it settles.
  secret_sealed bytea NOT NULL,
  secret_generation integer NOT NULL DEFAULT 1,
  previous_secret_sealed bytea,
  verified_at timestamptz,
  ownership_confirmed boolean NOT NULL DEFAULT false,
  -- Set for the managed endpoint of an OAuth app (its URL is the app's webhook_url and its secret the app's).
  oauth_client_id uuid REFERENCES oauth_clients (id) ON DELETE CASCADE,
  last_success_at timestamptz,
  last_failure_at timestamptz,
  last_failure_reason text,
  consecutive_failures integer NOT NULL DEFAULT 0,
  -- Start of the current unbroken run of failures; the auto-disable window is measured from it.
  failing_since timestamptz,
  disabled_reason text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (organization_id, id)
);
CREATE INDEX webhook_endpoints_newest ON webhook_endpoints (organization_id, created_at DESC, id DESC);
CREATE UNIQUE INDEX webhook_endpoints_app ON webhook_endpoints (organization_id, oauth_client_id) WHERE oauth_client_id IS NOT NULL;

CREATE TABLE webhook_deliveries (
  organization_id uuid NOT NULL,
  id uuid NOT NULL,
  endpoint_id uuid NOT NULL,
  event_id uuid NOT NULL,
  event_type text NOT NULL,
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'in_flight', 'delivered', 'failed', 'abandoned')),
  attempt_count integer NOT NULL DEFAULT 0,
  max_attempts integer NOT NULL DEFAULT 8,
  next_attempt_at timestamptz NOT NULL DEFAULT now(),
  last_attempt_at timestamptz,
  -- While in_flight: the attempt's lease; a delivery whose lease ran out (its process died) is retried.
  lease_until timestamptz,
  secret_generation integer NOT NULL DEFAULT 1,
  response_status integer,
  response_body_excerpt text CHECK (length(response_body_excerpt) <= 1024),
  error_reason text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (organization_id, id),
  FOREIGN KEY (organization_id, endpoint_id) REFERENCES webhook_endpoints (organization_id, id) ON DELETE CASCADE
);
-- One delivery per event and endpoint: a retried dispatch cannot deliver an event twice.
CREATE UNIQUE INDEX webhook_deliveries_event ON webhook_deliveries (organization_id, endpoint_id, event_id);
CREATE INDEX webhook_deliveries_newest ON webhook_deliveries (organization_id, created_at DESC, id DESC);
CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (organization_id, endpoint_id, created_at DESC, id DESC);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status IN ('pending', 'failed', 'in_flight');

-- Events the per-endpoint rate limit or the per-organization per-event-type dispatch throttle suppressed,
-- counted per throttle window.
CREATE TABLE webhook_throttle_drops (
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  id uuid NOT NULL,
  -- NULL for the organization-wide throttle.
  endpoint_id uuid,
  event_type text NOT NULL,
  reason text NOT NULL CHECK (reason IN ('endpoint_rate_limit', 'event_type_throttle')),
  window_start timestamptz NOT NULL,
  window_end timestamptz NOT NULL,
  dropped integer NOT NULL DEFAULT 0,
  last_dropped_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (organization_id, id)
);
CREATE UNIQUE INDEX webhook_throttle_drops_window ON webhook_throttle_drops
  (organization_id, COALESCE(endpoint_id, '00000000-0000-0000-0000-000000000000'::uuid), event_type, reason, window_start);
CREATE INDEX webhook_throttle_drops_newest ON webhook_throttle_drops (organization_id, window_start DESC);

ALTER TABLE webhook_endpoints ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON webhook_endpoints USING (organization_id = current_org()) WITH CHECK (organization_id = current_org());
ALTER TABLE webhook_deliveries ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON webhook_deliveries USING (organization_id = current_org()) WITH CHECK (organization_id = current_org());
ALTER TABLE webhook_throttle_drops ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON webhook_throttle_drops USING (organization_id = current_org()) WITH CHECK (organization_id = current_org());
GRANT SELECT, INSERT, UPDATE, DELETE ON webhook_endpoints, webhook_deliveries, webhook_throttle_drops TO outflow_app;
