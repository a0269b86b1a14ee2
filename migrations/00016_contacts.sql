-- +goose Up
-- Contacts and the audience around them: the label registries (campaign folders, mailbox tags, contact
-- categories), contacts with their custom fields and verification verdicts, category links, segments with
-- manual pins, notes and the activity log. Campaigns, their leads, deals and send tasks get the columns the
-- contact screens read; the campaigns, CRM and mailbox work extends those tables.
--
-- Sized for a million contacts per organization: every list is a keyset scan of a btree that starts with
-- organization_id, text search and custom-field filters go through trigram indexes, and the org-wide counts the search's first page shows are kept current by
-- statement-level triggers instead of being counted per request.
CREATE TABLE labels (
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  id uuid NOT NULL,
  kind text NOT NULL CHECK (kind IN ('folder', 'tag', 'category')),
  title text NOT NULL CHECK (length(title) BETWEEN 1 AND 100),
  color text NOT NULL DEFAULT '' CHECK (length(color) <= 32),
  position integer NOT NULL DEFAULT 0 CHECK (position >= 0),
  -- Contacts carrying a category (kept by the contact_categories triggers; 0 for folders and tags).
  contact_count bigint NOT NULL DEFAULT 0,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (organization_id, id)
);
CREATE INDEX labels_order ON labels (organization_id, kind, position, id);

-- No foreign key to organizations: its per-row check locks the organization row once per inserted contact,
-- which costs an import of 50,000 rows about 0.3 s. organizations_delete_contacts below removes an
-- organization's contacts instead, and RLS pins every insert to the caller's organization.
CREATE TABLE contacts (
  organization_id uuid NOT NULL,
  -- A UUIDv7 whose timestamp is created_at (to the millisecond): ordering by id is ordering by creation, so the
  -- default sort pages through the primary key.
  id uuid NOT NULL,
  email text NOT NULL CHECK (email = lower(email) AND length(email) BETWEEN 3 AND 254),
  -- 0 for the one primary contact of an address; a second contact for the same address (an import with dedup
  -- create_duplicate) takes the next value of contact_duplicate_seq. Matching by address sees only the primary.
  duplicate_seq bigint NOT NULL DEFAULT 0,
  first_name text NOT NULL DEFAULT '' CHECK (length(first_name) <= 255),
  last_name text NOT NULL DEFAULT '' CHECK (length(last_name) <= 255),
  company text NOT NULL DEFAULT '' CHECK (length(company) <= 255),
  phone text NOT NULL DEFAULT '' CHECK (length(phone) <= 64),
  custom_fields jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(custom_fields) = 'object'),
  subscribed boolean NOT NULL DEFAULT true,
  source text NOT NULL DEFAULT 'api' CHECK (source IN ('manual', 'api', 'import', 'form', 'automation')),
  -- Campaigns the contact is a lead of (kept by the campaign_leads triggers).
  campaign_count integer NOT NULL DEFAULT 0 CHECK (campaign_count >= 0),
  -- When a send task to the contact was last delivered; NULL = never contacted.
  last_contacted_at timestamptz,
  verification_status text NOT NULL DEFAULT 'unknown' CHECK (verification_status IN ('valid', 'risky', 'invalid', 'unknown')),
  verification_sub_status text NOT NULL DEFAULT '' CHECK (verification_sub_status IN
    ('', 'catch_all', 'disposable', 'role', 'spamtrap', 'mailbox_full', 'no_mx', 'syntax', 'undisclosed')),
  verification_source text NOT NULL DEFAULT '' CHECK (verification_source IN ('', 'probe', 'provider', 'imported', 'manual')),
  verification_provider text NOT NULL DEFAULT '' CHECK (length(verification_provider) <= 64),
  verification_reason text NOT NULL DEFAULT '' CHECK (length(verification_reason) <= 500),
  verification_checked_at timestamptz,
  verification_confidence smallint NOT NULL DEFAULT 0 CHECK (verification_confidence BETWEEN 0 AND 100),
  is_catch_all boolean NOT NULL DEFAULT false,
  esp_provider text NOT NULL DEFAULT '' CHECK (length(esp_provider) <= 64),
  esp_resolved_at timestamptz,
  -- Whether the row is in the search and sort indexes below (all partial on it). Imports write rows with
  -- false, which skips those indexes (a trigram index costs about 1 s per 50,000 rows), and a River job sets it
  -- in batches right after; searches read the few rows still false through contacts_unindexed, so they stay
  -- exact meanwhile.
  search_ready boolean NOT NULL DEFAULT true,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (organization_id, id)
);
CREATE SEQUENCE contact_duplicate_seq;
CREATE UNIQUE INDEX contacts_email ON contacts (organization_id, email, duplicate_seq);
CREATE INDEX contacts_unindexed ON contacts (organization_id, id) WHERE NOT search_ready;
CREATE INDEX contacts_updated ON contacts (organization_id, updated_at, id) WHERE search_ready;
CREATE INDEX contacts_first_name ON contacts (organization_id, first_name, id) WHERE search_ready;
CREATE INDEX contacts_last_name ON contacts (organization_id, last_name, id) WHERE search_ready;
CREATE INDEX contacts_campaign_count ON contacts (organization_id, campaign_count, id) WHERE search_ready;
-- The trigram indexes leave organization_id out: as a btree_gin column it would add a posting list of every
-- contact of the organization to each lookup (40 ms at a million contacts); the trigrams alone are selective
-- and the heap recheck applies the organization.
-- What the text search (query) matches: name, email and company, lowercased. An expression rather than a
-- stored column, so a row outside the index (search_ready false) never computes it on insert.
CREATE INDEX contacts_search ON contacts USING gin ((lower(first_name || ' ' || last_name || ' ' || email || ' ' || company)) gin_trgm_ops) WHERE search_ready;
-- Custom-field filters: a trigram pre-filter for the value over the fields' JSON text, rechecked exactly
-- against the one key.
CREATE INDEX contacts_custom_fields ON contacts USING gin (lower(custom_fields::text) gin_trgm_ops) WHERE search_ready;

