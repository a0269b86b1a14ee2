-- +goose Up
-- The unified inbox's store, completed: a Drafts folder, the message fields the inbox shows (bcc, reply-to,
-- MODSEQ, Gmail's id, a snippet, whether the body was clipped, the auto-reply headers the reply classifier
-- reads, whether the mailbox itself wrote it), a pending IMAP move, the conversation a thread belongs to across
-- mailboxes, and one summary row per thread and folder that the list reads by keyset instead of scanning
-- messages. inbox_thread_refresh recomputes a set of threads' summaries from their messages; every path that
-- adds, flags, moves or deletes messages calls it after its batch, so the summaries never drift.
ALTER TABLE mailbox_folders DROP CONSTRAINT mailbox_folders_role_check,
  ADD CONSTRAINT mailbox_folders_role_check CHECK (role IN ('inbox', 'sent', 'drafts', 'spam', 'trash', 'archive'));

ALTER TABLE inbox_messages DROP CONSTRAINT inbox_messages_folder_role_check,
  ADD CONSTRAINT inbox_messages_folder_role_check CHECK (folder_role IN ('inbox', 'sent', 'drafts', 'spam', 'trash', 'archive')),
  ADD COLUMN bcc_list text[] NOT NULL DEFAULT '{}',
  ADD COLUMN reply_to_list text[] NOT NULL DEFAULT '{}',
  -- The message's MODSEQ (RFC 7162) when the server has CONDSTORE, else 0.
  ADD COLUMN mod_seq bigint NOT NULL DEFAULT 0 CHECK (mod_seq >= 0),
  -- Gmail's X-GM-MSGID when the server offers X-GM-EXT-1, else empty.
  ADD COLUMN gmail_id text NOT NULL DEFAULT '' CHECK (length(gmail_id) <= 32),
  -- The first characters of the new text (quotes and signature not removed), whitespace folded.
  ADD COLUMN snippet text NOT NULL DEFAULT '' CHECK (length(snippet) <= 200),
  -- True when body_text or body_html was clipped to the store's limit.
  ADD COLUMN body_truncated boolean NOT NULL DEFAULT false,
  -- The headers the reply classifier reads (Auto-Submitted, X-Autoreply, Precedence, List-Id, ...): an
  -- object of canonical header name to its values, captured at parse.
  ADD COLUMN auto_headers jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(auto_headers) = 'object'),
  -- True when the mailbox wrote it: stored from the Sent folder or From is the mailbox's own address.
  ADD COLUMN outbound boolean NOT NULL DEFAULT false,
  -- The folder a requested move is taking it to while the IMAP relay has not yet happened; folder and uid stay
  -- where the message still is on the server until the relay reports its new UID.
  ADD COLUMN move_to text NOT NULL DEFAULT '' CHECK (length(move_to) <= 500),
  ADD COLUMN updated_at timestamptz NOT NULL DEFAULT now();

ALTER TABLE inbox_threads
  -- The conversation's root Message-ID (the first References entry, else In-Reply-To, else its own), shared by
  -- the threads of the same conversation in different mailboxes.
  ADD COLUMN conversation_key text NOT NULL DEFAULT '' CHECK (length(conversation_key) <= 998),
  -- Unread messages outside spam and trash.
  ADD COLUMN unread_count integer NOT NULL DEFAULT 0 CHECK (unread_count >= 0),
  -- The newest message outside spam and trash, and whether the mailbox wrote it (the thread awaits a reply).
  ADD COLUMN newest_message_id uuid,
  ADD COLUMN awaiting_reply boolean NOT NULL DEFAULT false;
CREATE INDEX inbox_threads_conversation ON inbox_threads (organization_id, conversation_key) WHERE conversation_key <> '';

-- One row per thread and folder role it has messages in, plus the role 'all' (every folder but spam and
-- trash): the newest message there, how many and how many unread.
CREATE TABLE inbox_thread_folders (
  organization_id uuid NOT NULL,
  thread_id uuid NOT NULL,
  folder_role text NOT NULL CHECK (folder_role IN ('all', 'inbox', 'sent', 'drafts', 'spam', 'trash', 'archive')),
  mailbox_id uuid NOT NULL,
  last_message_at timestamptz NOT NULL,
  last_message_id uuid NOT NULL,
  total integer NOT NULL CHECK (total > 0),
  unread integer NOT NULL CHECK (unread >= 0),
  PRIMARY KEY (organization_id, thread_id, folder_role),
  FOREIGN KEY (organization_id, thread_id) REFERENCES inbox_threads (organization_id, id) ON DELETE CASCADE
);
CREATE INDEX inbox_thread_folders_list ON inbox_thread_folders (organization_id, folder_role, last_message_at DESC, thread_id DESC);
CREATE INDEX inbox_thread_folders_mailbox ON inbox_thread_folders (organization_id, mailbox_id, folder_role, last_message_at DESC, thread_id DESC);
CREATE INDEX inbox_thread_folders_unread ON inbox_thread_folders (organization_id, folder_role, last_message_at DESC, thread_id DESC) WHERE unread > 0;
ALTER TABLE inbox_thread_folders ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON inbox_thread_folders USING (organization_id = current_org()) WITH CHECK (organization_id = current_org());
GRANT SELECT, INSERT, UPDATE, DELETE ON inbox_thread_folders TO outflow_app;

