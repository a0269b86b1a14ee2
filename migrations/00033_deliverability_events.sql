-- +goose Up
-- What came back from a recipient's side that is not an open or a click: bounces (a DSN, a recipient the
-- pipeline's SMTP peer rejected, a provider's report), complaints (an ARF feedback report), unsubscribes
-- (one-click, the link's form, a reply, an action) and the events providers and integrations post to
-- POST /v1/deliverability/events. One row per event, with the evidence that decided it: for a bounce its type
-- (hard or soft), the enhanced status code, the SMTP code, the diagnostic text and the reason class; how the
-- event was matched to its send (matched_by: message_id, original_headers, return_path, pipeline, token,
-- ingest). contact_id, campaign_id, task_id and mailbox_id are plain references, not foreign keys: the record
-- of a bounce or a complaint outlives the send, the campaign and the contact it was about (rates and the
-- contact's timeline read it; a deleted contact's rows go with the organization).
CREATE TABLE deliverability_events (
  organization_id uuid NOT NULL,
  id uuid NOT NULL,
  event_type text NOT NULL CHECK (event_type IN ('bounce', 'complaint', 'unsubscribe', 'open', 'click', 'reply')),
  source text NOT NULL CHECK (source IN ('dsn', 'arf', 'pipeline', 'ingest', 'one_click', 'link', 'reply', 'action')),
  at timestamptz NOT NULL,
  recipient_email text NOT NULL CHECK (length(recipient_email) BETWEEN 1 AND 320),
  contact_id uuid,
  campaign_id uuid,
  task_id uuid,
  mailbox_id uuid,
  provider text NOT NULL DEFAULT '' CHECK (length(provider) <= 200),
  reason text NOT NULL DEFAULT '' CHECK (length(reason) <= 1000),
  bounce_type text CHECK (bounce_type IN ('hard', 'soft')),
  status_code text NOT NULL DEFAULT '' CHECK (length(status_code) <= 16),
  smtp_code integer CHECK (smtp_code BETWEEN 200 AND 599),
  diagnostic text NOT NULL DEFAULT '' CHECK (length(diagnostic) <= 2000),
  feedback_type text NOT NULL DEFAULT '' CHECK (length(feedback_type) <= 64),
  matched_by text NOT NULL DEFAULT '' CHECK (length(matched_by) <= 32),
  inbound_message_id uuid,
  metadata jsonb NOT NULL DEFAULT '{}'::jsonb CHECK (jsonb_typeof(metadata) = 'object' AND pg_column_size(metadata) <= 16384),
  idempotency_key text CHECK (length(idempotency_key) BETWEEN 1 AND 255),
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (organization_id, id),
  CHECK ((event_type = 'bounce') = (bounce_type IS NOT NULL))
);
-- An ingested event posted twice with one key is recorded once.
CREATE UNIQUE INDEX deliverability_events_idempotency ON deliverability_events (organization_id, idempotency_key)
  WHERE idempotency_key IS NOT NULL;
-- The contact's timeline reads its events newest first.
CREATE INDEX deliverability_events_contact ON deliverability_events (organization_id, contact_id, at) WHERE contact_id IS NOT NULL;
-- A campaign's rolling bounce and complaint rates count its recent events.
CREATE INDEX deliverability_events_campaign ON deliverability_events (organization_id, campaign_id, event_type, at) WHERE campaign_id IS NOT NULL;

ALTER TABLE deliverability_events ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON deliverability_events USING (organization_id = current_org()) WITH CHECK (organization_id = current_org());
GRANT SELECT, INSERT, UPDATE, DELETE ON deliverability_events TO outflow_app;

-- +goose Down
DROP TABLE deliverability_events;
