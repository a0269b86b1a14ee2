-- +goose Up
-- Passkeys (WebAuthn credentials). Not tenant tables: a passkey belongs to a user, not an organization. Both
-- tables are partitioned by the relying party id (the host of the app URL), so moving the deployment to a new
-- host leaves old credentials unusable instead of half-valid.

-- The WebAuthn user handle: an opaque random value per user and relying party, stable for the life of the
-- account, and what an authenticator hands back in a usernameless sign-in to name the account.
CREATE TABLE webauthn_users (
  rp_id text NOT NULL,
  user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  handle bytea NOT NULL CHECK (length(handle) BETWEEN 16 AND 64),
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (rp_id, user_id)
);
CREATE UNIQUE INDEX webauthn_users_handle ON webauthn_users (rp_id, handle);

-- One row per registered passkey. The public key is sealed (context "passkey:<id>"), so a row written by
-- someone holding only database access cannot sign anyone in. sign_count, clone_warning, flags and last_used_at
-- change on every sign-in.
CREATE TABLE passkey_credentials (
  id uuid PRIMARY KEY,
  user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  rp_id text NOT NULL,
  credential_id bytea NOT NULL CHECK (length(credential_id) BETWEEN 1 AND 1023),
  name text NOT NULL CHECK (length(name) BETWEEN 1 AND 255),
  -- Display name of the passkey provider, from the authenticator's AAGUID; empty when unknown.
  provider text NOT NULL DEFAULT '',
  aaguid uuid,
  public_key_sealed bytea NOT NULL,
  attestation_type text NOT NULL DEFAULT '',
  attestation_format text NOT NULL DEFAULT '',
  transports text[] NOT NULL DEFAULT '{}',
  attachment text NOT NULL DEFAULT '',
  sign_count bigint NOT NULL DEFAULT 0,
  clone_warning boolean NOT NULL DEFAULT false,
  -- The authenticator data flags octet (user present/verified, backup eligible/state) as last recorded.
  flags smallint NOT NULL CHECK (flags BETWEEN 0 AND 255),
  -- The raw attestation (client data, authenticator data, attestation object), kept so the credential can be
  -- checked against authenticator metadata later.
  attestation jsonb NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL DEFAULT now(),
  last_used_at timestamptz
);
CREATE UNIQUE INDEX passkey_credentials_credential_id ON passkey_credentials (rp_id, credential_id);
CREATE INDEX passkey_credentials_user_id ON passkey_credentials (user_id, rp_id);