-- Text and custom-field candidates. LIKE is not leakproof, so under row-level security Postgres may not use
-- it as an index condition (it would see rows before the policy does) and a search would scan every contact
-- of the organization. These functions run as the table owner, which the policy does not bind, and apply the
-- policy's own condition (current_org()) themselves: they return up to max_rows ids of the caller's
-- organization's contacts whose text matches pattern, found through the trigram indexes (and
-- contacts_unindexed for rows an import has not indexed yet). EXECUTE plans each call with the pattern's
-- value. Callers recheck the pattern under the policy, and fall back to a plain scan when a pattern matches
-- more rows than they asked for (then the scan is the cheaper plan anyway).
-- +goose StatementBegin
CREATE FUNCTION contacts_text_candidates(pattern text, max_rows integer) RETURNS SETOF uuid
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = public AS $$
BEGIN
  RETURN QUERY EXECUTE
    'SELECT id FROM (
       SELECT id FROM contacts WHERE organization_id = current_org() AND search_ready
         AND lower(first_name || '' '' || last_name || '' '' || email || '' '' || company) LIKE $1
       UNION ALL
       SELECT id FROM contacts WHERE organization_id = current_org() AND NOT search_ready
         AND lower(first_name || '' '' || last_name || '' '' || email || '' '' || company) LIKE $1) m
     LIMIT $2'
    USING pattern, max_rows;
END $$;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE FUNCTION contacts_custom_candidates(pattern text, max_rows integer) RETURNS SETOF uuid
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = public AS $$
BEGIN
  RETURN QUERY EXECUTE
    'SELECT id FROM (
       SELECT id FROM contacts WHERE organization_id = current_org() AND search_ready
         AND lower(custom_fields::text) LIKE $1
       UNION ALL
       SELECT id FROM contacts WHERE organization_id = current_org() AND NOT search_ready
         AND lower(custom_fields::text) LIKE $1) m
     LIMIT $2'
    USING pattern, max_rows;
