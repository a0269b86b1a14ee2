-- +goose Up
-- OAuth 2.1 for third-party apps: clients (apps registered from the dashboard by an organization, or by
-- themselves through RFC 7591), grants (an app's access to one organization, approved by one person), and the
-- token store of the fosite provider (authorization codes, access and refresh tokens, PKCE sessions). Only
-- token signatures are stored, client secrets are bcrypt hashes and app webhook secrets are sealed.

-- An OAuth client. organization_id is the organization that develops the app; clients that registered
-- themselves belong to no organization, so this is the one table whose tenant column may be NULL: its rows are
-- read across organizations only through oauth_client_lookup, and row-level security shows an organization
-- its own apps alone.
CREATE TABLE oauth_clients (
  id uuid PRIMARY KEY,
  organization_id uuid REFERENCES organizations (id) ON DELETE CASCADE,
  client_id text NOT NULL CHECK (length(client_id) BETWEEN 1 AND 100),
  client_type text NOT NULL CHECK (client_type IN ('confidential', 'public')),
  token_endpoint_auth_method text NOT NULL
    CHECK (token_endpoint_auth_method IN ('none', 'client_secret_basic', 'client_secret_post')),
  -- bcrypt, as fosite's default secret hasher compares; public clients have none.
  secret_hash bytea,
  name text NOT NULL CHECK (length(name) BETWEEN 1 AND 255),
  description text NOT NULL DEFAULT '' CHECK (length(description) <= 2000),
  logo text NOT NULL DEFAULT '' CHECK (length(logo) <= 2000),
  website text NOT NULL DEFAULT '' CHECK (length(website) <= 2000),
  policy_uri text NOT NULL DEFAULT '' CHECK (length(policy_uri) <= 2000),
  tos_uri text NOT NULL DEFAULT '' CHECK (length(tos_uri) <= 2000),
  contacts text[] NOT NULL DEFAULT '{}' CHECK (cardinality(contacts) <= 20),
  software_id text NOT NULL DEFAULT '' CHECK (length(software_id) <= 255),
  software_version text NOT NULL DEFAULT '' CHECK (length(software_version) <= 255),
  redirect_uris text[] NOT NULL CHECK (cardinality(redirect_uris) BETWEEN 1 AND 20),
  grant_types text[] NOT NULL,
  -- An auth.Permission bitmask: the scopes the app may request.
  scopes bigint NOT NULL CHECK (scopes >= 0),
  allowed_webhook_domains text[] NOT NULL DEFAULT '{}' CHECK (cardinality(allowed_webhook_domains) <= 50),
  webhook_url text NOT NULL DEFAULT '' CHECK (length(webhook_url) <= 2000),
  webhook_events text[] NOT NULL DEFAULT '{}',
  -- Sealed with the keyring; self-registered clients have no app webhooks and so no secret.
  webhook_secret_sealed bytea,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CHECK ((client_type = 'public') = (token_endpoint_auth_method = 'none')),
  CHECK ((client_type = 'public') = (secret_hash IS NULL)),
  CHECK (organization_id IS NOT NULL OR webhook_url = '')
);
CREATE UNIQUE INDEX oauth_clients_client_id ON oauth_clients (client_id);
-- Dashboard lists are newest first with an id tie-break.
CREATE INDEX oauth_clients_newest ON oauth_clients (organization_id, created_at DESC, id DESC);

-- An app's access to one organization, approved on the consent page by one person who may manage API keys
-- there. Approving again replaces the live grant. Tokens act with the grant's scopes, narrowed by the app's
-- current scopes.
CREATE TABLE oauth_grants (
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  id uuid NOT NULL,
  client_id uuid NOT NULL REFERENCES oauth_clients (id) ON DELETE CASCADE,
  user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  scopes bigint NOT NULL CHECK (scopes >= 0),
  created_at timestamptz NOT NULL DEFAULT now(),
  revoked_at timestamptz,
  revoked_reason text,
  PRIMARY KEY (organization_id, id)
);
CREATE UNIQUE INDEX oauth_grants_live ON oauth_grants (organization_id, client_id) WHERE revoked_at IS NULL;
CREATE INDEX oauth_grants_client ON oauth_grants (client_id);

-- The fosite token store: one row per authorization code, access token, refresh token or PKCE session, keyed
-- by kind and the token's HMAC signature (the token itself is never stored; a PKCE session shares the
-- signature of its code). request is the serialized fosite request
-- (client, scopes, sanitized form, session). fosite's request id is the grant id, so revoking "every token of
-- a request" is revoking the grant. active turns false when a code is redeemed or a refresh token rotated;
-- fosite needs those rows back to detect replay.
CREATE TABLE oauth_tokens (
  organization_id uuid NOT NULL,
  signature text NOT NULL CHECK (length(signature) BETWEEN 1 AND 200),
  kind text NOT NULL CHECK (kind IN ('authorize_code', 'access_token', 'refresh_token', 'pkce')),
  grant_id uuid NOT NULL,
  -- The scopes granted to this token (an auth.Permission bitmask), for the access-token check.
  scopes bigint NOT NULL CHECK (scopes >= 0),
  request jsonb NOT NULL,
  active boolean NOT NULL DEFAULT true,
  expires_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (organization_id, kind, signature),
  FOREIGN KEY (organization_id, grant_id) REFERENCES oauth_grants (organization_id, id) ON DELETE CASCADE
);
CREATE UNIQUE INDEX oauth_tokens_signature ON oauth_tokens (kind, signature);
CREATE INDEX oauth_tokens_grant ON oauth_tokens (organization_id, grant_id, kind);
CREATE INDEX oauth_tokens_expires_at ON oauth_tokens (expires_at);

