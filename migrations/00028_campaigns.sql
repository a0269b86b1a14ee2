-- +goose Up
-- Campaigns: everything a person or an agent configures and checks before anything is sent (part 3 "Campaign"),
-- laid out for the sequence engine that runs it: steps ordered by position (the graph is the chain plus each
-- step's verbatim conditions), variants per step or campaign-wide, an explicit sender pool with weights, files
-- stored in Postgres (no filesystem state), the advanced blocks as one document, the activity log, preflight
-- reports and test runs. Leads carry their next step and the time it is due, so the engine's periodic job
-- takes due leads through one partial index across organizations.
ALTER TABLE campaigns
  ADD COLUMN user_id uuid,
  ADD COLUMN description text NOT NULL DEFAULT '' CHECK (length(description) <= 2000),
  ADD COLUMN kind text NOT NULL DEFAULT 'sequence' CHECK (kind IN ('sequence', 'one_time')),
  ADD COLUMN stop_on_reply boolean NOT NULL DEFAULT true,
  ADD COLUMN open_tracking boolean NOT NULL DEFAULT false,
  ADD COLUMN link_tracking boolean NOT NULL DEFAULT false,
  ADD COLUMN text_only boolean NOT NULL DEFAULT false,
  ADD COLUMN unsubscribe_header boolean NOT NULL DEFAULT true,
  ADD COLUMN risky_emails boolean NOT NULL DEFAULT false,
  ADD COLUMN daily_limit integer NOT NULL DEFAULT 50 CHECK (daily_limit BETWEEN 1 AND 100000),
  ADD COLUMN cc text[] NOT NULL DEFAULT '{}' CHECK (cardinality(cc) <= 10),
  ADD COLUMN bcc text[] NOT NULL DEFAULT '{}' CHECK (cardinality(bcc) <= 10),
  ADD COLUMN start_date timestamptz,
  ADD COLUMN end_date timestamptz,
  ADD COLUMN timezone text NOT NULL DEFAULT 'UTC' CHECK (length(timezone) BETWEEN 1 AND 64),
  ADD COLUMN days smallint NOT NULL DEFAULT 31 CHECK (days BETWEEN 0 AND 127),
  ADD COLUMN start_time text NOT NULL DEFAULT '09:00' CHECK (start_time ~ '^([01][0-9]|2[0-3]):[0-5][0-9]$'),
  ADD COLUMN end_time text NOT NULL DEFAULT '17:00' CHECK (end_time ~ '^([01][0-9]|2[0-4]):[0-5][0-9]$'),
  -- Empty, or 7 arrays (Sunday = 0) of {start, end} minutes of the day; non-empty supersedes days/start/end.
  ADD COLUMN schedule_windows jsonb NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(schedule_windows) = 'array'),
  ADD COLUMN contact_order_by text NOT NULL DEFAULT 'created_at' CHECK (length(contact_order_by) <= 64),
  ADD COLUMN contact_order_dir text NOT NULL DEFAULT 'asc' CHECK (contact_order_dir IN ('asc', 'desc')),
  ADD COLUMN contact_order_field text CHECK (length(contact_order_field) <= 64),
  ADD COLUMN sender_strategy text NOT NULL DEFAULT 'tags' CHECK (sender_strategy IN ('tags', 'explicit')),
  ADD COLUMN rotation_mode text NOT NULL DEFAULT 'round_robin' CHECK (rotation_mode IN ('round_robin', 'weighted', 'least_used')),
  ADD COLUMN ramp_enabled boolean NOT NULL DEFAULT false,
  ADD COLUMN ramp_start integer NOT NULL DEFAULT 10 CHECK (ramp_start BETWEEN 1 AND 5000),
  ADD COLUMN ramp_increment integer NOT NULL DEFAULT 5 CHECK (ramp_increment BETWEEN 0 AND 5000),
  ADD COLUMN ramp_ceiling integer NOT NULL DEFAULT 50 CHECK (ramp_ceiling BETWEEN 1 AND 5000),
  ADD COLUMN ramp_level integer NOT NULL DEFAULT 0 CHECK (ramp_level >= 0),
  ADD COLUMN esp_match_mode text NOT NULL DEFAULT 'off' CHECK (esp_match_mode IN ('off', 'prefer', 'strict')),
  ADD COLUMN max_new_leads_per_day integer NOT NULL DEFAULT 0 CHECK (max_new_leads_per_day BETWEEN 0 AND 1000000),
  ADD COLUMN prioritize_new_leads boolean NOT NULL DEFAULT false,
  ADD COLUMN entry_delay_minutes integer NOT NULL DEFAULT 0 CHECK (entry_delay_minutes BETWEEN 0 AND 129600),
  ADD COLUMN continuous boolean NOT NULL DEFAULT false,
  ADD COLUMN idle_since timestamptz,
  ADD COLUMN tracking_domain text NOT NULL DEFAULT '' CHECK (length(tracking_domain) <= 253),
  ADD COLUMN tracking_domain_verified_at timestamptz,
  ADD COLUMN utm_tracking boolean NOT NULL DEFAULT false,
  ADD COLUMN utm_source text NOT NULL DEFAULT '' CHECK (length(utm_source) <= 128),
  ADD COLUMN utm_medium text NOT NULL DEFAULT '' CHECK (length(utm_medium) <= 128),
  ADD COLUMN utm_campaign text NOT NULL DEFAULT '' CHECK (length(utm_campaign) <= 128),
  -- The seven advanced blocks (part 3 "Advanced overrides"), each replaced whole by PATCH .../advanced.
  ADD COLUMN advanced jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(advanced) = 'object'),
  ADD COLUMN advanced_updated_at timestamptz,
  -- Set by the first lead ever added (the start check "never had a lead"); never cleared.
  ADD COLUMN had_leads boolean NOT NULL DEFAULT false,
  ADD COLUMN started_at timestamptz,
  ADD COLUMN completed_at timestamptz,
  -- Auto-pause state (a bounce spike or an emptied pool): why and when; not copied by duplicate.
  ADD COLUMN paused_reason text NOT NULL DEFAULT '' CHECK (length(paused_reason) <= 500),
  ADD COLUMN last_status_change_at timestamptz;
