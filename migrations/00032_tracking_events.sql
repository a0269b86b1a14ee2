-- +goose Up
-- Every open and click the tracking endpoints receive, written in batches by the tracking event writer
-- (internal/campaigns/tracking). A row keeps the evidence classification reads: the user agent (truncated),
-- a keyed hash of the client address (never the address itself), what the network lists said about it
-- (source_network, scanner, scanner_probable, privacy_proxy) and, for a click, the link and its target.
-- verdict and rule stay NULL until the classification step judges the event (human or machine, and the
-- rule that decided). task_id is not a foreign key: an event of a send deleted since is still kept, and one
-- missing task must not fail the batch it arrived in.
CREATE TABLE tracking_events (
  organization_id uuid NOT NULL,
  id uuid NOT NULL,
  task_id uuid NOT NULL,
  kind text NOT NULL CHECK (kind IN ('open', 'click')),
  at timestamptz NOT NULL,
  user_agent text NOT NULL DEFAULT '' CHECK (length(user_agent) <= 512),
  ip_hash text NOT NULL DEFAULT '' CHECK (length(ip_hash) <= 128),
  source_network text NOT NULL DEFAULT '' CHECK (length(source_network) <= 200),
  scanner text NOT NULL DEFAULT '' CHECK (length(scanner) <= 200),
  scanner_probable boolean NOT NULL DEFAULT false,
  privacy_proxy boolean NOT NULL DEFAULT false,
  link_index integer CHECK (link_index BETWEEN 0 AND 65535),
  url text CHECK (length(url) <= 2048),
  ticket_issued boolean NOT NULL DEFAULT false,
  verdict text CHECK (verdict IN ('human', 'machine')),
  rule text CHECK (length(rule) <= 64),
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (organization_id, id),
  CHECK ((kind = 'click') = (link_index IS NOT NULL AND url IS NOT NULL)),
  CHECK ((verdict IS NULL) = (rule IS NULL))
);
-- Classification and the timeline read one send's events in time order.
CREATE INDEX tracking_events_task ON tracking_events (organization_id, task_id, at);

ALTER TABLE tracking_events ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON tracking_events USING (organization_id = current_org()) WITH CHECK (organization_id = current_org());
GRANT SELECT, INSERT, UPDATE, DELETE ON tracking_events TO outflow_app;

-- +goose Down
DROP TABLE tracking_events;
