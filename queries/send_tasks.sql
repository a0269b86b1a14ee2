-- name: SendTaskInsert :batchone
-- One round trip for any number of tasks (a campaign step enqueues its sends together).
INSERT INTO send_tasks (organization_id, id, kind, mailbox_id, from_email, from_name, contact_id, to_email, to_list,
  cc, bcc, reply_to, in_reply_to, thread_references, campaign_id, step_id, step_name, subject, body_text, body_html,
  message_id, send_mode, not_before)
VALUES (@organization_id, @id, @kind, @mailbox_id, @from_email, @from_name, sqlc.narg(contact_id), @to_email,
  @to_list::text[], @cc::text[], @bcc::text[], @reply_to, @in_reply_to, @thread_references::text[],
  sqlc.narg(campaign_id), sqlc.narg(step_id), @step_name, @subject, @body_text, @body_html, @message_id, @send_mode,
  @not_before)
RETURNING *;

-- name: SendTaskGetForUpdate :one
SELECT * FROM send_tasks WHERE organization_id = $1 AND id = $2 FOR UPDATE;

-- name: SendTaskLoadForClaim :one
-- The task and its mailbox, both locked: the mailbox lock makes claims on one mailbox take turns.
SELECT sqlc.embed(t), sqlc.embed(m) FROM send_tasks t
JOIN mailboxes m ON m.organization_id = t.organization_id AND m.id = t.mailbox_id
WHERE t.organization_id = @organization_id AND t.id = @id
FOR UPDATE OF t, m;

-- name: SendTaskClaim :one
-- The attempt starts, unless a capped send finds the mailbox's day full (campaign_limit): then no row. The
-- day is charged (capped counts toward campaign_limit; a capped send also restarts the gap) and the task is
-- in flight until its result is written. A task found in flight by a later attempt was cut short by a crash.
WITH today AS (
  SELECT coalesce((SELECT d.capped FROM mailbox_send_days d
    WHERE d.organization_id = @organization_id AND d.mailbox_id = @mailbox_id AND d.day = @day), 0) AS used
), room AS (
  SELECT 1 AS ok FROM today WHERE @capped::int = 0 OR today.used < @day_limit::int
), charge AS (
  INSERT INTO mailbox_send_days (organization_id, mailbox_id, day, capped, total)
  SELECT @organization_id, @mailbox_id, @day, @capped::int, 1 FROM room
  ON CONFLICT (organization_id, mailbox_id, day)
  DO UPDATE SET capped = mailbox_send_days.capped + excluded.capped, total = mailbox_send_days.total + 1
), touch AS (
  UPDATE mailboxes SET last_capped_send_at = @at
  WHERE organization_id = @organization_id AND id = @mailbox_id AND @capped::int > 0 AND EXISTS (SELECT 1 FROM room)
)
UPDATE send_tasks SET status = 'sending', attempts = attempts + 1, claimed_at = @at, counted_day = @day
WHERE send_tasks.organization_id = @organization_id AND send_tasks.id = @id AND EXISTS (SELECT 1 FROM room)
RETURNING *;

-- name: SendTaskSent :execrows
UPDATE send_tasks SET status = 'sent', sent_at = now(), error_code = '', error_message = ''
WHERE organization_id = @organization_id AND id = @id AND status = 'sending' AND attempts = @attempts;

-- name: SendTaskFailed :execrows
-- The task's one failure result; guarded by the attempt that claimed it.
UPDATE send_tasks SET status = 'failed', failed_at = now(), error_code = @error_code, error_message = @error_message
WHERE organization_id = @organization_id AND id = @id AND status = @from_status AND attempts = @attempts;

-- name: SendTaskAmbiguous :execrows
UPDATE send_tasks SET status = 'ambiguous', error_code = @error_code, error_message = @error_message
WHERE organization_id = @organization_id AND id = @id AND status = 'sending' AND attempts = @attempts;

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
