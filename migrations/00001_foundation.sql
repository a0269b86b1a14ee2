-- +goose Up
-- Foundation: the application role, tenancy, credentials, idempotency, the event outbox, the audit log and
-- the system heartbeat. Every tenant table leads with organization_id and sits behind row-level security.

-- The API and the workers SET ROLE to outflow_app after connecting, so row-level security applies to every
-- query they run; the migration owner keeps ownership and is the only one who bypasses it.
-- +goose StatementBegin
DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'outflow_app') THEN
    CREATE ROLE outflow_app NOLOGIN NOSUPERUSER NOBYPASSRLS NOCREATEDB NOCREATEROLE;
  END IF;
END
$$;
-- +goose StatementEnd
GRANT outflow_app TO CURRENT_USER;
GRANT USAGE ON SCHEMA public TO outflow_app;

-- current_org is the organization the current transaction is scoped to (db.WithOrgTx sets it); NULL outside
-- such a transaction, so tenant policies then match no row at all.
CREATE FUNCTION current_org() RETURNS uuid
LANGUAGE sql STABLE PARALLEL SAFE
AS $$ SELECT NULLIF(current_setting('outflow.organization_id', true), '')::uuid $$;

CREATE TABLE users (
  id uuid PRIMARY KEY,
  email text NOT NULL CHECK (email = lower(email) AND length(email) BETWEEN 3 AND 320),
  password_hash text,
  first_name text NOT NULL DEFAULT '',
  last_name text NOT NULL DEFAULT '',
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX users_email_key ON users (email);

CREATE TABLE organizations (
  id uuid PRIMARY KEY,
  name text NOT NULL CHECK (length(name) BETWEEN 1 AND 255),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE memberships (
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  role text NOT NULL CHECK (role IN ('owner', 'admin', 'member')),
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (organization_id, user_id)
);
CREATE INDEX memberships_user_id ON memberships (user_id);

CREATE TABLE api_keys (
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  id uuid NOT NULL,
  user_id uuid REFERENCES users (id) ON DELETE SET NULL,
  name text NOT NULL CHECK (length(name) BETWEEN 1 AND 255),
  description text NOT NULL DEFAULT '',
  key_hash bytea NOT NULL,
  key_prefix text NOT NULL,
  key_suffix text NOT NULL,
  permissions bigint NOT NULL,
  status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'revoked')),
  revoked_at timestamptz,
  revoked_reason text,
  expires_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (organization_id, id)
);
CREATE UNIQUE INDEX api_keys_key_hash ON api_keys (key_hash);

CREATE TABLE idempotency_keys (
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  credential_id uuid NOT NULL,
  key text NOT NULL CHECK (length(key) BETWEEN 1 AND 255),
  request_hash bytea NOT NULL,
  state text NOT NULL CHECK (state IN ('in_progress', 'completed')),
  locked_until timestamptz NOT NULL,
  response_status integer,
  response_content_type text,
  response_body bytea,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL,
  PRIMARY KEY (organization_id, credential_id, key)
);
CREATE INDEX idempotency_keys_expires_at ON idempotency_keys (expires_at);

CREATE TABLE event_outbox (
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  id uuid NOT NULL,
  event_type text NOT NULL CHECK (length(event_type) BETWEEN 1 AND 100),
  data jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  dispatched_at timestamptz,
  PRIMARY KEY (organization_id, id)
);
-- Pending events stay few; the partial index keeps the sweep for stragglers cheap.
CREATE INDEX event_outbox_pending ON event_outbox (created_at) WHERE dispatched_at IS NULL;

CREATE TABLE audit_log (
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  id uuid NOT NULL,
  actor_type text NOT NULL CHECK (actor_type IN ('user', 'api_key', 'oauth_app', 'system')),
  actor_id uuid,
  action text NOT NULL CHECK (length(action) BETWEEN 1 AND 100),
  target_type text NOT NULL DEFAULT '',
  target_id text NOT NULL DEFAULT '',
  metadata jsonb NOT NULL DEFAULT '{}',
  ip_address text NOT NULL DEFAULT '',
  user_agent text NOT NULL DEFAULT '',
  request_id text NOT NULL DEFAULT '',
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (organization_id, id)
);
CREATE INDEX audit_log_created ON audit_log (organization_id, created_at DESC, id DESC);

-- Liveness marks written by periodic jobs; readiness reads them to know the scheduler and workers run.
CREATE TABLE system_heartbeats (
  name text PRIMARY KEY,
  beat_at timestamptz NOT NULL
);

ALTER TABLE organizations ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON organizations USING (id = current_org()) WITH CHECK (id = current_org());
ALTER TABLE memberships ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON memberships USING (organization_id = current_org()) WITH CHECK (organization_id = current_org());
ALTER TABLE api_keys ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON api_keys USING (organization_id = current_org()) WITH CHECK (organization_id = current_org());
ALTER TABLE idempotency_keys ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON idempotency_keys USING (organization_id = current_org()) WITH CHECK (organization_id = current_org());
ALTER TABLE event_outbox ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON event_outbox USING (organization_id = current_org()) WITH CHECK (organization_id = current_org());
ALTER TABLE audit_log ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON audit_log USING (organization_id = current_org()) WITH CHECK (organization_id = current_org());

-- auth_api_key_lookup is the one narrow cross-organization read that authentication needs: the organization
-- is not known until the key is found, and it is found by the hash of the presented secret alone.
CREATE FUNCTION auth_api_key_lookup(p_key_hash bytea) RETURNS SETOF api_keys
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, public
AS $$ SELECT * FROM api_keys WHERE key_hash = p_key_hash $$;

-- auth_user_memberships lists the memberships of a user across organizations: sign-in and the organization
-- switcher need them before any organization is selected.
CREATE FUNCTION auth_user_memberships(p_user_id uuid) RETURNS SETOF memberships
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, public
AS $$ SELECT * FROM memberships WHERE user_id = p_user_id ORDER BY created_at, organization_id $$;

-- idempotency_sweep removes expired idempotency records of every organization (a periodic job calls it).
CREATE FUNCTION idempotency_sweep() RETURNS bigint
LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, public
AS $$
  WITH gone AS (DELETE FROM idempotency_keys WHERE expires_at < now() RETURNING 1)
  SELECT count(*) FROM gone
$$;

REVOKE ALL ON FUNCTION auth_api_key_lookup(bytea) FROM PUBLIC;
REVOKE ALL ON FUNCTION idempotency_sweep() FROM PUBLIC;
REVOKE ALL ON FUNCTION auth_user_memberships(uuid) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION auth_user_memberships(uuid) TO outflow_app;
GRANT EXECUTE ON FUNCTION auth_api_key_lookup(bytea) TO outflow_app;
GRANT EXECUTE ON FUNCTION idempotency_sweep() TO outflow_app;

GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO outflow_app;
GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO outflow_app;
-- River creates its tables after this migration, as the same owner: the app role gets them too.
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO outflow_app;
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT USAGE, SELECT ON SEQUENCES TO outflow_app;
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT EXECUTE ON FUNCTIONS TO outflow_app;
-- The migration history belongs to the owner; the app role may read it (readiness) but never change it.
REVOKE INSERT, UPDATE, DELETE ON schema_migrations FROM outflow_app;
