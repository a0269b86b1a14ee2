-- +goose Up
-- Accounts and sessions: profile fields, signing keys, sessions with rotating refresh tokens, the short-lived
-- challenges behind every multi-step flow (email codes, 2FA, social handoffs, passkey ceremonies) and the
-- counters behind abuse limits. None of these is a tenant table: they belong to a user, not an organization.

ALTER TABLE users
  ADD COLUMN avatar_url text NOT NULL DEFAULT '',
  ADD COLUMN referral_source text NOT NULL DEFAULT '',
  ADD COLUMN onboarding_completed_at timestamptz,
  ADD COLUMN email_verified_at timestamptz,
  ADD COLUMN max_organizations integer NOT NULL DEFAULT 10,
  ADD COLUMN free_trial_used boolean NOT NULL DEFAULT false,
  ADD COLUMN admin_permissions bigint NOT NULL DEFAULT 0,
  ADD COLUMN last_organization_id uuid REFERENCES organizations (id) ON DELETE SET NULL;

-- Keys that sign session access tokens (ES256). The private key is sealed; a key signs until retires_at and
-- verifies until every token it signed has expired, so rotation logs nobody out.
CREATE TABLE signing_keys (
  kid text PRIMARY KEY,
  private_key_sealed bytea NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  retires_at timestamptz NOT NULL
);

CREATE TABLE sessions (
  id uuid PRIMARY KEY,
  user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  organization_id uuid REFERENCES organizations (id) ON DELETE SET NULL,
  auth_provider text NOT NULL DEFAULT 'password',
  browser text NOT NULL DEFAULT '',
  os text NOT NULL DEFAULT '',
  location_city text NOT NULL DEFAULT '',
  location_region text NOT NULL DEFAULT '',
  location_country text NOT NULL DEFAULT '',
  country_code text NOT NULL DEFAULT '',
  ip_address text NOT NULL DEFAULT '',
  refresh_expires_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  last_active_at timestamptz NOT NULL DEFAULT now(),
  revoked_at timestamptz,
  revoked_reason text
);
CREATE INDEX sessions_user_id ON sessions (user_id) WHERE revoked_at IS NULL;

-- Every refresh token a session was ever given. Presenting one that was already rotated is reuse: the whole
-- session (the token family) is revoked.
CREATE TABLE session_refresh_tokens (
  token_hash bytea PRIMARY KEY,
  session_id uuid NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
  created_at timestamptz NOT NULL DEFAULT now(),
  rotated_at timestamptz
);
CREATE INDEX session_refresh_tokens_session_id ON session_refresh_tokens (session_id);

-- Short-lived, single-use steps of the sign-in flows. Handles given to clients are the id plus an HMAC; codes
-- are stored as HMACs and tried a bounded number of times.
CREATE TABLE auth_challenges (
  id uuid PRIMARY KEY,
  kind text NOT NULL CHECK (kind IN ('login', 'register', 'reset', 'two_fa', 'sso_handoff', 'sso_state',
                                     'passkey_register', 'passkey_login')),
  user_id uuid REFERENCES users (id) ON DELETE CASCADE,
  email text NOT NULL DEFAULT '',
  code_hash bytea,
  payload jsonb NOT NULL DEFAULT '{}',
  attempts integer NOT NULL DEFAULT 0,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL,
  consumed_at timestamptz
);
CREATE INDEX auth_challenges_expires_at ON auth_challenges (expires_at);

-- Fixed-window counters for abuse limits (per account, per source IP), shared by every API process.
CREATE TABLE rate_limit_counters (
  key text NOT NULL,
  window_start timestamptz NOT NULL,
  hits integer NOT NULL,
  PRIMARY KEY (key, window_start)
);
CREATE INDEX rate_limit_counters_window_start ON rate_limit_counters (window_start);

-- Two-factor authentication: a sealed TOTP secret (enabled once confirmed), the last time step used (codes are
-- single-use within their step) and hashed single-use recovery codes.
CREATE TABLE user_two_factor (
  user_id uuid PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
  secret_sealed bytea NOT NULL,
  enabled_at timestamptz,
  last_used_step bigint NOT NULL DEFAULT 0,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE user_recovery_codes (
  user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  code_hash bytea NOT NULL,
  used_at timestamptz,
  PRIMARY KEY (user_id, code_hash)
);

-- Every new organization starts on a trial.
ALTER TABLE organizations ADD COLUMN trial_ends_at timestamptz;
