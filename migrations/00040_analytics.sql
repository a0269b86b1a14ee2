-- +goose Up
-- Analytics (part 3 "Analytics and audit"): rollups kept as events happen, so every report reads a few
-- hundred rows whatever the organization's size, and `outflow admin rollups rebuild` can recompute them from
-- the source rows (send_tasks, tracking_events, deliverability_events, inbox_messages).
--
-- Every rollup row carries the same counters (package internal/analytics/rollup names what each counts):
--   sent            sends that reached the provider (an EMAIL_FAILED undo takes one back), on the send's time
--   opens           sends opened at least once, by a person or a machine, on the time of their first open
--   machine_opens   of those, the sends opened only by machines so far (a person's open takes one back)
--   clicks          sends clicked at least once, on the time of their first click
--   machine_clicks  of those, the sends clicked only by machines so far
--   replies         sends answered (their first reply), on the reply's time
--   intent_*        classified inbound replies, one per message, machine replies included
--   bounces_hard, bounces_soft, complaints, unsubscribes   deliverability events, on their time
--   placement_inbox, placement_spam   seed placements observed on warmup traffic
-- kind is campaign (email steps), direct (direct sends and inbox replies) or warmup. A row whose counters all
-- return to 0 may stay; reports read sums.
CREATE TABLE analytics_org_days (
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  day date NOT NULL,
  kind text NOT NULL CHECK (kind IN ('campaign', 'direct', 'warmup')),
  sent bigint NOT NULL DEFAULT 0,
  opens bigint NOT NULL DEFAULT 0,
  machine_opens bigint NOT NULL DEFAULT 0,
  clicks bigint NOT NULL DEFAULT 0,
  machine_clicks bigint NOT NULL DEFAULT 0,
  replies bigint NOT NULL DEFAULT 0,
  intent_positive bigint NOT NULL DEFAULT 0,
  intent_negative bigint NOT NULL DEFAULT 0,
  intent_question bigint NOT NULL DEFAULT 0,
  intent_neutral bigint NOT NULL DEFAULT 0,
  intent_out_of_office bigint NOT NULL DEFAULT 0,
  intent_automated bigint NOT NULL DEFAULT 0,
  bounces_hard bigint NOT NULL DEFAULT 0,
  bounces_soft bigint NOT NULL DEFAULT 0,
  complaints bigint NOT NULL DEFAULT 0,
  unsubscribes bigint NOT NULL DEFAULT 0,
  placement_inbox bigint NOT NULL DEFAULT 0,
  placement_spam bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (organization_id, day, kind)
);

-- One row per campaign and day: top campaigns, comparisons, a campaign's days and totals. A deleted campaign's
-- rows are deleted with it (CampaignDelete; the organization's days keep its sends). The campaign tables have
-- no foreign key to campaigns on purpose: a key check would take a share lock on the campaign row in the middle
-- of every send's, open's and reply's transaction, which then deadlocks against the engine holding that row
-- while it waits for the rollup rows. Reports read them joined to campaigns, so a row written by a transaction
-- racing the delete is never shown.
CREATE TABLE analytics_campaign_days (LIKE analytics_org_days INCLUDING DEFAULTS INCLUDING CONSTRAINTS);
ALTER TABLE analytics_campaign_days DROP COLUMN kind, ADD COLUMN campaign_id uuid NOT NULL,
  ADD PRIMARY KEY (organization_id, campaign_id, day);

-- One row per campaign step, A/B variant (the nil uuid when the send had none) and day: the step table.
CREATE TABLE analytics_step_days (LIKE analytics_org_days INCLUDING DEFAULTS INCLUDING CONSTRAINTS);
ALTER TABLE analytics_step_days DROP COLUMN kind, ADD COLUMN campaign_id uuid NOT NULL, ADD COLUMN step_id uuid NOT NULL,
  ADD COLUMN variant_id uuid NOT NULL, ADD PRIMARY KEY (organization_id, campaign_id, step_id, variant_id, day);

-- One row per campaign and UTC hour: the hourly report.
CREATE TABLE analytics_campaign_hours (LIKE analytics_org_days INCLUDING DEFAULTS INCLUDING CONSTRAINTS);
ALTER TABLE analytics_campaign_hours DROP COLUMN kind, DROP COLUMN day, ADD COLUMN campaign_id uuid NOT NULL,
  ADD COLUMN hour timestamptz NOT NULL CHECK (date_trunc('hour', hour AT TIME ZONE 'UTC') = hour AT TIME ZONE 'UTC'),
  ADD PRIMARY KEY (organization_id, campaign_id, hour);

-- One row per sending mailbox, day and kind, with the mailbox's provider when it sent (kept if the mailbox
-- goes): by mailbox, by provider, account usage and the warmup report.
CREATE TABLE analytics_mailbox_days (LIKE analytics_org_days INCLUDING DEFAULTS INCLUDING CONSTRAINTS);
ALTER TABLE analytics_mailbox_days ADD COLUMN mailbox_id uuid NOT NULL, ADD COLUMN provider text NOT NULL DEFAULT ''
  CHECK (length(provider) <= 64), ADD PRIMARY KEY (organization_id, mailbox_id, day, kind),
  ADD FOREIGN KEY (organization_id) REFERENCES organizations (id) ON DELETE CASCADE;

-- Who engaged with a campaign, by country, mail client and device: one row per contact and key, so the
-- report counts distinct contacts. People only (a machine's open says nothing of the reader); a click counts
-- as an open. The empty key is unknown.
CREATE TABLE analytics_engagement (
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  campaign_id uuid NOT NULL,
  dimension text NOT NULL CHECK (dimension IN ('country', 'client', 'device')),
  key text NOT NULL CHECK (length(key) <= 64),
  contact_id uuid NOT NULL,
  clicked boolean NOT NULL DEFAULT false,
  PRIMARY KEY (organization_id, campaign_id, dimension, key, contact_id)
);

-- The reader's country (ISO 3166-1 alpha-2, '' unknown), resolved from the client address when the event
-- arrives, since only a keyed hash of the address is stored.
ALTER TABLE tracking_events ADD COLUMN country text NOT NULL DEFAULT '' CHECK (length(country) <= 2);

ALTER TABLE analytics_org_days ENABLE ROW LEVEL SECURITY;
ALTER TABLE analytics_campaign_days ENABLE ROW LEVEL SECURITY;
ALTER TABLE analytics_step_days ENABLE ROW LEVEL SECURITY;
ALTER TABLE analytics_campaign_hours ENABLE ROW LEVEL SECURITY;
ALTER TABLE analytics_mailbox_days ENABLE ROW LEVEL SECURITY;
ALTER TABLE analytics_engagement ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON analytics_org_days USING (organization_id = current_org()) WITH CHECK (organization_id = current_org());
CREATE POLICY tenant_isolation ON analytics_campaign_days USING (organization_id = current_org()) WITH CHECK (organization_id = current_org());
CREATE POLICY tenant_isolation ON analytics_step_days USING (organization_id = current_org()) WITH CHECK (organization_id = current_org());
CREATE POLICY tenant_isolation ON analytics_campaign_hours USING (organization_id = current_org()) WITH CHECK (organization_id = current_org());
CREATE POLICY tenant_isolation ON analytics_mailbox_days USING (organization_id = current_org()) WITH CHECK (organization_id = current_org());
CREATE POLICY tenant_isolation ON analytics_engagement USING (organization_id = current_org()) WITH CHECK (organization_id = current_org());

-- +goose Down
ALTER TABLE tracking_events DROP COLUMN country;
DROP TABLE analytics_engagement;
DROP TABLE analytics_mailbox_days;
DROP TABLE analytics_campaign_hours;
DROP TABLE analytics_step_days;
DROP TABLE analytics_campaign_days;
DROP TABLE analytics_org_days;
