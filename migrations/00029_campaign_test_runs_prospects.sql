-- +goose Up
-- A test run may personalise from the prospect's address alone (no stored contact has it), so its contact is
-- optional; the API answers the zero UUID for such a run, as the contract requires the field. A failed run's
-- error carries a fix for a person, like every other error, so the fix gets its column beside code and message.
ALTER TABLE campaign_test_runs
  ALTER COLUMN contact_id DROP NOT NULL,
  ADD COLUMN error_fix text NOT NULL DEFAULT '' CHECK (length(error_fix) <= 1000);

-- +goose Down
DELETE FROM campaign_test_runs WHERE contact_id IS NULL;
ALTER TABLE campaign_test_runs
  ALTER COLUMN contact_id SET NOT NULL,
  DROP COLUMN error_fix;