CREATE INDEX campaigns_list ON campaigns (organization_id, id DESC);
CREATE INDEX campaigns_active ON campaigns (organization_id, id) WHERE status = 'active';

-- Folders and mailbox tags of a campaign (labels of kind folder and tag).
CREATE TABLE campaign_labels (
  organization_id uuid NOT NULL,
  campaign_id uuid NOT NULL,
  label_id uuid NOT NULL,
  PRIMARY KEY (organization_id, campaign_id, label_id),
  FOREIGN KEY (organization_id, campaign_id) REFERENCES campaigns (organization_id, id) ON DELETE CASCADE,
  FOREIGN KEY (organization_id, label_id) REFERENCES labels (organization_id, id) ON DELETE CASCADE
);
CREATE INDEX campaign_labels_label ON campaign_labels (organization_id, label_id);

-- Steps, ordered by position (0-based, dense). Email steps carry content; action steps (app_action,
-- wait_for_event) and wait steps carry their config in action, validated by the campaigns package.
CREATE TABLE campaign_steps (
  organization_id uuid NOT NULL,
  campaign_id uuid NOT NULL,
  id uuid NOT NULL,
  position integer NOT NULL CHECK (position BETWEEN 0 AND 99),
  name text NOT NULL DEFAULT '' CHECK (length(name) <= 255),
  kind text NOT NULL DEFAULT 'email' CHECK (kind IN ('email', 'action', 'wait')),
  subject text NOT NULL DEFAULT '' CHECK (length(subject) <= 998),
  body_plain text NOT NULL DEFAULT '' CHECK (length(body_plain) <= 100000),
  body_html text NOT NULL DEFAULT '' CHECK (length(body_html) <= 200000),
  body_sync boolean NOT NULL DEFAULT true,
  body_code boolean NOT NULL DEFAULT false,
  wait_after integer NOT NULL DEFAULT 0 CHECK (wait_after BETWEEN 0 AND 365),
  thread_reply boolean NOT NULL DEFAULT false,
  conditions jsonb CHECK (conditions IS NULL OR jsonb_typeof(conditions) = 'object'),
  action jsonb CHECK (action IS NULL OR jsonb_typeof(action) = 'object'),
  on_timeout text NOT NULL DEFAULT 'continue' CHECK (on_timeout IN ('continue', 'stop')),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (organization_id, id),
  UNIQUE (organization_id, campaign_id, position) DEFERRABLE INITIALLY DEFERRED,
  FOREIGN KEY (organization_id, campaign_id) REFERENCES campaigns (organization_id, id) ON DELETE CASCADE
);