END $$;
-- +goose StatementEnd
REVOKE ALL ON FUNCTION contacts_text_candidates(text, integer), contacts_custom_candidates(text, integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION contacts_text_candidates(text, integer), contacts_custom_candidates(text, integer) TO outflow_app;

-- +goose StatementBegin
CREATE FUNCTION organizations_delete_contacts() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public AS $$
BEGIN
  DELETE FROM contacts WHERE organization_id IN (SELECT id FROM old_rows);
  RETURN NULL;
END $$;
-- +goose StatementEnd
CREATE TRIGGER organizations_delete_contacts AFTER DELETE ON organizations REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION organizations_delete_contacts();

-- Org-wide counts the first search page and the verification overview show, kept by triggers.
CREATE TABLE contact_stats (
  organization_id uuid PRIMARY KEY REFERENCES organizations (id) ON DELETE CASCADE,
  total bigint NOT NULL DEFAULT 0,
  subscribed bigint NOT NULL DEFAULT 0,
  in_campaign bigint NOT NULL DEFAULT 0,
  not_contacted bigint NOT NULL DEFAULT 0,
  valid bigint NOT NULL DEFAULT 0,
  risky bigint NOT NULL DEFAULT 0,
  invalid bigint NOT NULL DEFAULT 0,
  unknown bigint NOT NULL DEFAULT 0,
  -- Never checked by any verifier.
  pending bigint NOT NULL DEFAULT 0
);

-- +goose StatementBegin
CREATE FUNCTION contact_stats_apply() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public AS $$
BEGIN
  IF TG_OP IN ('UPDATE', 'DELETE') THEN
    UPDATE contact_stats s SET
      total = s.total - d.total, subscribed = s.subscribed - d.subscribed, in_campaign = s.in_campaign - d.in_campaign,
      not_contacted = s.not_contacted - d.not_contacted, valid = s.valid - d.valid, risky = s.risky - d.risky,
      invalid = s.invalid - d.invalid, unknown = s.unknown - d.unknown, pending = s.pending - d.pending
    FROM (
      SELECT organization_id, count(*) AS total, count(*) FILTER (WHERE subscribed) AS subscribed,
        count(*) FILTER (WHERE campaign_count > 0) AS in_campaign,
        count(*) FILTER (WHERE last_contacted_at IS NULL) AS not_contacted,
        count(*) FILTER (WHERE verification_status = 'valid') AS valid,
        count(*) FILTER (WHERE verification_status = 'risky') AS risky,
        count(*) FILTER (WHERE verification_status = 'invalid') AS invalid,
        count(*) FILTER (WHERE verification_status = 'unknown') AS unknown,
        count(*) FILTER (WHERE verification_source = '') AS pending
      FROM old_rows GROUP BY organization_id
    ) d
    WHERE s.organization_id = d.organization_id;
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') THEN
    INSERT INTO contact_stats AS s (organization_id, total, subscribed, in_campaign, not_contacted, valid, risky, invalid, unknown, pending)
    SELECT organization_id, count(*), count(*) FILTER (WHERE subscribed), count(*) FILTER (WHERE campaign_count > 0),
      count(*) FILTER (WHERE last_contacted_at IS NULL), count(*) FILTER (WHERE verification_status = 'valid'),
      count(*) FILTER (WHERE verification_status = 'risky'), count(*) FILTER (WHERE verification_status = 'invalid'),
      count(*) FILTER (WHERE verification_status = 'unknown'), count(*) FILTER (WHERE verification_source = '')
    FROM new_rows GROUP BY organization_id
    ON CONFLICT (organization_id) DO UPDATE SET
      total = s.total + excluded.total, subscribed = s.subscribed + excluded.subscribed,
      in_campaign = s.in_campaign + excluded.in_campaign, not_contacted = s.not_contacted + excluded.not_contacted,
      valid = s.valid + excluded.valid, risky = s.risky + excluded.risky, invalid = s.invalid + excluded.invalid,
      unknown = s.unknown + excluded.unknown, pending = s.pending + excluded.pending;
  END IF;
  RETURN NULL;
END $$;
-- +goose StatementEnd
CREATE TRIGGER contact_stats_insert AFTER INSERT ON contacts REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION contact_stats_apply();
CREATE TRIGGER contact_stats_update AFTER UPDATE ON contacts REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION contact_stats_apply();
CREATE TRIGGER contact_stats_delete AFTER DELETE ON contacts REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION contact_stats_apply();

CREATE TABLE contact_categories (
  organization_id uuid NOT NULL,
  contact_id uuid NOT NULL,
  category_id uuid NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (organization_id, contact_id, category_id),
  FOREIGN KEY (organization_id, contact_id) REFERENCES contacts (organization_id, id) ON DELETE CASCADE,
  FOREIGN KEY (organization_id, category_id) REFERENCES labels (organization_id, id) ON DELETE CASCADE
);
CREATE INDEX contact_categories_category ON contact_categories (organization_id, category_id, contact_id);

-- +goose StatementBegin
CREATE FUNCTION contact_categories_count() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    UPDATE labels l SET contact_count = l.contact_count + d.n
    FROM (SELECT organization_id, category_id, count(*) AS n FROM new_rows GROUP BY 1, 2) d
    WHERE l.organization_id = d.organization_id AND l.id = d.category_id;
  ELSE
    UPDATE labels l SET contact_count = l.contact_count - d.n
    FROM (SELECT organization_id, category_id, count(*) AS n FROM old_rows GROUP BY 1, 2) d
    WHERE l.organization_id = d.organization_id AND l.id = d.category_id;
  END IF;
  RETURN NULL;
END $$;
-- +goose StatementEnd
CREATE TRIGGER contact_categories_insert AFTER INSERT ON contact_categories REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION contact_categories_count();
CREATE TRIGGER contact_categories_delete AFTER DELETE ON contact_categories REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION contact_categories_count();

-- Campaigns: what the contact screens need (name for the contact's campaign list, status); the campaigns work
-- adds the rest.
CREATE TABLE campaigns (
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  id uuid NOT NULL,
  name text NOT NULL CHECK (length(name) BETWEEN 1 AND 255),
  status text NOT NULL DEFAULT 'draft' CHECK (status IN ('draft', 'active', 'paused', 'paused_no_accounts', 'paused_trial_expired', 'completed')),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (organization_id, id)
);

-- A contact's progress as a lead of one campaign. The lead status the API shows is derived from these
-- columns and the contact's subscription (see contacts.LeadStatusSQL).
CREATE TABLE campaign_leads (
  organization_id uuid NOT NULL,
  campaign_id uuid NOT NULL,
  contact_id uuid NOT NULL,
  state text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'active', 'completed', 'failed', 'paused', 'undeliverable')),
  sent integer NOT NULL DEFAULT 0,
  opened integer NOT NULL DEFAULT 0,
  machine_opened integer NOT NULL DEFAULT 0,
  clicked integer NOT NULL DEFAULT 0,
  replied integer NOT NULL DEFAULT 0,
  bounced integer NOT NULL DEFAULT 0,
  current_step text NOT NULL DEFAULT '',
  sender text NOT NULL DEFAULT '',
  failure_reason text NOT NULL DEFAULT '',
  hold_since timestamptz,
  hold_until timestamptz,
  hold_reason text NOT NULL DEFAULT '',
  hold_source text CHECK (hold_source IN ('manual', 'out_of_office')),
  last_activity_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (organization_id, campaign_id, contact_id),
  FOREIGN KEY (organization_id, campaign_id) REFERENCES campaigns (organization_id, id) ON DELETE CASCADE,
  FOREIGN KEY (organization_id, contact_id) REFERENCES contacts (organization_id, id) ON DELETE CASCADE
);
CREATE INDEX campaign_leads_contact ON campaign_leads (organization_id, contact_id);

