-- name: SendTaskInsert :batchone
-- One round trip for any number of tasks (a campaign step enqueues its sends together).
INSERT INTO send_tasks (organization_id, id, kind, mailbox_id, from_email, from_name, contact_id, to_email, to_list,
  cc, bcc, reply_to, in_reply_to, thread_references, campaign_id, step_id, step_name, subject, body_text, body_html,
  message_id, send_mode, not_before, attachment_ids, signed, variant_id, unsubscribe_url, thread_id)
VALUES (@organization_id, @id, @kind, @mailbox_id, @from_email, @from_name, sqlc.narg(contact_id), @to_email,
  @to_list::text[], @cc::text[], @bcc::text[], @reply_to, @in_reply_to, @thread_references::text[],
  sqlc.narg(campaign_id), sqlc.narg(step_id), @step_name, @subject, @body_text, @body_html, @message_id, @send_mode,
  @not_before, @attachment_ids::uuid[], @signed, sqlc.narg(variant_id), @unsubscribe_url, sqlc.narg(thread_id))
RETURNING *;

-- name: SendTaskAttachments :many
-- The files a task carries, in the order they were attached (a file deleted since is left out).
SELECT filename, mime_type, content FROM campaign_attachments
WHERE organization_id = @organization_id AND id = ANY(@ids::uuid[])
ORDER BY created_at, id;

-- name: SendTaskGet :one
SELECT * FROM send_tasks WHERE organization_id = $1 AND id = $2;

-- name: SendTaskGetForUpdate :one
SELECT * FROM send_tasks WHERE organization_id = $1 AND id = $2 FOR UPDATE;

