-- +goose Up
-- held_leads: what an approval of an agent's lead add holds (internal/agents/leadgate): contacts to add to a
-- campaign that sends (campaign_id), or to pin into a segment linked to one (segment_id). An approval holds up
-- to an import's 50,000 contacts, so they live here rather than in its payload (which approvals lists show).
-- Nothing here is a lead or a pin until a person approves; a contact, campaign or segment deleted meanwhile
-- takes its rows with it, so approving adds only what still exists.
CREATE TABLE held_leads (
  organization_id uuid NOT NULL,
  approval_id uuid NOT NULL,
  contact_id uuid NOT NULL,
  campaign_id uuid,
  segment_id uuid,
  CHECK ((campaign_id IS NULL) <> (segment_id IS NULL)),
  FOREIGN KEY (organization_id, approval_id) REFERENCES approvals (organization_id, id) ON DELETE CASCADE,
  FOREIGN KEY (organization_id, contact_id) REFERENCES contacts (organization_id, id) ON DELETE CASCADE,
  FOREIGN KEY (organization_id, campaign_id) REFERENCES campaigns (organization_id, id) ON DELETE CASCADE,
  FOREIGN KEY (organization_id, segment_id) REFERENCES segments (organization_id, id) ON DELETE CASCADE
);
-- Read by approval; the other three serve the cascades of a deleted contact, campaign or segment.
CREATE INDEX held_leads_approval ON held_leads (organization_id, approval_id);
CREATE INDEX held_leads_contact ON held_leads (organization_id, contact_id);
CREATE INDEX held_leads_campaign ON held_leads (organization_id, campaign_id) WHERE campaign_id IS NOT NULL;
CREATE INDEX held_leads_segment ON held_leads (organization_id, segment_id) WHERE segment_id IS NOT NULL;

ALTER TABLE held_leads ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON held_leads USING (organization_id = current_org()) WITH CHECK (organization_id = current_org());

-- +goose Down
DROP TABLE held_leads;
