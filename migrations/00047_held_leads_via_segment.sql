-- +goose Up
-- held_leads.via_segment: the held lead is one a segment linked to the campaign would take in, because an API
-- key's or OAuth grant's write made the contact newly match it (a dynamic segment's filters now select the
-- contact). The periodic enrolment (internal/campaigns/campaign, Enroll) would otherwise add it within
-- minutes, past the person the approval waits for; it skips such a pair while the approval is pending, and
-- after a denial or an expiry for as long as the contact stays a member of the campaign's segments (the row
-- goes once it is not). An approved row no longer holds anything back: approving added the lead.
ALTER TABLE held_leads
  ADD COLUMN via_segment boolean NOT NULL DEFAULT false,
  ADD CHECK (NOT via_segment OR campaign_id IS NOT NULL);
-- Read by enrolment, per campaign and contact.
CREATE INDEX held_leads_via_segment ON held_leads (organization_id, campaign_id, contact_id) WHERE via_segment;

-- +goose Down
DROP INDEX held_leads_via_segment;
ALTER TABLE held_leads DROP COLUMN via_segment;