-- name: SendTasksLoadForClaim :many
-- Tasks by id, each with the mailbox, all locked: the mailbox lock makes claims on one mailbox take turns.
-- The tasks are not joined to the mailbox on mailbox_id, so the plan reads them by primary key even when the
-- statistics still miss a burst of new tasks (joined, it would walk the mailbox's every task); the caller
-- checks that each task is the mailbox's.
SELECT sqlc.embed(t), sqlc.embed(m) FROM send_tasks t, mailboxes m
WHERE t.organization_id = @organization_id AND t.id = ANY(@ids::uuid[])
  AND m.organization_id = @organization_id AND m.id = @mailbox_id
ORDER BY t.id
FOR UPDATE OF t, m;

-- name: SendTasksClaim :many
-- The attempts start for the tasks that fit the mailbox's day, taken in the order given: an uncapped task
-- always fits, a capped one while the day's capped count stays within campaign_limit; the others get no row.
-- The day is charged (capped counts toward campaign_limit; a capped send also restarts the gap) and the
-- tasks are in flight until their results are written. A task found in flight by a later attempt was cut
-- short by a crash.
WITH want AS (
  SELECT (@ids::uuid[])[i] AS id, (@capped::int[])[i] AS capped, sum((@capped::int[])[i]) OVER (ORDER BY i) AS running
  FROM generate_subscripts(@ids::uuid[], 1) AS i
), today AS (
  SELECT coalesce((SELECT d.capped FROM mailbox_send_days d
    WHERE d.organization_id = @organization_id AND d.mailbox_id = @mailbox_id AND d.day = @day), 0) AS used
), fits AS (
  SELECT want.id, want.capped FROM want, today WHERE want.capped = 0 OR today.used + want.running <= @day_limit::int
), charge AS (
  INSERT INTO mailbox_send_days (organization_id, mailbox_id, day, capped, total)
  SELECT @organization_id, @mailbox_id, @day, sum(fits.capped), count(*) FROM fits HAVING count(*) > 0
  ON CONFLICT (organization_id, mailbox_id, day)
  DO UPDATE SET capped = mailbox_send_days.capped + excluded.capped, total = mailbox_send_days.total + excluded.total
), touch AS (
  UPDATE mailboxes SET last_capped_send_at = @at
  WHERE organization_id = @organization_id AND id = @mailbox_id AND EXISTS (SELECT 1 FROM fits WHERE fits.capped > 0)
)
UPDATE send_tasks SET status = 'sending', attempts = attempts + 1, claimed_at = @at, counted_day = @day,
  handed_over_at = NULL, accepted_at = NULL
WHERE send_tasks.organization_id = @organization_id AND send_tasks.id = ANY(ARRAY(SELECT fits.id FROM fits))
RETURNING *;

-- name: SendTaskSent :execrows
-- sent_copy says whether the message is owed a copy in the Sent folder ('pending') or not ('').
UPDATE send_tasks SET status = 'sent', sent_at = coalesce(accepted_at, now()), error_code = '', error_message = '', sent_copy = @sent_copy
WHERE organization_id = @organization_id AND id = @id AND status = 'sending' AND attempts = @attempts;

-- name: SendTaskFailed :execrows
-- The task's one failure result; guarded by the attempt that claimed it.
UPDATE send_tasks SET status = 'failed', failed_at = now(), error_code = @error_code, error_message = @error_message
WHERE organization_id = @organization_id AND id = @id AND status = @from_status AND attempts = @attempts;

-- name: SendTaskAmbiguous :execrows
-- The message was handed over and no answer came: its Sent folder check is queued with it.
UPDATE send_tasks SET status = 'ambiguous', error_code = @error_code, error_message = @error_message,
  outcome_check = 'checking'
WHERE organization_id = @organization_id AND id = @id AND status = 'sending' AND attempts = @attempts;

-- name: SendTaskHandOver :execrows
-- The claiming attempt is about to send the message's final dot: from here a crash leaves it ambiguous. The
-- message handed over before it on the same session, which its server accepted, is written accepted here too
-- when its own attempt has not written that yet (SendTaskAccepted; then the row is not even waited for).
WITH accepted AS (
  UPDATE send_tasks AS prev SET accepted_at = now()
  WHERE prev.organization_id = @organization_id AND prev.id = sqlc.narg(accepted_id)::uuid AND prev.status = 'sending'
    AND prev.attempts = sqlc.narg(accepted_attempts)::int AND prev.handed_over_at IS NOT NULL AND prev.accepted_at IS NULL
)
UPDATE send_tasks SET handed_over_at = now()
WHERE send_tasks.organization_id = @organization_id AND send_tasks.id = @id AND send_tasks.status = 'sending'
  AND send_tasks.attempts = @attempts;

-- name: SendTaskAccepted :exec
-- The server accepted the handed-over message: written by its attempt the moment the session is let go, before
-- the rest of the result, so the next hand-over on the session finds it answered and does not wait for its row.
UPDATE send_tasks SET accepted_at = now()
WHERE organization_id = @organization_id AND id = @id AND status = 'sending' AND attempts = @attempts
  AND handed_over_at IS NOT NULL AND accepted_at IS NULL;

-- name: SendTaskRelease :execrows
-- A task a dead attempt claimed but never handed over goes back to the queue: nothing of it left.
UPDATE send_tasks SET status = 'queued', counted_day = NULL
WHERE organization_id = @organization_id AND id = @id AND status = 'sending' AND attempts = @attempts
  AND handed_over_at IS NULL;

-- name: SendTaskOutcomeFound :execrows
-- The Sent folder holds the ambiguous message: it went out.
UPDATE send_tasks SET status = 'sent', sent_at = coalesce(handed_over_at, now()), outcome_check = 'found_in_sent',
  sent_copy = 'filed', error_code = '', error_message = ''
WHERE organization_id = @organization_id AND id = @id AND status = 'ambiguous' AND outcome_check = 'checking';

-- name: SendTaskOutcomeResend :execrows
-- The ambiguous message is sent again (it did not leave, or a person chose to): back to the queue, due now.
UPDATE send_tasks SET status = 'queued', outcome_check = 'resent', not_before = now(), counted_day = NULL,
  handed_over_at = NULL, decided_by = sqlc.narg(decided_by), decided_at = CASE WHEN sqlc.narg(decided_by)::uuid IS NULL THEN NULL ELSE now() END
WHERE organization_id = @organization_id AND id = @id AND status = 'ambiguous' AND outcome_check = @from_check;

-- name: SendTaskOutcomeUndecided :execrows
-- The Sent folder cannot settle the ambiguous message: a person decides.
UPDATE send_tasks SET outcome_check = 'needs_decision'
WHERE organization_id = @organization_id AND id = @id AND status = 'ambiguous' AND outcome_check = 'checking';

-- name: SendTaskOutcomeSkip :execrows
-- A person decided not to send the ambiguous message again.
UPDATE send_tasks SET outcome_check = 'skipped', decided_by = @decided_by, decided_at = now()
WHERE organization_id = @organization_id AND id = @id AND status = 'ambiguous' AND outcome_check = 'needs_decision';

-- name: SendTasksUndecided :many
-- The mailbox's ambiguous sends waiting for a person, oldest first (ids are UUIDv7), after a cursor.
SELECT * FROM send_tasks
WHERE organization_id = @organization_id AND mailbox_id = @mailbox_id AND outcome_check = 'needs_decision'
  AND id > @after_id
ORDER BY id
LIMIT @max_rows;

-- name: SendTasksUndecidedAny :one
-- Whether the mailbox still has a send waiting for a person.
SELECT EXISTS (SELECT 1 FROM send_tasks
  WHERE organization_id = @organization_id AND mailbox_id = @mailbox_id AND outcome_check = 'needs_decision');

-- name: SendTaskForMailbox :one
SELECT * FROM send_tasks WHERE organization_id = @organization_id AND id = @id AND mailbox_id = @mailbox_id FOR UPDATE;

-- name: SendTaskCopyFiled :execrows
UPDATE send_tasks SET sent_copy = 'filed'
WHERE organization_id = @organization_id AND id = @id AND sent_copy = 'pending';

-- name: MailboxSentCopiesLearned :exec
-- What the first message looked for in the Sent folder taught about the server; learned once.
UPDATE mailboxes SET sent_copies = @sent_copies
WHERE organization_id = @organization_id AND id = @id AND sent_copies = 'unknown';

-- name: SendTaskRequeue :execrows
-- Back to the queue until not_before: a transient failure (after the attempt that claimed it), or a cap or gap
-- the mailbox must wait out (before any attempt, attempts unchanged).
UPDATE send_tasks SET status = 'queued', not_before = @not_before, counted_day = NULL,
  error_code = @error_code, error_message = @error_message
WHERE organization_id = @organization_id AND id = @id AND status = @from_status AND attempts = @attempts;

-- name: SendDayCredit :exec
-- A send that did not go out gives its place in the day back.
UPDATE mailbox_send_days SET capped = greatest(capped - @capped, 0), total = greatest(total - 1, 0)
WHERE organization_id = @organization_id AND mailbox_id = @mailbox_id AND day = @day;

-- name: MailboxErrorInsert :one
INSERT INTO mailbox_errors (organization_id, id, mailbox_id, code, severity, title, message, action_required)
VALUES (@organization_id, @id, @mailbox_id, @code, @severity, @title, @message, @action_required)
RETURNING *;

-- name: MailboxErrorOpen :one
SELECT count(*) FROM mailbox_errors
WHERE organization_id = @organization_id AND mailbox_id = @mailbox_id AND code = @code AND resolved_at IS NULL;

-- name: MailboxErrorResolve :exec
UPDATE mailbox_errors SET resolved_at = now()
WHERE organization_id = @organization_id AND mailbox_id = @mailbox_id AND code = @code AND resolved_at IS NULL;
