-- +goose Up
-- Read paths of the analytics reports over a big organization (BenchmarkAnalyticsReports).
--
-- The dashboard's top campaigns sum one period of analytics_campaign_days (tens of thousands of rows over 90
-- days for hundreds of campaigns). Its primary key leads with campaign_id, so a period of every campaign was a
-- scan of the organization's whole table and its heap; this index reads just the period's days, and covers the
-- columns summed so the read stays in the index (an index-only scan). The price: a counter update of a row is
-- no longer a HOT update (the counters are in this index), so each one also writes an entry here.
CREATE INDEX analytics_campaign_days_period ON analytics_campaign_days (organization_id, day)
  INCLUDE (campaign_id, sent, opens, machine_opens, clicks, machine_clicks, replies);

-- A campaign report counts its engagement rows (thousands per dimension) by key and clicked. The primary key
-- carries clicked as a non-key column, so that count reads the index alone instead of one heap visit per row;
-- its key, and so uniqueness and the upsert's conflict target, are unchanged. A row turning clicked is no longer
-- a HOT update (a row turns clicked once at most).
CREATE UNIQUE INDEX analytics_engagement_pkey_covering ON analytics_engagement
  (organization_id, campaign_id, dimension, key, contact_id) INCLUDE (clicked);
ALTER TABLE analytics_engagement DROP CONSTRAINT analytics_engagement_pkey,
  ADD CONSTRAINT analytics_engagement_pkey PRIMARY KEY USING INDEX analytics_engagement_pkey_covering;

-- Every mailbox status (the dashboard's account health, the accounts list) reads the warmup rows of the
-- organization's mailboxes. The primary key orders a mailbox's rows by day before kind, so that read walked
-- every campaign and direct day of each mailbox to find its warmup ones; this index holds the warmup rows only.
CREATE INDEX analytics_mailbox_days_warmup ON analytics_mailbox_days (organization_id, mailbox_id, day)
  WHERE kind = 'warmup';

-- +goose Down
DROP INDEX analytics_mailbox_days_warmup;
CREATE UNIQUE INDEX analytics_engagement_pkey_plain ON analytics_engagement
  (organization_id, campaign_id, dimension, key, contact_id);
ALTER TABLE analytics_engagement DROP CONSTRAINT analytics_engagement_pkey,
  ADD CONSTRAINT analytics_engagement_pkey PRIMARY KEY USING INDEX analytics_engagement_pkey_plain;
DROP INDEX analytics_campaign_days_period;