-- +goose StatementBegin
CREATE FUNCTION campaign_leads_count() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    UPDATE contacts c SET campaign_count = c.campaign_count + d.n
    FROM (SELECT organization_id, contact_id, count(*) AS n FROM new_rows GROUP BY 1, 2) d
    WHERE c.organization_id = d.organization_id AND c.id = d.contact_id;
  ELSE
    UPDATE contacts c SET campaign_count = greatest(c.campaign_count - d.n, 0)
    FROM (SELECT organization_id, contact_id, count(*) AS n FROM old_rows GROUP BY 1, 2) d
    WHERE c.organization_id = d.organization_id AND c.id = d.contact_id;
  END IF;
  RETURN NULL;
END $$;
-- +goose StatementEnd
CREATE TRIGGER campaign_leads_insert AFTER INSERT ON campaign_leads REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION campaign_leads_count();
CREATE TRIGGER campaign_leads_delete AFTER DELETE ON campaign_leads REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION campaign_leads_count();

-- Segments: static ones are their pins; dynamic ones are the contacts matching filters (a stored search
-- body, compiled at query time) plus include pins minus exclude pins.
CREATE TABLE segments (
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  id uuid NOT NULL,
  name text NOT NULL CHECK (length(name) BETWEEN 1 AND 255),
  description text NOT NULL DEFAULT '' CHECK (length(description) <= 1000),
  kind text NOT NULL CHECK (kind IN ('static', 'dynamic')),
  filters jsonb CHECK ((kind = 'dynamic') = (filters IS NOT NULL)),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (organization_id, id)
);
CREATE INDEX segments_newest ON segments (organization_id, created_at DESC, id DESC);

