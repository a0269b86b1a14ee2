-- +goose Up
-- Per-consumer delivery of events (internal/eventing/events/doc.go). Each consumer of the outbox (webhooks,
-- realtime; later automations and integrations) acknowledges each event in the transaction that records its
-- own work, so the work and the acknowledgement commit together or not at all, and a retried dispatch runs
-- only the consumers that have no acknowledgement yet. The event is marked dispatched once every consumer has
-- one. Acknowledgements go with their event: the retention prune and an organization's deletion cascade here.
CREATE TABLE event_consumer_acks (
  organization_id uuid NOT NULL,
  event_id uuid NOT NULL,
  -- The consumer's stable name (events.Consumer.Name).
  consumer text NOT NULL CHECK (consumer ~ '^[a-z][a-z0-9_]{0,62}$'),
  acknowledged_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (organization_id, event_id, consumer),
  FOREIGN KEY (organization_id, event_id) REFERENCES event_outbox (organization_id, id) ON DELETE CASCADE
);
ALTER TABLE event_consumer_acks ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON event_consumer_acks USING (organization_id = current_org()) WITH CHECK (organization_id = current_org());

-- +goose Down
DROP TABLE event_consumer_acks;
