-- +goose Up
-- The distinct people a campaign's opens and clicks come from (part 3: the campaign summary's unique_opens,
-- machine_opens, unique_clicks and machine_clicks count contacts). One row per campaign and contact that
-- opened or clicked, kept by the tracking feed with the rollups (package internal/analytics/rollup) and
-- recomputed by `outflow admin rollups rebuild`. Its counters count the contact's sends in that campaign, as
-- the rollups count sends:
--   opens           sends opened at least once, by a person or a machine
--   machine_opens   of those, the sends opened only by machines so far
--   clicks          sends clicked at least once
--   machine_clicks  of those, the sends clicked only by machines so far
-- so a contact opened when opens > 0 and a person opened when opens > machine_opens. Like the other campaign
-- rollups it has no foreign key to the campaign (the campaign's deletion removes its rows) nor to the contact
-- (the campaign's history keeps a deleted contact's engagement, as the day rows keep its counts).
CREATE TABLE analytics_campaign_contacts (
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  campaign_id uuid NOT NULL,
  contact_id uuid NOT NULL,
  opens integer NOT NULL DEFAULT 0,
  machine_opens integer NOT NULL DEFAULT 0,
  clicks integer NOT NULL DEFAULT 0,
  machine_clicks integer NOT NULL DEFAULT 0,
  PRIMARY KEY (organization_id, campaign_id, contact_id)
);

ALTER TABLE analytics_campaign_contacts ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON analytics_campaign_contacts USING (organization_id = current_org()) WITH CHECK (organization_id = current_org());

-- +goose Down
DROP TABLE analytics_campaign_contacts;