-- A/B variants: step_id NULL is campaign-wide. An is_control variant stands for the step's own content.
CREATE TABLE campaign_variants (
  organization_id uuid NOT NULL,
  campaign_id uuid NOT NULL,
  id uuid NOT NULL,
  step_id uuid,
  name text NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
  weight integer NOT NULL DEFAULT 50 CHECK (weight BETWEEN 0 AND 100),
  subject text NOT NULL DEFAULT '' CHECK (length(subject) <= 998),
  body_plain text NOT NULL DEFAULT '' CHECK (length(body_plain) <= 100000),
  body_html text NOT NULL DEFAULT '' CHECK (length(body_html) <= 200000),
  is_control boolean NOT NULL DEFAULT false,
  is_active boolean NOT NULL DEFAULT true,
  metadata jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(metadata) = 'object'),
  -- Set when the A/B decision promoted this variant (the engine's ab_testing block).
  promoted_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (organization_id, id),
  FOREIGN KEY (organization_id, campaign_id) REFERENCES campaigns (organization_id, id) ON DELETE CASCADE,
  FOREIGN KEY (organization_id, step_id) REFERENCES campaign_steps (organization_id, id) ON DELETE CASCADE
);
CREATE INDEX campaign_variants_campaign ON campaign_variants (organization_id, campaign_id, created_at, id);
-- One control per step (campaign-wide variants have no control).
CREATE UNIQUE INDEX campaign_variants_control ON campaign_variants (organization_id, step_id) WHERE is_control;

-- The explicit sender pool (campaign_mailboxes, created with the mailboxes) gains its weights and order.
ALTER TABLE campaign_mailboxes
  ADD COLUMN weight integer NOT NULL DEFAULT 1 CHECK (weight BETWEEN 1 AND 100),
  ADD COLUMN enabled boolean NOT NULL DEFAULT true,
  ADD COLUMN last_sent_at timestamptz,
  ADD COLUMN created_at timestamptz NOT NULL DEFAULT now();

-- Files sent with a step (step_id set) or every step (NULL). Stored in Postgres; size limits are enforced by
-- the campaigns package (campaigns.MaxAttachmentBytes per file, MaxCampaignAttachmentBytes per campaign).
CREATE TABLE campaign_attachments (
  organization_id uuid NOT NULL,
  campaign_id uuid NOT NULL,
  id uuid NOT NULL,
  step_id uuid,
  filename text NOT NULL CHECK (length(filename) BETWEEN 1 AND 255),
  mime_type text NOT NULL CHECK (length(mime_type) BETWEEN 3 AND 255),
  size integer NOT NULL CHECK (size BETWEEN 1 AND 5242880),
  sha256 bytea NOT NULL CHECK (length(sha256) = 32),
  content bytea NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (organization_id, id),
  FOREIGN KEY (organization_id, campaign_id) REFERENCES campaigns (organization_id, id) ON DELETE CASCADE,
  FOREIGN KEY (organization_id, step_id) REFERENCES campaign_steps (organization_id, id) ON DELETE CASCADE
);
CREATE INDEX campaign_attachments_campaign ON campaign_attachments (organization_id, campaign_id, created_at, id);

-- The campaign activity log (GET /campaigns/:id/logs): newest first by id (UUIDv7).
CREATE TABLE campaign_logs (
  organization_id uuid NOT NULL,
  campaign_id uuid NOT NULL,
  id uuid NOT NULL,
  contact_id uuid,
  event_type text NOT NULL CHECK (length(event_type) BETWEEN 1 AND 64),
  message text NOT NULL DEFAULT '' CHECK (length(message) <= 2000),
  metadata jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(metadata) = 'object'),
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (organization_id, id),
  FOREIGN KEY (organization_id, campaign_id) REFERENCES campaigns (organization_id, id) ON DELETE CASCADE
);
CREATE INDEX campaign_logs_campaign ON campaign_logs (organization_id, campaign_id, id DESC);

-- Stored preflight reports (POST .../preflight); validate stores none.
CREATE TABLE campaign_preflight_reports (
  organization_id uuid NOT NULL,
  campaign_id uuid NOT NULL,
  id uuid NOT NULL,
  passed boolean NOT NULL,
  score integer NOT NULL CHECK (score BETWEEN 0 AND 100),
  checks jsonb NOT NULL CHECK (jsonb_typeof(checks) = 'array'),
  recommendations jsonb NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(recommendations) = 'array'),
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (organization_id, id),
  FOREIGN KEY (organization_id, campaign_id) REFERENCES campaigns (organization_id, id) ON DELETE CASCADE
);
CREATE INDEX campaign_preflight_reports_campaign ON campaign_preflight_reports (organization_id, campaign_id, created_at DESC);

