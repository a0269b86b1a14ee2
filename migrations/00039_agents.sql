-- +goose Up
-- Agents act safely (part 1 "Agent runs, policies, approvals, direct sends", part 3 "App connections",
-- "Product events", the app action step).
--
-- agent_policies: what one API key or one OAuth grant may do without a person. At most one enabled policy per
-- credential, so the gate reads one row. agent_policy_usage counts what a policy's autonomous actions used per
-- UTC day; the gate raises it with one conditional upsert, so two concurrent actions can never both pass a limit.
CREATE TABLE agent_policies (
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  id uuid NOT NULL,
  name text NOT NULL CHECK (length(name) BETWEEN 1 AND 255),
  enabled boolean NOT NULL DEFAULT true,
  api_key_id uuid,
  oauth_grant_id uuid,
  capabilities text[] NOT NULL CHECK (cardinality(capabilities) BETWEEN 1 AND 4
    AND capabilities <@ ARRAY['campaign.launch', 'email.compose', 'inbox.reply', 'mailbox.provision']),
  mailbox_ids uuid[] NOT NULL CHECK (cardinality(mailbox_ids) BETWEEN 1 AND 1000),
  max_recipients_per_run integer NOT NULL CHECK (max_recipients_per_run >= 1),
  max_recipients_per_day integer NOT NULL CHECK (max_recipients_per_day >= 1),
  max_actions_per_day integer NOT NULL CHECK (max_actions_per_day >= 1),
  max_monthly_mailbox_spend_cents bigint CHECK (max_monthly_mailbox_spend_cents >= 0),
  expires_at timestamptz NOT NULL,
  created_by uuid REFERENCES users (id) ON DELETE SET NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (organization_id, id),
  CHECK ((api_key_id IS NULL) <> (oauth_grant_id IS NULL)),
  CHECK (NOT ('mailbox.provision' = ANY (capabilities)) OR max_monthly_mailbox_spend_cents IS NOT NULL),
  FOREIGN KEY (organization_id, api_key_id) REFERENCES api_keys (organization_id, id) ON DELETE CASCADE,
  FOREIGN KEY (organization_id, oauth_grant_id) REFERENCES oauth_grants (organization_id, id) ON DELETE CASCADE
);
CREATE UNIQUE INDEX agent_policies_api_key ON agent_policies (organization_id, api_key_id) WHERE enabled AND api_key_id IS NOT NULL;
CREATE UNIQUE INDEX agent_policies_oauth_grant ON agent_policies (organization_id, oauth_grant_id) WHERE enabled AND oauth_grant_id IS NOT NULL;

CREATE TABLE agent_policy_usage (
  organization_id uuid NOT NULL,
  policy_id uuid NOT NULL,
  day date NOT NULL,
  recipients integer NOT NULL DEFAULT 0 CHECK (recipients >= 0),
  actions integer NOT NULL DEFAULT 0 CHECK (actions >= 0),
  PRIMARY KEY (organization_id, policy_id, day),
  FOREIGN KEY (organization_id, policy_id) REFERENCES agent_policies (organization_id, id) ON DELETE CASCADE
);

-- runs: durable outbound runs (POST /runs). input is the request as accepted; the River jobs move state and
-- append one run_events row per step of the story. run_events is append-only: the application role may insert
-- and read it, never change or remove it.
CREATE TABLE runs (
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  id uuid NOT NULL,
  state text NOT NULL DEFAULT 'queued' CHECK (state IN ('queued', 'preflighting', 'awaiting_approval', 'launching',
    'active', 'failed', 'denied', 'paused', 'completed', 'cancelled')),
  intent text NOT NULL CHECK (intent IN ('draft', 'launch')),
  input jsonb NOT NULL CHECK (jsonb_typeof(input) = 'object'),
  campaign_id uuid,
  frozen_sender_ids uuid[] NOT NULL DEFAULT '{}',
  recipient_count integer NOT NULL DEFAULT 0 CHECK (recipient_count >= 0),
  action_count integer NOT NULL DEFAULT 0 CHECK (action_count >= 0),
  policy_decision jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(policy_decision) = 'object'),
  preflight_report jsonb,
  error_details jsonb,
  approval_id uuid,
  -- Who asked: the credential kind and id (API key, OAuth grant or session), and the person behind it.
  credential_kind text NOT NULL CHECK (credential_kind IN ('api_key', 'oauth', 'session')),
  credential_id uuid NOT NULL,
  user_id uuid,
  idempotency_key text NOT NULL CHECK (length(idempotency_key) BETWEEN 1 AND 255),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (organization_id, id),
  UNIQUE (organization_id, credential_id, idempotency_key)
);
CREATE INDEX runs_recent ON runs (organization_id, created_at DESC, id DESC);
CREATE INDEX runs_active_campaign ON runs (organization_id, campaign_id) WHERE state IN ('active', 'paused');

