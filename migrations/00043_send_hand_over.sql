-- +goose Up
-- A send is handed over per message, and a send whose outcome is unknown is settled, not left to guess.
--
-- The claim reserves a task (status sending, its day charged) but only handed_over_at, written by the claiming
-- attempt just before its SMTP transaction, says the message may have left. A later attempt that finds a task
-- sending without it knows nothing left and sends it again; one with it marks the task ambiguous. An
-- ambiguous task is settled by searching the mailbox's Sent folder for its Message-ID (outcome_check
-- 'checking'): found, it is sent ('found_in_sent'); absent from a server that files sent mail itself, it is
-- sent again ('resent'); otherwise a person decides ('needs_decision', then 'resent' or 'skipped', with who
-- and when).
ALTER TABLE send_tasks
  ADD COLUMN handed_over_at timestamptz,
  ADD COLUMN outcome_check text NOT NULL DEFAULT ''
    CHECK (outcome_check IN ('', 'checking', 'needs_decision', 'found_in_sent', 'resent', 'skipped')),
  ADD COLUMN decided_by uuid,
  ADD COLUMN decided_at timestamptz,
  -- The copy of a sent message in the mailbox's Sent folder: '' none is owed (warmup, or a server that files
  -- sent mail itself), 'pending' owed, 'filed' there (appended, or found there).
  ADD COLUMN sent_copy text NOT NULL DEFAULT '' CHECK (sent_copy IN ('', 'pending', 'filed'));
-- The sends a person has to decide, per mailbox.
CREATE INDEX send_tasks_needs_decision ON send_tasks (organization_id, mailbox_id, id)
  WHERE outcome_check = 'needs_decision';

-- Whether the mailbox's server files a copy of what it sends in the Sent folder (Gmail and Microsoft 365 do,
-- most other hosts do not): learned from the first sent message looked for there, never from the domain.
ALTER TABLE mailboxes ADD COLUMN sent_copies text NOT NULL DEFAULT 'unknown'
  CHECK (sent_copies IN ('unknown', 'server', 'append'));

-- +goose Down
ALTER TABLE mailboxes DROP COLUMN sent_copies;
DROP INDEX send_tasks_needs_decision;
ALTER TABLE send_tasks DROP COLUMN sent_copy, DROP COLUMN decided_at, DROP COLUMN decided_by,
  DROP COLUMN outcome_check, DROP COLUMN handed_over_at;
