-- +goose Up
-- Profile and notifications: the onboarding survey, notification preferences, the in-app feed, push device
-- tokens and the queue behind email and push batching. None of these is a tenant table: they belong to a user,
-- and the feed spans every organization the user is in plus account-level items (new sign-ins), so a
-- per-organization policy would hide half of it. organization_id, where present, says where an event happened.

ALTER TABLE users
  ADD COLUMN onboarding_role text NOT NULL DEFAULT '',
  ADD COLUMN onboarding_team_size text NOT NULL DEFAULT '';

-- Only the categories a user chose are stored: the others follow the defaults, which may improve over time.
CREATE TABLE notification_preferences (
  user_id uuid PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
  categories jsonb NOT NULL DEFAULT '{}',
  email_digest_minutes integer NOT NULL DEFAULT 30 CHECK (email_digest_minutes BETWEEN 30 AND 1440),
  updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE notifications (
  id uuid PRIMARY KEY,
  user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  organization_id uuid REFERENCES organizations (id) ON DELETE CASCADE,
  category text NOT NULL CHECK (length(category) BETWEEN 1 AND 50),
  title text NOT NULL CHECK (length(title) BETWEEN 1 AND 200),
  body text NOT NULL DEFAULT '',
  link text NOT NULL DEFAULT '',
  read_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX notifications_user_created ON notifications (user_id, created_at DESC, id DESC);
-- The unread count is read on every feed request; unread rows are the few.
CREATE INDEX notifications_user_unread ON notifications (user_id, created_at DESC, id DESC) WHERE read_at IS NULL;

-- A device token belongs to one account at a time: registering it from another account moves it.
CREATE TABLE device_tokens (
  token text PRIMARY KEY CHECK (token ~ '^[0-9a-f]{1,200}$'),
  user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  platform text NOT NULL DEFAULT 'ios' CHECK (platform IN ('ios')),
  environment text NOT NULL DEFAULT 'production' CHECK (environment IN ('production', 'development')),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX device_tokens_user_id ON device_tokens (user_id);

-- When each user's email and push channel last sent (or will send) a message: at most one message per window,
-- the first of a quiet stretch at once, later ones bundled into one summary at the window's end.
CREATE TABLE notification_channel_windows (
  user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  channel text NOT NULL CHECK (channel IN ('email', 'push')),
  last_due_at timestamptz NOT NULL,
  PRIMARY KEY (user_id, channel)
);

-- Email and push messages waiting for their send time; sending one deletes it. The content is copied because
-- the in-app channel (and with it the feed row) may be off.
CREATE TABLE notification_deliveries (
  id uuid PRIMARY KEY,
  user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  channel text NOT NULL CHECK (channel IN ('email', 'push')),
  organization_id uuid REFERENCES organizations (id) ON DELETE CASCADE,
  category text NOT NULL,
  title text NOT NULL,
  body text NOT NULL DEFAULT '',
  link text NOT NULL DEFAULT '',
  due_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX notification_deliveries_due ON notification_deliveries (user_id, channel, due_at);
