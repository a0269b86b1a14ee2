-- +goose Up
-- A human click's effects (clicked_at, the lead's click count, campaign.email_clicked, the contact's activity)
-- wait until the burst window plus a second has passed, so a scanner's click on another link can still turn
-- it into a burst first. effects_due_at is when they may apply (set only on a human click of a send that
-- exists; cleared if a later click re-judges it a burst before then); effects_applied_at is when the deferred
-- job applied them, after which the verdict no longer changes.
ALTER TABLE tracking_events
  ADD COLUMN effects_due_at timestamptz,
  ADD COLUMN effects_applied_at timestamptz,
  ADD CONSTRAINT tracking_events_effects_check CHECK (
    (effects_due_at IS NULL OR (kind = 'click' AND verdict = 'human'))
    AND (effects_applied_at IS NULL OR effects_due_at IS NOT NULL));

-- +goose Down
ALTER TABLE tracking_events DROP COLUMN effects_applied_at, DROP COLUMN effects_due_at;