CREATE TABLE segment_pins (
  organization_id uuid NOT NULL,
  segment_id uuid NOT NULL,
  contact_id uuid NOT NULL,
  -- true = a manual include, false = a manual exclude (dynamic segments only).
  include boolean NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (organization_id, segment_id, contact_id),
  FOREIGN KEY (organization_id, segment_id) REFERENCES segments (organization_id, id) ON DELETE CASCADE,
  FOREIGN KEY (organization_id, contact_id) REFERENCES contacts (organization_id, id) ON DELETE CASCADE
);
CREATE INDEX segment_pins_contact ON segment_pins (organization_id, contact_id);

CREATE TABLE contact_notes (
  organization_id uuid NOT NULL,
  id uuid NOT NULL,
  contact_id uuid NOT NULL,
  -- The author; kept (not cascaded) when the person leaves so the note's history survives.
  user_id uuid NOT NULL,
  content text NOT NULL CHECK (length(content) BETWEEN 1 AND 10000),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (organization_id, id),
  FOREIGN KEY (organization_id, contact_id) REFERENCES contacts (organization_id, id) ON DELETE CASCADE
);
CREATE INDEX contact_notes_contact ON contact_notes (organization_id, contact_id, created_at DESC, id DESC);

-- What happened to a contact, newest first: the activity feed and most of the timeline.
CREATE TABLE contact_activities (
  organization_id uuid NOT NULL,
  id uuid NOT NULL,
  contact_id uuid NOT NULL,
  user_id uuid,
  activity_type text NOT NULL CHECK (activity_type IN ('email_sent', 'email_opened', 'email_clicked', 'email_replied',
    'email_bounced', 'note_added', 'note_updated', 'deal_created', 'deal_stage_changed', 'deal_won', 'deal_lost',
    'task_created', 'task_completed', 'contact_created', 'contact_updated', 'campaign_added', 'campaign_removed',
    'category_added', 'category_removed')),
  metadata jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(metadata) = 'object'),
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (organization_id, id),
  FOREIGN KEY (organization_id, contact_id) REFERENCES contacts (organization_id, id) ON DELETE CASCADE
);
CREATE INDEX contact_activities_contact ON contact_activities (organization_id, contact_id, created_at DESC, id DESC);

-- Deals: the columns a contact's deal list shows; the CRM work adds pipelines and their constraints.
CREATE TABLE deals (
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  id uuid NOT NULL,
  pipeline_id uuid NOT NULL,
  stage_id uuid NOT NULL,
  contact_id uuid,
  name text NOT NULL CHECK (length(name) BETWEEN 1 AND 255),
  value numeric(18, 2),
  currency text NOT NULL DEFAULT 'USD' CHECK (length(currency) BETWEEN 1 AND 8),
  status text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'won', 'lost')),
  expected_close_date timestamptz,
  won_at timestamptz,
  lost_at timestamptz,
  lost_reason text,
  assigned_to uuid,
  campaign_id uuid,
  source_mailbox_id uuid,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (organization_id, id),
  FOREIGN KEY (organization_id, contact_id) REFERENCES contacts (organization_id, id) ON DELETE SET NULL (contact_id)
);
CREATE INDEX deals_contact ON deals (organization_id, contact_id, created_at DESC) WHERE contact_id IS NOT NULL;

-- Send tasks: one row per message any sender hands to a mailbox, written before the hand-off. The contact
-- screens read a contact's sent mail from here; the mail transport work adds the pipeline's columns.
CREATE TABLE send_tasks (
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  id uuid NOT NULL,
  kind text NOT NULL CHECK (kind IN ('campaign', 'direct', 'reply', 'warmup')),
  status text NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'sending', 'sent', 'failed', 'ambiguous', 'canceled')),
  mailbox_id uuid,
  -- The sender as it was when the task was written (the mailbox may be renamed or removed later).
  from_email text NOT NULL DEFAULT '',
  from_name text NOT NULL DEFAULT '',
  contact_id uuid,
  to_email text NOT NULL CHECK (length(to_email) BETWEEN 3 AND 320),
  campaign_id uuid,
  step_id uuid,
  step_name text NOT NULL DEFAULT '',
  subject text NOT NULL DEFAULT '' CHECK (length(subject) <= 998),
  message_id text NOT NULL DEFAULT '',
  error_code text NOT NULL DEFAULT '',
  error_message text NOT NULL DEFAULT '',
  created_at timestamptz NOT NULL DEFAULT now(),
  sent_at timestamptz,
  opened_at timestamptz,
  clicked_at timestamptz,
  replied_at timestamptz,
  bounced_at timestamptz,
  PRIMARY KEY (organization_id, id),
  FOREIGN KEY (organization_id, contact_id) REFERENCES contacts (organization_id, id) ON DELETE SET NULL (contact_id)
);
CREATE INDEX send_tasks_contact ON send_tasks (organization_id, contact_id, created_at DESC, id DESC) WHERE contact_id IS NOT NULL;

