-- +goose Up
-- The send pipeline: every message any sender (direct sends, unibox replies, campaigns, warmup) hands to a
-- mailbox is a send_tasks row written before the hand-off, worked by one River job. A task ends in exactly one
-- result: sent (with the wire Message-ID), failed (code and message), canceled, or ambiguous when a crash or a
-- cut connection leaves unknown whether the provider took it (never resent blindly).
ALTER TABLE send_tasks
  ADD COLUMN to_list text[] NOT NULL DEFAULT '{}' CHECK (cardinality(to_list) <= 50),
  ADD COLUMN cc text[] NOT NULL DEFAULT '{}' CHECK (cardinality(cc) <= 50),
  ADD COLUMN bcc text[] NOT NULL DEFAULT '{}' CHECK (cardinality(bcc) <= 50),
  ADD COLUMN reply_to text NOT NULL DEFAULT '' CHECK (length(reply_to) <= 320),
  ADD COLUMN in_reply_to text NOT NULL DEFAULT '' CHECK (length(in_reply_to) <= 998),
  ADD COLUMN thread_references text[] NOT NULL DEFAULT '{}' CHECK (cardinality(thread_references) <= 100),
  ADD COLUMN body_text text NOT NULL DEFAULT '' CHECK (length(body_text) <= 1000000),
  ADD COLUMN body_html text NOT NULL DEFAULT '' CHECK (length(body_html) <= 2000000),
  ADD COLUMN send_mode text NOT NULL DEFAULT 'instant' CHECK (send_mode IN ('instant', 'smart', 'scheduled')),
  -- Not handed over before this time (the undo window, a chosen time, or a gap the pipeline waits out).
  ADD COLUMN not_before timestamptz NOT NULL DEFAULT now(),
  -- Attempts made (a claim counts as one); the task fails for good after the fifth.
  ADD COLUMN attempts integer NOT NULL DEFAULT 0 CHECK (attempts BETWEEN 0 AND 100),
  -- When the current attempt claimed the task, and the mailbox-local day its daily counter was charged to.
  ADD COLUMN claimed_at timestamptz,
  ADD COLUMN counted_day date,
  ADD COLUMN failed_at timestamptz;
-- The tasks a mailbox still has to send (canceled with the mailbox; counted by the scheduler).
CREATE INDEX send_tasks_mailbox_pending ON send_tasks (organization_id, mailbox_id) WHERE status IN ('queued', 'sending');

-- Per-mailbox daily send counters, by the mailbox's local day: what campaign_limit is checked against. A
-- failed send is credited back.
CREATE TABLE mailbox_send_days (
  organization_id uuid NOT NULL,
  mailbox_id uuid NOT NULL,
  day date NOT NULL,
  capped integer NOT NULL DEFAULT 0 CHECK (capped >= 0),
  total integer NOT NULL DEFAULT 0 CHECK (total >= 0),
  PRIMARY KEY (organization_id, mailbox_id, day),
  FOREIGN KEY (organization_id, mailbox_id) REFERENCES mailboxes (organization_id, id) ON DELETE CASCADE
);
ALTER TABLE mailbox_send_days ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON mailbox_send_days USING (organization_id = current_org()) WITH CHECK (organization_id = current_org());
GRANT SELECT, INSERT, UPDATE, DELETE ON mailbox_send_days TO outflow_app;

-- When the mailbox last started a capped send: the minimum gap (min_wait_time) counts from here.
ALTER TABLE mailboxes ADD COLUMN last_capped_send_at timestamptz;
