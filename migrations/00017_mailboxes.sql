-- +goose Up
-- Sender mailboxes: the accounts campaigns, direct sends, replies and warmup send from. Credentials are sealed
-- with the deployment keyring (seal package; the sealed value names its key, so keys rotate) and bound to the
-- mailbox id, so a sealed password copied into another row does not open there.
CREATE TABLE mailboxes (
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  id uuid NOT NULL,
  -- Who connected it; kept when that person leaves the organization.
  user_id uuid REFERENCES users (id) ON DELETE SET NULL,
  -- The worker process currently holding the mailbox's sync lease (NULL when none).
  worker_id uuid,
  email text NOT NULL CHECK (email = lower(email) AND length(email) BETWEEN 3 AND 254),
  name text NOT NULL DEFAULT '' CHECK (length(name) <= 255),
  provider text NOT NULL CHECK (provider IN ('gmail', 'outlook', 'smtp_imap')),
  status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'inactive', 'revoked')),
  signature_plain text NOT NULL DEFAULT '' CHECK (length(signature_plain) <= 10000),
  signature_html text NOT NULL DEFAULT '' CHECK (length(signature_html) <= 10000),
  signature_sync boolean NOT NULL DEFAULT false,
  signature_code boolean NOT NULL DEFAULT false,
  send_as_email text NOT NULL DEFAULT '' CHECK (length(send_as_email) <= 254),
  reply_to text NOT NULL DEFAULT '' CHECK (length(reply_to) <= 254),
  save_to_sent boolean NOT NULL DEFAULT true,
  campaign_limit integer NOT NULL DEFAULT 50 CHECK (campaign_limit BETWEEN 0 AND 5000),
  min_wait_time integer NOT NULL DEFAULT 600 CHECK (min_wait_time BETWEEN 0 AND 86400),
  timezone text NOT NULL DEFAULT '' CHECK (length(timezone) <= 64),
  tags uuid[] NOT NULL DEFAULT '{}' CHECK (cardinality(tags) <= 50),
  -- SMTP and IMAP endpoints; the passwords (or, for OAuth mailboxes, the refresh token) sealed.
  smtp_host text NOT NULL DEFAULT '' CHECK (length(smtp_host) <= 253),
  smtp_port integer NOT NULL DEFAULT 0 CHECK (smtp_port BETWEEN 0 AND 65535),
  smtp_username text NOT NULL DEFAULT '' CHECK (length(smtp_username) <= 320),
  smtp_security text NOT NULL DEFAULT '' CHECK (smtp_security IN ('', 'tls', 'starttls', 'none')),
  smtp_password bytea,
  imap_host text NOT NULL DEFAULT '' CHECK (length(imap_host) <= 253),
  imap_port integer NOT NULL DEFAULT 0 CHECK (imap_port BETWEEN 0 AND 65535),
  imap_username text NOT NULL DEFAULT '' CHECK (length(imap_username) <= 320),
  imap_security text NOT NULL DEFAULT '' CHECK (imap_security IN ('', 'tls', 'starttls', 'none')),
  imap_password bytea,
  -- Sending identity as the provider last reported it: [{email, name, is_primary, is_default, verified}].
  identities jsonb NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(identities) = 'array'),
  identity_synced_at timestamptz,
  signature_source text NOT NULL DEFAULT 'manual' CHECK (signature_source IN ('manual', 'provider')),
  signature_imported_at timestamptz,
  last_synced_at timestamptz,
  last_id bigint NOT NULL DEFAULT 0,
  -- Cold rotation: reserve (held out of campaigns by hand), active, resting (warmup reports it throttled).
  rotation_state text NOT NULL DEFAULT 'active' CHECK (rotation_state IN ('reserve', 'active', 'resting')),
  rotation_since timestamptz,
  rotation_reason text NOT NULL DEFAULT '' CHECK (length(rotation_reason) <= 500),
  -- Warmup: the anchor the ramp counts days from (NULL = disabled), and when it was paused.
  warmup timestamptz,
  warmup_paused_at timestamptz,
  warmup_base integer NOT NULL DEFAULT 2 CHECK (warmup_base BETWEEN 1 AND 100),
  warmup_max integer NOT NULL DEFAULT 40 CHECK (warmup_max BETWEEN 1 AND 200),
  warmup_increase integer NOT NULL DEFAULT 2 CHECK (warmup_increase BETWEEN 0 AND 50),
  warmup_reply_rate integer NOT NULL DEFAULT 30 CHECK (warmup_reply_rate BETWEEN 0 AND 100),
  warmup_tag text NOT NULL DEFAULT '' CHECK (length(warmup_tag) <= 64),
  warmup_pool_type text NOT NULL DEFAULT 'free' CHECK (warmup_pool_type IN ('free', 'premium')),
  warmup_start_time text NOT NULL DEFAULT '' CHECK (warmup_start_time = '' OR warmup_start_time ~ '^([01][0-9]|2[0-3]):[0-5][0-9]$'),
  warmup_end_time text NOT NULL DEFAULT '' CHECK (warmup_end_time = '' OR warmup_end_time ~ '^([01][0-9]|2[0-3]):[0-5][0-9]$'),
  warmup_days integer NOT NULL DEFAULT 7 CHECK (warmup_days BETWEEN 1 AND 7),
  warmup_health text NOT NULL DEFAULT 'healthy' CHECK (warmup_health IN ('healthy', 'watch', 'throttled', 'quarantined', 'blocked')),
  -- Tracking domain and domain authentication (filled by their checks).
  tracking_domain text NOT NULL DEFAULT '' CHECK (length(tracking_domain) <= 253),
  tracking_domain_verified boolean NOT NULL DEFAULT false,
  tracking_domain_verified_at timestamptz,
  auth_state text NOT NULL DEFAULT 'unknown' CHECK (auth_state IN ('passing', 'failing', 'unknown')),
  auth_spf boolean NOT NULL DEFAULT false,
  auth_dkim boolean NOT NULL DEFAULT false,
  auth_dmarc boolean NOT NULL DEFAULT false,
  auth_dmarc_policy text NOT NULL DEFAULT '',
  auth_reason text NOT NULL DEFAULT '',
  auth_checked_at timestamptz,
  auth_failing_since timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (organization_id, id),
  -- The warmup ramp never starts above its ceiling.
  CHECK (warmup_base <= warmup_max)
);
-- One mailbox per address and organization. Lists run newest first on the primary key (ids are UUIDv7).
CREATE UNIQUE INDEX mailboxes_email ON mailboxes (organization_id, email);
CREATE INDEX mailboxes_tags ON mailboxes USING gin (tags);

