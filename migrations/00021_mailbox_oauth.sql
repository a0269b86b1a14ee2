-- +goose Up
-- Google and Microsoft mailboxes connect through the provider's consent screen. A consent session is opened by
-- cli-start and polled by the caller; the browser comes back to a public callback that knows the session only
-- by its state, whose SHA-256 is stored (the state itself travels through the browser). The PKCE verifier is
-- sealed. Sessions live ten minutes.
CREATE TABLE mailbox_oauth_sessions (
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  id uuid NOT NULL,
  -- Who opened it (a person, or the person behind the API key); the mailbox is theirs.
  user_id uuid REFERENCES users (id) ON DELETE SET NULL,
  provider text NOT NULL CHECK (provider IN ('gmail', 'outlook')),
  state_hash bytea NOT NULL UNIQUE CHECK (length(state_hash) = 32),
  verifier_sealed bytea NOT NULL,
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'done', 'failed')),
  mailbox_id uuid,
  error_code text NOT NULL DEFAULT '' CHECK (length(error_code) <= 100),
  error_message text NOT NULL DEFAULT '' CHECK (length(error_message) <= 1000),
  error_fix text NOT NULL DEFAULT '' CHECK (length(error_fix) <= 1000),
  -- When the browser came back with an answer: a state is answered once.
  answered_at timestamptz,
  expires_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (organization_id, id)
);
CREATE INDEX mailbox_oauth_sessions_expires_at ON mailbox_oauth_sessions (organization_id, expires_at);

ALTER TABLE mailbox_oauth_sessions ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON mailbox_oauth_sessions USING (organization_id = current_org()) WITH CHECK (organization_id = current_org());
GRANT SELECT, INSERT, UPDATE, DELETE ON mailbox_oauth_sessions TO outflow_app;

-- mailbox_oauth_session_by_state names the organization and session a consent callback belongs to: the
-- callback is public and carries nothing but the state. Everything after runs inside that organization.
-- +goose StatementBegin
CREATE FUNCTION mailbox_oauth_session_by_state(p_state_hash bytea)
RETURNS TABLE (organization_id uuid, id uuid)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, public
AS $$ SELECT organization_id, id FROM mailbox_oauth_sessions WHERE state_hash = p_state_hash $$;
-- +goose StatementEnd
REVOKE ALL ON FUNCTION mailbox_oauth_session_by_state(bytea) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION mailbox_oauth_session_by_state(bytea) TO outflow_app;

-- An OAuth mailbox's tokens: the refresh token and the current access token, both sealed and bound to the
-- mailbox. A separate row so a refresh (hourly) leaves the mailbox row, and the pooled SMTP sessions keyed to
-- its updated_at, alone.
CREATE TABLE mailbox_oauth_tokens (
  organization_id uuid NOT NULL,
  mailbox_id uuid NOT NULL,
  refresh_sealed bytea NOT NULL,
  access_sealed bytea NOT NULL,
  expires_at timestamptz NOT NULL,
  refreshed_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (organization_id, mailbox_id),
  FOREIGN KEY (organization_id, mailbox_id) REFERENCES mailboxes (organization_id, id) ON DELETE CASCADE
);
ALTER TABLE mailbox_oauth_tokens ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON mailbox_oauth_tokens USING (organization_id = current_org()) WITH CHECK (organization_id = current_org());
GRANT SELECT, INSERT, UPDATE, DELETE ON mailbox_oauth_tokens TO outflow_app;