CREATE TABLE run_events (
  organization_id uuid NOT NULL,
  run_id uuid NOT NULL,
  seq integer NOT NULL CHECK (seq >= 1),
  id uuid NOT NULL,
  type text NOT NULL CHECK (length(type) BETWEEN 1 AND 100),
  state text NOT NULL,
  message text NOT NULL DEFAULT '' CHECK (length(message) <= 2000),
  data jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(data) = 'object'),
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (organization_id, run_id, seq),
  FOREIGN KEY (organization_id, run_id) REFERENCES runs (organization_id, id) ON DELETE CASCADE
);

-- approvals: an action held for a person. payload is what will run (the request, the requester's scope and,
-- for a run, the plan the human reviews); it expires 30 minutes after creation. Deciding is one conditional
-- update (pending and not expired), so a decision and the expiry can never both win.
CREATE TABLE approvals (
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  id uuid NOT NULL,
  run_id uuid,
  action_type text NOT NULL CHECK (action_type IN ('campaign.launch', 'email.compose', 'inbox.reply', 'mailbox.provision')),
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'approved', 'denied', 'expired', 'executed')),
  payload jsonb NOT NULL CHECK (jsonb_typeof(payload) = 'object'),
  reasons text[] NOT NULL DEFAULT '{}',
  policy_id uuid,
  credential_kind text NOT NULL CHECK (credential_kind IN ('api_key', 'oauth', 'session')),
  credential_id uuid NOT NULL,
  requested_by_user_id uuid,
  decided_by uuid REFERENCES users (id) ON DELETE SET NULL,
  decision_reason text NOT NULL DEFAULT '' CHECK (length(decision_reason) <= 1000),
  decided_at timestamptz,
  executed_at timestamptz,
  -- What acting produced (the task id of a send, the run's campaign) or why acting was refused by a hard gate.
  result jsonb,
  expires_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (organization_id, id),
  FOREIGN KEY (organization_id, run_id) REFERENCES runs (organization_id, id) ON DELETE CASCADE
);
CREATE INDEX approvals_recent ON approvals (organization_id, created_at DESC, id DESC);
CREATE INDEX approvals_pending_expiry ON approvals (expires_at) WHERE status = 'pending';

-- app_connections: the customer's app that app_action steps call, with its sealed signing secret.
CREATE TABLE app_connections (
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  id uuid NOT NULL,
  name text NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
  base_url text NOT NULL CHECK (length(base_url) BETWEEN 9 AND 2048),
  secret_sealed bytea NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (organization_id, id)
);
CREATE UNIQUE INDEX app_connections_name ON app_connections (organization_id, lower(name));

-- campaign_step_runs: one row per lead and non-email step that runs outside the engine pass (app_action,
-- wait_for_event). Its id is the app request's X-Service-Event-Id and Idempotency-Key, kept across engine
-- passes, job retries and manual retries.
CREATE TABLE campaign_step_runs (
  organization_id uuid NOT NULL,
  id uuid NOT NULL,
  campaign_id uuid NOT NULL,
  step_id uuid NOT NULL,
  contact_id uuid NOT NULL,
  kind text NOT NULL CHECK (kind IN ('app_action', 'wait_for_event')),
  status text NOT NULL CHECK (status IN ('running', 'succeeded', 'failed', 'blocked', 'waiting', 'resumed', 'timed_out')),
  attempts integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
  error jsonb,
  output jsonb CHECK (output IS NULL OR (jsonb_typeof(output) = 'object' AND octet_length(output::text) <= 65536)),
  wait_event_name text NOT NULL DEFAULT '' CHECK (length(wait_event_name) <= 255),
  wait_until timestamptz,
  resumed_by_event uuid,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (organization_id, id),
  UNIQUE (organization_id, campaign_id, contact_id, step_id),
  FOREIGN KEY (organization_id, campaign_id) REFERENCES campaigns (organization_id, id) ON DELETE CASCADE
);
CREATE INDEX campaign_step_runs_waiting ON campaign_step_runs (organization_id, contact_id, wait_event_name) WHERE status = 'waiting';
CREATE INDEX campaign_step_runs_campaign ON campaign_step_runs (organization_id, campaign_id, status);