ALTER TABLE mailboxes ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON mailboxes USING (organization_id = current_org()) WITH CHECK (organization_id = current_org());
GRANT SELECT, INSERT, UPDATE, DELETE ON mailboxes TO outflow_app;

-- The mailbox error log: account-level conditions (auth errors, disabled accounts, rate limits, server errors)
-- with upper-case codes such as EMAIL_AUTH_ERROR. An entry stays open until resolved_at is set.
CREATE TABLE mailbox_errors (
  organization_id uuid NOT NULL,
  id uuid NOT NULL,
  mailbox_id uuid NOT NULL,
  code text NOT NULL CHECK (code ~ '^[A-Z][A-Z0-9_]{1,63}$'),
  severity text NOT NULL CHECK (severity IN ('info', 'warning', 'error', 'critical')),
  title text NOT NULL CHECK (length(title) <= 200),
  message text NOT NULL CHECK (length(message) <= 2000),
  action_required boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT now(),
  resolved_at timestamptz,
  PRIMARY KEY (organization_id, id),
  FOREIGN KEY (organization_id, mailbox_id) REFERENCES mailboxes (organization_id, id) ON DELETE CASCADE
);
CREATE INDEX mailbox_errors_newest ON mailbox_errors (organization_id, mailbox_id, created_at DESC, id DESC);

ALTER TABLE mailbox_errors ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON mailbox_errors USING (organization_id = current_org()) WITH CHECK (organization_id = current_org());
GRANT SELECT, INSERT, UPDATE, DELETE ON mailbox_errors TO outflow_app;

-- The mailboxes a campaign sends from (filled by the campaigns area; read here for a mailbox's campaigns).
CREATE TABLE campaign_mailboxes (
  organization_id uuid NOT NULL,
  campaign_id uuid NOT NULL,
  mailbox_id uuid NOT NULL,
  PRIMARY KEY (organization_id, campaign_id, mailbox_id),
  FOREIGN KEY (organization_id, campaign_id) REFERENCES campaigns (organization_id, id) ON DELETE CASCADE,
  FOREIGN KEY (organization_id, mailbox_id) REFERENCES mailboxes (organization_id, id) ON DELETE CASCADE
);
CREATE INDEX campaign_mailboxes_mailbox ON campaign_mailboxes (organization_id, mailbox_id);

ALTER TABLE campaign_mailboxes ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON campaign_mailboxes USING (organization_id = current_org()) WITH CHECK (organization_id = current_org());
GRANT SELECT, INSERT, UPDATE, DELETE ON campaign_mailboxes TO outflow_app;
