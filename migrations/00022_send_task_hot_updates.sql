-- +goose Up
-- A send task is updated at each step of its life (claimed, then sent, failed or requeued) and its mailbox at
-- each capped send (last_capped_send_at). Those updates stay on the row's page and touch no index (HOT) only
-- when no indexed column or index predicate changes and the page has room: the pending-sends index therefore
-- covers every task of a mailbox instead of being partial on status, and both tables leave room on their pages.
DROP INDEX send_tasks_mailbox_pending;
CREATE INDEX send_tasks_mailbox ON send_tasks (organization_id, mailbox_id);
ALTER TABLE send_tasks SET (fillfactor = 70);
ALTER TABLE mailboxes SET (fillfactor = 50);
