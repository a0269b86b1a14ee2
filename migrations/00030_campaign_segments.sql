-- +goose Up
-- Segment links (part 3 "Leads"): a campaign linked to segments takes their members as pending leads when the
-- link is made, and a periodic job adds those who join later (dynamic filters that start matching, new pins).
-- enrolled_at is when the link was last enrolled; the job takes the links enrolled longest ago first, so every
-- run is bounded and no campaign waits behind another. Links go with the campaign or the segment (cascade).
CREATE TABLE campaign_segments (
  organization_id uuid NOT NULL,
  campaign_id uuid NOT NULL,
  segment_id uuid NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  enrolled_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (organization_id, campaign_id, segment_id),
  FOREIGN KEY (organization_id, campaign_id) REFERENCES campaigns (organization_id, id) ON DELETE CASCADE,
  FOREIGN KEY (organization_id, segment_id) REFERENCES segments (organization_id, id) ON DELETE CASCADE
);
CREATE INDEX campaign_segments_segment ON campaign_segments (organization_id, segment_id);
CREATE INDEX campaign_segments_enrolled ON campaign_segments (enrolled_at);

ALTER TABLE campaign_segments ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON campaign_segments USING (organization_id = current_org()) WITH CHECK (organization_id = current_org());
GRANT SELECT, INSERT, UPDATE, DELETE ON campaign_segments TO outflow_app;

-- campaign_segments_due lists, across organizations, up to p_limit campaigns whose segment links were last
-- enrolled before p_before, longest waiting first. A narrow SECURITY DEFINER read for the enrolment job; each
-- campaign is then enrolled in its organization's transaction.
-- +goose StatementBegin
CREATE FUNCTION campaign_segments_due(p_before timestamptz, p_limit integer)
RETURNS TABLE (organization_id uuid, campaign_id uuid)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, public
AS $$
  SELECT s.organization_id, s.campaign_id FROM campaign_segments s
  WHERE s.enrolled_at < p_before
  GROUP BY s.organization_id, s.campaign_id
  ORDER BY min(s.enrolled_at), s.organization_id, s.campaign_id
  LIMIT p_limit
$$;
-- +goose StatementEnd
REVOKE ALL ON FUNCTION campaign_segments_due(timestamptz, integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION campaign_segments_due(timestamptz, integer) TO outflow_app;

-- +goose Down
DROP FUNCTION campaign_segments_due(timestamptz, integer);
DROP TABLE campaign_segments;
