-- +goose Up
-- Social sign-in: the provider identities (Apple, Google, the deployment's OpenID Connect provider) that sign a
-- user in. An identity is the provider's stable subject, not the email: the address at the provider can change
-- while the identity keeps reaching the same account. Not a tenant table: an identity belongs to a user.

CREATE TABLE user_identities (
  provider text NOT NULL CHECK (provider IN ('apple', 'google', 'oidc')),
  subject text NOT NULL CHECK (length(subject) BETWEEN 1 AND 255),
  user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  -- The address the provider asserted at the last sign-in, kept for support and display only.
  email text NOT NULL DEFAULT '',
  created_at timestamptz NOT NULL DEFAULT now(),
  last_used_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (provider, subject)
);
CREATE INDEX user_identities_user_id ON user_identities (user_id);