-- Test runs: the real sequence sent to one test address with compressed waits, worked by a River job.
CREATE TABLE campaign_test_runs (
  organization_id uuid NOT NULL,
  campaign_id uuid NOT NULL,
  id uuid NOT NULL,
  contact_id uuid NOT NULL,
  mailbox_id uuid,
  prospect_email text NOT NULL CHECK (length(prospect_email) BETWEEN 3 AND 254),
  state text NOT NULL DEFAULT 'running' CHECK (state IN ('running', 'waiting_for_event', 'completed', 'failed', 'cancelled')),
  current_step_id uuid,
  -- Per-step progress, in step order: [{step_id, name, kind, state, outcome, detail, task_id, started_at, completed_at, error}].
  steps jsonb NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(steps) = 'array'),
  app_variables jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(app_variables) = 'object'),
  error_code text NOT NULL DEFAULT '',
  error_message text NOT NULL DEFAULT '',
  waiting_event text NOT NULL DEFAULT '',
  waiting_until timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  completed_at timestamptz,
  PRIMARY KEY (organization_id, id),
  FOREIGN KEY (organization_id, campaign_id) REFERENCES campaigns (organization_id, id) ON DELETE CASCADE
);
CREATE INDEX campaign_test_runs_campaign ON campaign_test_runs (organization_id, campaign_id, id DESC);

