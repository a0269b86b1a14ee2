-- +goose Up
-- The campaign summary's unique_clicks and machine_clicks count contacts (part 3), as unique_opens and
-- machine_opens do from the lead's opened and machine_opened: a lead now also counts its sends clicked only by
-- machines so far (a click whose person's effects applied, clicked, takes one back), kept by the tracking
-- writer with the lead's other engagement counts.
ALTER TABLE campaign_leads ADD COLUMN machine_clicked integer NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE campaign_leads DROP COLUMN machine_clicked;
