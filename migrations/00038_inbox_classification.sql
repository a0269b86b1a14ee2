-- +goose Up
-- Reply understanding: each inbound message's verdict (intent, confidence, the evidence that decided it, an
-- unsubscribe request, an out-of-office return date, the engine that judged it) and the campaign send it
-- answers (task, campaign, contact), so reads show why and analytics can count intents. A lead paused by a
-- negative reply (auto_pause_on_negative) records that source.
ALTER TABLE inbox_messages
  ADD COLUMN intent text NOT NULL DEFAULT '' CHECK (intent IN ('', 'positive', 'negative', 'question', 'neutral', 'out_of_office', 'automated')),
  ADD COLUMN intent_confidence real NOT NULL DEFAULT 0 CHECK (intent_confidence BETWEEN 0 AND 1),
  ADD COLUMN intent_evidence jsonb NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(intent_evidence) = 'array'),
  ADD COLUMN unsubscribe_request boolean NOT NULL DEFAULT false,
  ADD COLUMN return_date date,
  ADD COLUMN classifier text NOT NULL DEFAULT '' CHECK (length(classifier) <= 100),
  ADD COLUMN classified_at timestamptz,
  ADD COLUMN send_task_id uuid,
  ADD COLUMN campaign_id uuid,
  ADD COLUMN contact_id uuid;
CREATE INDEX inbox_messages_campaign_intent ON inbox_messages (organization_id, campaign_id, intent) WHERE campaign_id IS NOT NULL;

ALTER TABLE campaign_leads DROP CONSTRAINT campaign_leads_hold_source_check,
  ADD CONSTRAINT campaign_leads_hold_source_check CHECK (hold_source IN ('manual', 'out_of_office', 'negative_reply'));

-- +goose Down
ALTER TABLE campaign_leads DROP CONSTRAINT campaign_leads_hold_source_check,
  ADD CONSTRAINT campaign_leads_hold_source_check CHECK (hold_source IN ('manual', 'out_of_office'));
DROP INDEX inbox_messages_campaign_intent;
ALTER TABLE inbox_messages DROP COLUMN contact_id, DROP COLUMN campaign_id, DROP COLUMN send_task_id,
  DROP COLUMN classified_at, DROP COLUMN classifier, DROP COLUMN return_date, DROP COLUMN unsubscribe_request,
  DROP COLUMN intent_evidence, DROP COLUMN intent_confidence, DROP COLUMN intent;
