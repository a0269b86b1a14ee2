-- +goose Up
-- What people do to the inbox beyond the server's flags: a snooze per user and thread (the thread leaves that
-- user's list until snoozed_until), the categories put on a thread (the organization's labels of kind
-- category), the organization's undo window for instant replies and composed mail, and the thread a reply or
-- composed message belongs to so the scheduled list can show and filter it.
CREATE TABLE inbox_snoozes (
  organization_id uuid NOT NULL,
  id uuid NOT NULL,
  user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  thread_id uuid NOT NULL,
  snoozed_until timestamptz NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (organization_id, id),
  UNIQUE (organization_id, user_id, thread_id),
  FOREIGN KEY (organization_id, thread_id) REFERENCES inbox_threads (organization_id, id) ON DELETE CASCADE
);
CREATE INDEX inbox_snoozes_due ON inbox_snoozes (organization_id, user_id, snoozed_until);

CREATE TABLE inbox_thread_labels (
  organization_id uuid NOT NULL,
  thread_id uuid NOT NULL,
  label_id uuid NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (organization_id, thread_id, label_id),
  FOREIGN KEY (organization_id, thread_id) REFERENCES inbox_threads (organization_id, id) ON DELETE CASCADE,
  FOREIGN KEY (organization_id, label_id) REFERENCES labels (organization_id, id) ON DELETE CASCADE
);
CREATE INDEX inbox_thread_labels_label ON inbox_thread_labels (organization_id, label_id, thread_id);

ALTER TABLE inbox_snoozes ENABLE ROW LEVEL SECURITY;
ALTER TABLE inbox_thread_labels ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON inbox_snoozes USING (organization_id = current_org()) WITH CHECK (organization_id = current_org());
CREATE POLICY tenant_isolation ON inbox_thread_labels USING (organization_id = current_org()) WITH CHECK (organization_id = current_org());
GRANT SELECT, INSERT, UPDATE, DELETE ON inbox_snoozes, inbox_thread_labels TO outflow_app;

-- Seconds an instant reply or composed message waits before it leaves, so it can still be cancelled.
ALTER TABLE organizations ADD COLUMN reply_undo_seconds integer NOT NULL DEFAULT 30 CHECK (reply_undo_seconds BETWEEN 5 AND 120);

ALTER TABLE send_tasks ADD COLUMN thread_id uuid;
-- The mail sync finds the thread of a reply or composed message by its Message-ID when its copy or an answer arrives.
CREATE INDEX send_tasks_thread_message ON send_tasks (organization_id, mailbox_id, message_id) WHERE thread_id IS NOT NULL;
CREATE INDEX send_tasks_inbox_pending ON send_tasks (organization_id, not_before)
  WHERE status = 'queued' AND kind IN ('reply', 'direct');

-- +goose Down
DROP INDEX send_tasks_inbox_pending;
DROP INDEX send_tasks_thread_message;
ALTER TABLE send_tasks DROP COLUMN thread_id;
ALTER TABLE organizations DROP COLUMN reply_undo_seconds;
DROP TABLE inbox_thread_labels;
DROP TABLE inbox_snoozes;