ALTER TABLE oauth_clients ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON oauth_clients USING (organization_id = current_org()) WITH CHECK (organization_id = current_org());
-- Dynamic registration (RFC 7591) is open to anyone and creates a client of no organization: the application
-- role may insert exactly such rows, and still reads none of them.
CREATE POLICY self_registration ON oauth_clients FOR INSERT WITH CHECK (organization_id IS NULL);
ALTER TABLE oauth_grants ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON oauth_grants USING (organization_id = current_org()) WITH CHECK (organization_id = current_org());
ALTER TABLE oauth_tokens ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON oauth_tokens USING (organization_id = current_org()) WITH CHECK (organization_id = current_org());
GRANT SELECT, INSERT, UPDATE, DELETE ON oauth_clients, oauth_grants, oauth_tokens TO outflow_app;

-- oauth_client_lookup finds a client by its public client_id: the authorization and token endpoints know no
-- organization (and self-registered clients have none).
CREATE FUNCTION oauth_client_lookup(p_client_id text) RETURNS SETOF oauth_clients
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, public
AS $$ SELECT * FROM oauth_clients WHERE client_id = p_client_id $$;

-- oauth_token_lookup finds a code, token or PKCE session by its signature: the token endpoint learns the
-- organization from the row it finds. Every change to the row is then made inside that organization.
CREATE FUNCTION oauth_token_lookup(p_kind text, p_signature text) RETURNS SETOF oauth_tokens
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, public
AS $$ SELECT * FROM oauth_tokens WHERE kind = p_kind AND signature = p_signature $$;

-- oauth_grant_organization names the organization of a grant (fosite revokes and rotates by request id, which
-- is the grant id).
CREATE FUNCTION oauth_grant_organization(p_grant_id uuid) RETURNS uuid
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, public
AS $$ SELECT organization_id FROM oauth_grants WHERE id = p_grant_id $$;

-- auth_oauth_access_token resolves a presented access token for authentication, in one read: the token must be
-- active, its grant live, and the person who approved it still a member of the organization. The scopes are the
-- token's, narrowed by the grant's and the app's current ones.
-- +goose StatementBegin
CREATE FUNCTION auth_oauth_access_token(p_signature text)
RETURNS TABLE (organization_id uuid, grant_id uuid, user_id uuid, client_id text, scopes bigint, expires_at timestamptz)
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, public
-- PL/pgSQL keeps the plan for the connection (a SQL function of this kind is planned again on every call).
AS $$
#variable_conflict use_column
BEGIN
  RETURN QUERY
  SELECT t.organization_id, t.grant_id, g.user_id, c.client_id, t.scopes & g.scopes & c.scopes, t.expires_at
  FROM oauth_tokens t
  JOIN oauth_grants g ON g.organization_id = t.organization_id AND g.id = t.grant_id
  JOIN oauth_clients c ON c.id = g.client_id
  JOIN memberships m ON m.organization_id = g.organization_id AND m.user_id = g.user_id
  WHERE t.kind = 'access_token' AND t.signature = p_signature AND t.active AND g.revoked_at IS NULL;
END
$$;
-- +goose StatementEnd

-- oauth_token_sweep removes codes, tokens and PKCE sessions past their expiry in every organization (a periodic
-- job calls it); a rotated refresh token is kept until it expires, for reuse detection.
CREATE FUNCTION oauth_token_sweep(p_before timestamptz) RETURNS bigint
LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, public
AS $$
  WITH gone AS (DELETE FROM oauth_tokens WHERE expires_at < p_before RETURNING 1)
  SELECT count(*) FROM gone
$$;

REVOKE ALL ON FUNCTION oauth_client_lookup(text) FROM PUBLIC;
REVOKE ALL ON FUNCTION oauth_token_lookup(text, text) FROM PUBLIC;
REVOKE ALL ON FUNCTION oauth_grant_organization(uuid) FROM PUBLIC;
REVOKE ALL ON FUNCTION auth_oauth_access_token(text) FROM PUBLIC;
REVOKE ALL ON FUNCTION oauth_token_sweep(timestamptz) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION oauth_client_lookup(text) TO outflow_app;
GRANT EXECUTE ON FUNCTION oauth_token_lookup(text, text) TO outflow_app;
GRANT EXECUTE ON FUNCTION oauth_grant_organization(uuid) TO outflow_app;
GRANT EXECUTE ON FUNCTION auth_oauth_access_token(text) TO outflow_app;
GRANT EXECUTE ON FUNCTION oauth_token_sweep(timestamptz) TO outflow_app;