-- Verification runs over a selection of contacts; the River job works through run_contacts in batches.
CREATE TABLE verification_runs (
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  id uuid NOT NULL,
  status text NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'running', 'completed', 'failed')),
  provider text NOT NULL DEFAULT 'builtin',
  total integer NOT NULL DEFAULT 0,
  processed integer NOT NULL DEFAULT 0,
  valid integer NOT NULL DEFAULT 0,
  risky integer NOT NULL DEFAULT 0,
  invalid integer NOT NULL DEFAULT 0,
  unknown integer NOT NULL DEFAULT 0,
  error text NOT NULL DEFAULT '',
  created_at timestamptz NOT NULL DEFAULT now(),
  started_at timestamptz,
  finished_at timestamptz,
  PRIMARY KEY (organization_id, id)
);
CREATE INDEX verification_runs_newest ON verification_runs (organization_id, created_at DESC, id DESC);

CREATE TABLE verification_run_contacts (
  organization_id uuid NOT NULL,
  run_id uuid NOT NULL,
  contact_id uuid NOT NULL,
  done boolean NOT NULL DEFAULT false,
  PRIMARY KEY (organization_id, run_id, contact_id),
  FOREIGN KEY (organization_id, run_id) REFERENCES verification_runs (organization_id, id) ON DELETE CASCADE,
  FOREIGN KEY (organization_id, contact_id) REFERENCES contacts (organization_id, id) ON DELETE CASCADE
);
CREATE INDEX verification_run_contacts_todo ON verification_run_contacts (organization_id, run_id, contact_id) WHERE NOT done;

ALTER TABLE labels ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON labels USING (organization_id = current_org()) WITH CHECK (organization_id = current_org());
ALTER TABLE contacts ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON contacts USING (organization_id = current_org()) WITH CHECK (organization_id = current_org());
ALTER TABLE contact_stats ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON contact_stats USING (organization_id = current_org()) WITH CHECK (organization_id = current_org());
ALTER TABLE contact_categories ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON contact_categories USING (organization_id = current_org()) WITH CHECK (organization_id = current_org());
ALTER TABLE campaigns ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON campaigns USING (organization_id = current_org()) WITH CHECK (organization_id = current_org());
ALTER TABLE campaign_leads ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON campaign_leads USING (organization_id = current_org()) WITH CHECK (organization_id = current_org());
ALTER TABLE segments ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON segments USING (organization_id = current_org()) WITH CHECK (organization_id = current_org());
ALTER TABLE segment_pins ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON segment_pins USING (organization_id = current_org()) WITH CHECK (organization_id = current_org());
ALTER TABLE contact_notes ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON contact_notes USING (organization_id = current_org()) WITH CHECK (organization_id = current_org());
ALTER TABLE contact_activities ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON contact_activities USING (organization_id = current_org()) WITH CHECK (organization_id = current_org());
ALTER TABLE deals ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON deals USING (organization_id = current_org()) WITH CHECK (organization_id = current_org());
ALTER TABLE send_tasks ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON send_tasks USING (organization_id = current_org()) WITH CHECK (organization_id = current_org());
ALTER TABLE verification_runs ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON verification_runs USING (organization_id = current_org()) WITH CHECK (organization_id = current_org());
ALTER TABLE verification_run_contacts ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON verification_run_contacts USING (organization_id = current_org()) WITH CHECK (organization_id = current_org());
GRANT USAGE ON SEQUENCE contact_duplicate_seq TO outflow_app;
GRANT SELECT, INSERT, UPDATE, DELETE ON labels, contacts, contact_stats, contact_categories, campaigns, campaign_leads,
  segments, segment_pins, contact_notes, contact_activities, deals, send_tasks, verification_runs, verification_run_contacts TO outflow_app;
