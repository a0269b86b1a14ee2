-- +goose Up
-- The contacts policy called current_org() for every row it checked: an import's INSERT of 50,000 rows
-- read the setting and parsed the uuid 50,000 times in its WITH CHECK (about 15 ms, 5 percent of the
-- import). As a scalar subquery it is evaluated once per statement (an InitPlan) and compared as a
-- parameter, which index conditions use as before. Same rows either way.
ALTER POLICY tenant_isolation ON contacts
  USING (organization_id = (SELECT current_org())) WITH CHECK (organization_id = (SELECT current_org()));

-- +goose Down
ALTER POLICY tenant_isolation ON contacts
  USING (organization_id = current_org()) WITH CHECK (organization_id = current_org());
