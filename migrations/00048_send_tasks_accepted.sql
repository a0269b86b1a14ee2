-- +goose Up
-- The server's acceptance of a handed-over message is written the moment it answers (accepted_at), before the
-- rest of the result. The mailbox's session is held only until then, so the result's other writes (rollups, the
-- campaign engine's view, the Sent copy owed) run beside the next message's SMTP transaction, and a crash
-- between the acceptance and the result leaves a task a later attempt records as sent, not an ambiguous one.
ALTER TABLE send_tasks ADD COLUMN accepted_at timestamptz;

-- +goose Down
ALTER TABLE send_tasks DROP COLUMN accepted_at;