-- What each lead's app actions captured so far, by output_key: the templates' .App.
ALTER TABLE campaign_leads ADD COLUMN app jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(app) = 'object');

-- product_events: what a contact did in the customer's product (POST /events).
CREATE TABLE product_events (
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  id uuid NOT NULL,
  contact_id uuid NOT NULL,
  name text NOT NULL CHECK (length(name) BETWEEN 1 AND 255 AND name ~ '^[a-z0-9_-]+(\.[a-z0-9_-]+)*$'),
  data jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(data) = 'object' AND octet_length(data::text) <= 65536),
  occurred_at timestamptz NOT NULL,
  received_at timestamptz NOT NULL DEFAULT now(),
  idempotency_key text NOT NULL CHECK (length(idempotency_key) BETWEEN 1 AND 255),
  PRIMARY KEY (organization_id, id),
  UNIQUE (organization_id, idempotency_key),
  FOREIGN KEY (organization_id, contact_id) REFERENCES contacts (organization_id, id) ON DELETE CASCADE
);
CREATE INDEX product_events_recent ON product_events (organization_id, received_at DESC, id DESC);
CREATE INDEX product_events_contact ON product_events (organization_id, contact_id, received_at DESC);
CREATE INDEX product_events_name ON product_events (organization_id, name, received_at DESC);

ALTER TABLE agent_policies ENABLE ROW LEVEL SECURITY;
ALTER TABLE agent_policy_usage ENABLE ROW LEVEL SECURITY;
ALTER TABLE runs ENABLE ROW LEVEL SECURITY;
ALTER TABLE run_events ENABLE ROW LEVEL SECURITY;
ALTER TABLE approvals ENABLE ROW LEVEL SECURITY;
ALTER TABLE app_connections ENABLE ROW LEVEL SECURITY;
ALTER TABLE campaign_step_runs ENABLE ROW LEVEL SECURITY;
ALTER TABLE product_events ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON agent_policies USING (organization_id = current_org()) WITH CHECK (organization_id = current_org());
CREATE POLICY tenant_isolation ON agent_policy_usage USING (organization_id = current_org()) WITH CHECK (organization_id = current_org());
CREATE POLICY tenant_isolation ON runs USING (organization_id = current_org()) WITH CHECK (organization_id = current_org());
CREATE POLICY tenant_isolation ON run_events USING (organization_id = current_org()) WITH CHECK (organization_id = current_org());
CREATE POLICY tenant_isolation ON approvals USING (organization_id = current_org()) WITH CHECK (organization_id = current_org());
CREATE POLICY tenant_isolation ON app_connections USING (organization_id = current_org()) WITH CHECK (organization_id = current_org());
CREATE POLICY tenant_isolation ON campaign_step_runs USING (organization_id = current_org()) WITH CHECK (organization_id = current_org());
CREATE POLICY tenant_isolation ON product_events USING (organization_id = current_org()) WITH CHECK (organization_id = current_org());
-- The default privileges give the app role every table; a run's story is append-only.
REVOKE UPDATE, DELETE ON run_events FROM outflow_app;

-- +goose Down
DROP TABLE product_events;
ALTER TABLE campaign_leads DROP COLUMN app;
DROP TABLE campaign_step_runs;
DROP TABLE app_connections;
DROP TABLE approvals;
DROP TABLE run_events;
DROP TABLE runs;
DROP TABLE agent_policy_usage;
DROP TABLE agent_policies;