-- Per-campaign daily counters (by the campaign's local day): what daily_limit, the ramp and
-- max_new_leads_per_day are checked against by the engine.
CREATE TABLE campaign_send_days (
  organization_id uuid NOT NULL,
  campaign_id uuid NOT NULL,
  day date NOT NULL,
  sent integer NOT NULL DEFAULT 0 CHECK (sent >= 0),
  new_leads integer NOT NULL DEFAULT 0 CHECK (new_leads >= 0),
  PRIMARY KEY (organization_id, campaign_id, day),
  FOREIGN KEY (organization_id, campaign_id) REFERENCES campaigns (organization_id, id) ON DELETE CASCADE
);

-- Campaigns created per organization per UTC day (create and duplicate): the daily new-campaign throttle
-- counts here, so deleting a campaign does not give its slot back.
CREATE TABLE campaign_creation_days (
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  day date NOT NULL,
  created integer NOT NULL DEFAULT 0 CHECK (created >= 0),
  PRIMARY KEY (organization_id, day)
);

-- Leads: where each one is in the sequence and when its next step is due. entered_at NULL (leads enrolled
-- before it existed) counts from the campaign's created_at for entry_delay_minutes.
ALTER TABLE campaign_leads
  ADD COLUMN entered_at timestamptz,
  ADD COLUMN step_position integer NOT NULL DEFAULT 0 CHECK (step_position >= 0),
  -- Leads are due when added (by any path); the engine moves due_at to the next decision.
  ADD COLUMN due_at timestamptz DEFAULT now(),
  -- Why the lead is waiting (outside window, campaign limit, ramp, mailbox cap, gap, entry delay, held, ...).
  ADD COLUMN wait_reason text NOT NULL DEFAULT '' CHECK (length(wait_reason) <= 200),
  ADD COLUMN mailbox_id uuid,
  ADD COLUMN variant_id uuid,
  ADD COLUMN updated_at timestamptz NOT NULL DEFAULT now();
ALTER TABLE campaign_leads ALTER COLUMN entered_at SET DEFAULT now();
CREATE INDEX campaign_leads_due ON campaign_leads (due_at) WHERE state IN ('pending', 'active') AND due_at IS NOT NULL;
CREATE INDEX campaign_leads_campaign ON campaign_leads (organization_id, campaign_id, contact_id);
ALTER TABLE campaign_leads ADD CONSTRAINT campaign_leads_hold_reason CHECK (length(hold_reason) <= 200);

-- Files a send task carries (campaign attachments by id, read when the message is built; a file deleted
-- before then is left out).
ALTER TABLE send_tasks ADD COLUMN attachment_ids uuid[] NOT NULL DEFAULT '{}' CHECK (cardinality(attachment_ids) <= 20);
-- The bodies already carry the mailbox's signature (a template placed it): signature_sync appends none.
ALTER TABLE send_tasks ADD COLUMN signed boolean NOT NULL DEFAULT false;

-- +goose StatementBegin
CREATE FUNCTION campaign_leads_had_leads() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public AS $$
BEGIN
  UPDATE campaigns c SET had_leads = true
  FROM (SELECT DISTINCT organization_id, campaign_id FROM new_rows) d
  WHERE c.organization_id = d.organization_id AND c.id = d.campaign_id AND NOT c.had_leads;
  RETURN NULL;
END $$;
-- +goose StatementEnd
CREATE TRIGGER campaign_leads_had_leads AFTER INSERT ON campaign_leads REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION campaign_leads_had_leads();

ALTER TABLE campaign_labels ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON campaign_labels USING (organization_id = current_org()) WITH CHECK (organization_id = current_org());
ALTER TABLE campaign_steps ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON campaign_steps USING (organization_id = current_org()) WITH CHECK (organization_id = current_org());
ALTER TABLE campaign_variants ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON campaign_variants USING (organization_id = current_org()) WITH CHECK (organization_id = current_org());
ALTER TABLE campaign_attachments ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON campaign_attachments USING (organization_id = current_org()) WITH CHECK (organization_id = current_org());
ALTER TABLE campaign_logs ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON campaign_logs USING (organization_id = current_org()) WITH CHECK (organization_id = current_org());
ALTER TABLE campaign_preflight_reports ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON campaign_preflight_reports USING (organization_id = current_org()) WITH CHECK (organization_id = current_org());
ALTER TABLE campaign_test_runs ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON campaign_test_runs USING (organization_id = current_org()) WITH CHECK (organization_id = current_org());
ALTER TABLE campaign_send_days ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON campaign_send_days USING (organization_id = current_org()) WITH CHECK (organization_id = current_org());
ALTER TABLE campaign_creation_days ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON campaign_creation_days USING (organization_id = current_org()) WITH CHECK (organization_id = current_org());
GRANT SELECT, INSERT, UPDATE, DELETE ON campaign_labels, campaign_steps, campaign_variants, campaign_attachments,
  campaign_logs, campaign_preflight_reports, campaign_test_runs, campaign_send_days, campaign_creation_days TO outflow_app;

-- +goose Down
ALTER TABLE send_tasks DROP COLUMN attachment_ids, DROP COLUMN signed;
DROP TRIGGER campaign_leads_had_leads ON campaign_leads;
DROP FUNCTION campaign_leads_had_leads();
DROP TABLE campaign_creation_days, campaign_send_days, campaign_test_runs, campaign_preflight_reports, campaign_logs,
  campaign_attachments, campaign_variants, campaign_steps, campaign_labels;
ALTER TABLE campaign_leads DROP CONSTRAINT campaign_leads_hold_reason, DROP COLUMN entered_at, DROP COLUMN step_position,
  DROP COLUMN due_at, DROP COLUMN wait_reason, DROP COLUMN mailbox_id, DROP COLUMN variant_id, DROP COLUMN updated_at;
ALTER TABLE campaign_mailboxes DROP COLUMN weight, DROP COLUMN enabled, DROP COLUMN last_sent_at, DROP COLUMN created_at;
DROP INDEX campaigns_list, campaigns_active;
ALTER TABLE campaigns DROP COLUMN user_id, DROP COLUMN description, DROP COLUMN kind, DROP COLUMN stop_on_reply,
  DROP COLUMN open_tracking, DROP COLUMN link_tracking, DROP COLUMN text_only, DROP COLUMN unsubscribe_header,
  DROP COLUMN risky_emails, DROP COLUMN daily_limit, DROP COLUMN cc, DROP COLUMN bcc, DROP COLUMN start_date,
  DROP COLUMN end_date, DROP COLUMN timezone, DROP COLUMN days, DROP COLUMN start_time, DROP COLUMN end_time,
  DROP COLUMN schedule_windows, DROP COLUMN contact_order_by, DROP COLUMN contact_order_dir,
  DROP COLUMN contact_order_field, DROP COLUMN sender_strategy, DROP COLUMN rotation_mode, DROP COLUMN ramp_enabled,
  DROP COLUMN ramp_start, DROP COLUMN ramp_increment, DROP COLUMN ramp_ceiling, DROP COLUMN ramp_level,
  DROP COLUMN esp_match_mode, DROP COLUMN max_new_leads_per_day, DROP COLUMN prioritize_new_leads,
  DROP COLUMN entry_delay_minutes, DROP COLUMN continuous, DROP COLUMN idle_since, DROP COLUMN tracking_domain,
  DROP COLUMN tracking_domain_verified_at, DROP COLUMN utm_tracking, DROP COLUMN utm_source, DROP COLUMN utm_medium,
  DROP COLUMN utm_campaign, DROP COLUMN advanced, DROP COLUMN advanced_updated_at, DROP COLUMN had_leads,
  DROP COLUMN started_at, DROP COLUMN completed_at, DROP COLUMN paused_reason, DROP COLUMN last_status_change_at;