-- inbox_thread_refresh recomputes the summaries (inbox_thread_folders and the thread's counters) of the given
-- threads of one organization from their messages. It runs as the caller, under row-level security.
-- +goose StatementBegin
CREATE FUNCTION inbox_thread_refresh(p_org uuid, p_threads uuid[]) RETURNS void
LANGUAGE sql SET search_path = pg_catalog, public
AS $$
  DELETE FROM inbox_thread_folders WHERE organization_id = p_org AND thread_id = ANY (p_threads);
  INSERT INTO inbox_thread_folders (organization_id, thread_id, folder_role, mailbox_id, last_message_at, last_message_id, total, unread)
  SELECT DISTINCT ON (m.thread_id, r.scope) p_org, m.thread_id, r.scope, m.mailbox_id, m.received_at, m.id,
    count(*) OVER w, count(*) FILTER (WHERE NOT m.seen) OVER w
  FROM inbox_messages m
  CROSS JOIN LATERAL (VALUES (m.folder_role), (CASE WHEN m.folder_role IN ('spam', 'trash') THEN NULL ELSE 'all' END)) r (scope)
  WHERE m.organization_id = p_org AND m.thread_id = ANY (p_threads) AND r.scope IS NOT NULL
  WINDOW w AS (PARTITION BY m.thread_id, r.scope)
  ORDER BY m.thread_id, r.scope, m.received_at DESC, m.id DESC;
  UPDATE inbox_threads t SET
    message_count = a.total,
    unread_count = a.unread,
    last_message_at = coalesce(a.last_at, t.last_message_at),
    newest_message_id = a.newest,
    awaiting_reply = coalesce(a.newest_outbound, false)
  FROM (
    SELECT u.id,
      (SELECT count(*) FROM inbox_messages m WHERE m.organization_id = p_org AND m.thread_id = u.id) AS total,
      coalesce(f.unread, 0) AS unread, f.last_message_at AS last_at, f.last_message_id AS newest,
      (SELECT m.outbound FROM inbox_messages m WHERE m.organization_id = p_org AND m.id = f.last_message_id) AS newest_outbound
    FROM unnest(p_threads) AS u (id)
    LEFT JOIN inbox_thread_folders f ON f.organization_id = p_org AND f.thread_id = u.id AND f.folder_role = 'all'
  ) a
  WHERE t.organization_id = p_org AND t.id = a.id;
$$;
-- +goose StatementEnd
GRANT EXECUTE ON FUNCTION inbox_thread_refresh(uuid, uuid[]) TO outflow_app;

-- Existing messages: their threads' summaries from what is stored, 500 threads at a time (the function is
-- made for a sync batch's few threads; one call over a large inbox's every thread would plan it badly).
SELECT inbox_thread_refresh(c.organization_id, c.threads)
FROM (
  SELECT organization_id, array_agg(id) AS threads
  FROM (SELECT organization_id, id, (row_number() OVER (PARTITION BY organization_id ORDER BY id) - 1) / 500 AS chunk FROM inbox_threads) t
  GROUP BY organization_id, chunk
) c;

-- +goose Down
DROP FUNCTION inbox_thread_refresh(uuid, uuid[]);
DROP TABLE inbox_thread_folders;
DROP INDEX inbox_threads_conversation;
ALTER TABLE inbox_threads DROP COLUMN awaiting_reply, DROP COLUMN newest_message_id, DROP COLUMN unread_count, DROP COLUMN conversation_key;
ALTER TABLE inbox_messages DROP COLUMN updated_at, DROP COLUMN move_to, DROP COLUMN outbound, DROP COLUMN auto_headers,
  DROP COLUMN body_truncated, DROP COLUMN snippet, DROP COLUMN gmail_id, DROP COLUMN mod_seq, DROP COLUMN reply_to_list,
  DROP COLUMN bcc_list;
