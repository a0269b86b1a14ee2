-- +goose Up
-- What the last resolution of a mailbox's custom tracking domain found (the verified flag and time live beside
-- the domain already), and when its domain's authentication was last looked up by the daily check.
ALTER TABLE mailboxes
  ADD COLUMN tracking_status text NOT NULL DEFAULT 'unset'
    CHECK (tracking_status IN ('verified', 'unset', 'no_target', 'not_found', 'wrong_target', 'lookup_error', 'pending')),
  ADD COLUMN tracking_message text NOT NULL DEFAULT '' CHECK (length(tracking_message) <= 500),
  ADD COLUMN tracking_observed text NOT NULL DEFAULT '' CHECK (length(tracking_observed) <= 1000),
  ADD COLUMN tracking_host_unresolvable boolean NOT NULL DEFAULT false,
  ADD COLUMN tracking_checked_at timestamptz;

-- mailbox_dns_due lists, across organizations, the mailboxes the hourly DNS sweep should look at: a custom
-- tracking domain not resolved since p_checked_before, or a domain authentication not checked since then.
-- A narrow SECURITY DEFINER read for the sweep; each check then runs in its organization's transaction.
-- +goose StatementBegin
CREATE FUNCTION mailbox_dns_due(p_checked_before timestamptz, p_limit integer)
RETURNS TABLE (organization_id uuid, id uuid)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, public
AS $$
  SELECT m.organization_id, m.id FROM mailboxes m
  WHERE (m.tracking_domain <> '' AND (m.tracking_checked_at IS NULL OR m.tracking_checked_at < p_checked_before))
     OR m.auth_checked_at IS NULL OR m.auth_checked_at < p_checked_before
  ORDER BY least(coalesce(m.tracking_checked_at, '-infinity'), coalesce(m.auth_checked_at, '-infinity'))
  LIMIT p_limit
$$;
-- +goose StatementEnd
REVOKE ALL ON FUNCTION mailbox_dns_due(timestamptz, integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION mailbox_dns_due(timestamptz, integer) TO outflow_app;

-- A warmup block: when the warmup network blocked the mailbox (warmup_health 'blocked'), until when and why.
ALTER TABLE mailboxes
  ADD COLUMN warmup_blocked_at timestamptz,
  ADD COLUMN warmup_blocked_until timestamptz,
  ADD COLUMN warmup_block_reason text NOT NULL DEFAULT '' CHECK (length(warmup_block_reason) <= 500);

-- Appeals against warmup blocks; at most one pending per mailbox.
CREATE TABLE mailbox_warmup_appeals (
  organization_id uuid NOT NULL,
  id uuid NOT NULL,
  mailbox_id uuid NOT NULL,
  reason text NOT NULL DEFAULT '' CHECK (length(reason) <= 2000),
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'accepted', 'rejected')),
  created_by uuid,
  created_at timestamptz NOT NULL DEFAULT now(),
  decided_at timestamptz,
  PRIMARY KEY (organization_id, id),
  FOREIGN KEY (organization_id, mailbox_id) REFERENCES mailboxes (organization_id, id) ON DELETE CASCADE
);
CREATE UNIQUE INDEX mailbox_warmup_appeals_pending ON mailbox_warmup_appeals (organization_id, mailbox_id) WHERE status = 'pending';

ALTER TABLE mailbox_warmup_appeals ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON mailbox_warmup_appeals USING (organization_id = current_org()) WITH CHECK (organization_id = current_org());
GRANT SELECT, INSERT, UPDATE, DELETE ON mailbox_warmup_appeals TO outflow_app;
