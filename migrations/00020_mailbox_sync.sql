-- +goose Up
-- IMAP sync: one row of state per mailbox (the lease that makes one process at a time sync it, and the
-- backfill progress GET /emails/{id}/sync reports), one row per synced folder (its UIDVALIDITY, the last UID
-- stored and the highest MODSEQ seen), and the thread-aware message store the unified inbox reads.
CREATE TABLE mailbox_sync (
  organization_id uuid NOT NULL,
  mailbox_id uuid NOT NULL,
  -- The process holding the sync and until when; a holder that stops renewing loses it to the next one.
  lease_owner uuid,
  lease_until timestamptz,
  backfill_status text NOT NULL DEFAULT 'pending' CHECK (backfill_status IN ('pending', 'running', 'complete')),
  backfill_synced integer NOT NULL DEFAULT 0 CHECK (backfill_synced >= 0),
  backfill_since timestamptz,
  backfill_started_at timestamptz,
  backfill_completed_at timestamptz,
  throttled_until timestamptz,
  throttle_reason text NOT NULL DEFAULT '' CHECK (throttle_reason IN ('', 'burst', 'hourly', 'daily', 'org_daily', 'priority_daily')),
  deferred integer NOT NULL DEFAULT 0 CHECK (deferred >= 0),
  last_synced_at timestamptz,
  last_error text NOT NULL DEFAULT '' CHECK (length(last_error) <= 1000),
  reported_at timestamptz,
  PRIMARY KEY (organization_id, mailbox_id),
  FOREIGN KEY (organization_id, mailbox_id) REFERENCES mailboxes (organization_id, id) ON DELETE CASCADE
);

CREATE TABLE mailbox_folders (
  organization_id uuid NOT NULL,
  mailbox_id uuid NOT NULL,
  name text NOT NULL CHECK (length(name) BETWEEN 1 AND 500),
  -- What the folder is for: inbox, sent, spam, trash or archive.
  role text NOT NULL CHECK (role IN ('inbox', 'sent', 'spam', 'trash', 'archive')),
  uid_validity bigint NOT NULL DEFAULT 0,
  last_uid bigint NOT NULL DEFAULT 0,
  highest_modseq bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (organization_id, mailbox_id, name),
  FOREIGN KEY (organization_id, mailbox_id) REFERENCES mailboxes (organization_id, id) ON DELETE CASCADE
);

CREATE TABLE inbox_threads (
  organization_id uuid NOT NULL,
  id uuid NOT NULL,
  mailbox_id uuid NOT NULL,
  subject text NOT NULL DEFAULT '' CHECK (length(subject) <= 998),
  -- The provider's own thread id when it has one (Gmail's X-GM-THRID).
  provider_thread_id text NOT NULL DEFAULT '',
  message_count integer NOT NULL DEFAULT 0 CHECK (message_count >= 0),
  last_message_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (organization_id, id),
  FOREIGN KEY (organization_id, mailbox_id) REFERENCES mailboxes (organization_id, id) ON DELETE CASCADE
);
CREATE INDEX inbox_threads_latest ON inbox_threads (organization_id, last_message_at DESC, id DESC);
CREATE INDEX inbox_threads_mailbox ON inbox_threads (organization_id, mailbox_id, last_message_at DESC);

CREATE TABLE inbox_messages (
  organization_id uuid NOT NULL,
  id uuid NOT NULL,
  mailbox_id uuid NOT NULL,
  thread_id uuid NOT NULL,
  folder text NOT NULL,
  folder_role text NOT NULL CHECK (folder_role IN ('inbox', 'sent', 'spam', 'trash', 'archive')),
  uid_validity bigint NOT NULL,
  uid bigint NOT NULL,
  -- Message-ID, In-Reply-To and References as written (angle brackets kept), for threading and reply matching.
  message_id text NOT NULL DEFAULT '' CHECK (length(message_id) <= 998),
  in_reply_to text NOT NULL DEFAULT '' CHECK (length(in_reply_to) <= 998),
  thread_references text[] NOT NULL DEFAULT '{}',
  from_email text NOT NULL DEFAULT '',
  from_name text NOT NULL DEFAULT '',
  to_list text[] NOT NULL DEFAULT '{}',
  cc_list text[] NOT NULL DEFAULT '{}',
  subject text NOT NULL DEFAULT '',
  body_text text NOT NULL DEFAULT '',
  body_html text NOT NULL DEFAULT '',
  flags text[] NOT NULL DEFAULT '{}',
  seen boolean NOT NULL DEFAULT false,
  size integer NOT NULL DEFAULT 0,
  sent_at timestamptz,
  received_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (organization_id, id),
  FOREIGN KEY (organization_id, thread_id) REFERENCES inbox_threads (organization_id, id) ON DELETE CASCADE,
  FOREIGN KEY (organization_id, mailbox_id) REFERENCES mailboxes (organization_id, id) ON DELETE CASCADE
);
-- One row per message of a folder generation: a re-fetch after a crash stores nothing twice.
CREATE UNIQUE INDEX inbox_messages_uid ON inbox_messages (organization_id, mailbox_id, folder, uid_validity, uid);
CREATE INDEX inbox_messages_message_id ON inbox_messages (organization_id, mailbox_id, message_id) WHERE message_id <> '';
CREATE INDEX inbox_messages_references ON inbox_messages USING gin (thread_references);
CREATE INDEX inbox_messages_thread ON inbox_messages (organization_id, thread_id, received_at);

ALTER TABLE mailbox_sync ENABLE ROW LEVEL SECURITY;
ALTER TABLE mailbox_folders ENABLE ROW LEVEL SECURITY;
ALTER TABLE inbox_threads ENABLE ROW LEVEL SECURITY;
ALTER TABLE inbox_messages ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON mailbox_sync USING (organization_id = current_org()) WITH CHECK (organization_id = current_org());
CREATE POLICY tenant_isolation ON mailbox_folders USING (organization_id = current_org()) WITH CHECK (organization_id = current_org());
CREATE POLICY tenant_isolation ON inbox_threads USING (organization_id = current_org()) WITH CHECK (organization_id = current_org());
CREATE POLICY tenant_isolation ON inbox_messages USING (organization_id = current_org()) WITH CHECK (organization_id = current_org());
GRANT SELECT, INSERT, UPDATE, DELETE ON mailbox_sync, mailbox_folders, inbox_threads, inbox_messages TO outflow_app;

-- mailbox_sync_unleased lists, across organizations, active SMTP/IMAP mailboxes whose sync no live process
-- holds: the supervisor enqueues a sync job for each (River's uniqueness keeps one per mailbox).
-- +goose StatementBegin
CREATE FUNCTION mailbox_sync_unleased(p_now timestamptz, p_limit integer)
RETURNS TABLE (organization_id uuid, id uuid)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, public
AS $$
  SELECT m.organization_id, m.id FROM mailboxes m
  LEFT JOIN mailbox_sync s ON s.organization_id = m.organization_id AND s.mailbox_id = m.id
  WHERE m.status = 'active' AND m.imap_host <> '' AND (s.lease_until IS NULL OR s.lease_until < p_now)
  ORDER BY s.lease_until NULLS FIRST
  LIMIT p_limit
$$;
-- +goose StatementEnd
REVOKE ALL ON FUNCTION mailbox_sync_unleased(timestamptz, integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION mailbox_sync_unleased(timestamptz, integer) TO outflow_app;
