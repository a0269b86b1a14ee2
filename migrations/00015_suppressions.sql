-- +goose Up
-- Suppressions: addresses and domains the organization never sends to, whatever a campaign, an agent policy or
-- a person asks. Values are stored lowercased; one row per (kind, value); an entry past expires_at no longer
-- suppresses and is replaced when the value is suppressed again.
CREATE EXTENSION IF NOT EXISTS pg_trgm;

CREATE TABLE suppressions (
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  id uuid NOT NULL,
  kind text NOT NULL CHECK (kind IN ('email', 'domain')),
  value text NOT NULL CHECK (value = lower(value) AND length(value) BETWEEN 1 AND 320),
  reason text NOT NULL DEFAULT '' CHECK (length(reason) <= 500),
  source text NOT NULL CHECK (source IN ('bounce', 'complaint', 'unsubscribe', 'manual', 'import')),
  campaign_id uuid,
  expires_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (organization_id, id)
);
CREATE UNIQUE INDEX suppressions_value ON suppressions (organization_id, kind, value);
CREATE INDEX suppressions_newest ON suppressions (organization_id, created_at DESC, id DESC);
-- Substring search (q) over hundreds of thousands of entries without a scan.
CREATE INDEX suppressions_value_trgm ON suppressions USING gin (value gin_trgm_ops);

ALTER TABLE suppressions ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON suppressions USING (organization_id = current_org()) WITH CHECK (organization_id = current_org());
GRANT SELECT, INSERT, UPDATE, DELETE ON suppressions TO outflow_app;
