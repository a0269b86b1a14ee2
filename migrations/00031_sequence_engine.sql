-- +goose Up
-- The sequence engine (internal/campaigns/engine): a periodic job takes each active campaign's due leads,
-- decides step, sender and variant, and enqueues the sends through the send pipeline in the same transaction;
-- each send's result comes back to the lead through the pipeline's settle hook.
--
-- A lead with a send in flight (task_id set) is not due: its next step waits for the result, which either
-- keeps the advance (sent) or undoes it (failed). attempts counts the failed sends of the current step; the
-- fifth fails the lead. thread_refs are the Message-IDs the lead's conversation has so far, oldest first, so
-- a thread_reply follow-up carries In-Reply-To and References; mailbox_id (the sender that started the
-- thread) sends its follow-ups.
ALTER TABLE campaign_leads
  ADD COLUMN task_id uuid,
  ADD COLUMN attempts smallint NOT NULL DEFAULT 0 CHECK (attempts >= 0),
  ADD COLUMN thread_refs text[] NOT NULL DEFAULT '{}' CHECK (cardinality(thread_refs) <= 100),
  ADD COLUMN last_step_at timestamptz;
DROP INDEX campaign_leads_due;
-- The engine reads due leads per campaign; campaigns_due asks the same index whether any is due.
CREATE INDEX campaign_leads_due ON campaign_leads (organization_id, campaign_id, due_at)
  WHERE state IN ('pending', 'active') AND due_at IS NOT NULL AND task_id IS NULL;

-- The ramp's level advances once per local day the campaign sends on (ramp_day is the last such day);
-- rotation_cursor is the round-robin position in the sender pool; engine_ran_at orders campaigns so none waits
-- behind another; ab_judged_at is when the engine last judged the A/B variants for a promotion.
ALTER TABLE campaigns
  ADD COLUMN ramp_day date,
  ADD COLUMN rotation_cursor bigint NOT NULL DEFAULT 0,
  ADD COLUMN engine_ran_at timestamptz,
  ADD COLUMN ab_judged_at timestamptz,
  -- A lead was added (by any path) after the campaign completed: the engine restarts it after the launch checks.
  ADD COLUMN restart_due boolean NOT NULL DEFAULT false,
  -- The campaign as a whole cannot send before parked_until (not started, outside its window, the day's sends
  -- all taken, every sender capped for the day): its leads due at or before parked_before wait until then,
  -- with parked_reason as their wait reason. One row written instead of every waiting lead, day after day;
  -- a lead made due after parked_before (a retry, a new lead, a changed schedule) is looked at again.
  ADD COLUMN parked_before timestamptz,
  ADD COLUMN parked_until timestamptz,
  ADD COLUMN parked_reason text NOT NULL DEFAULT '' CHECK (length(parked_reason) <= 200);
-- The primary key (organization_id, campaign_id, contact_id) already serves every lookup this index did.
DROP INDEX campaign_leads_campaign;

-- The first-lead trigger also flags a completed campaign that gains a lead.
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION campaign_leads_had_leads() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public AS $$
BEGIN
  UPDATE campaigns c SET had_leads = true, restart_due = restart_due OR c.status = 'completed'
  FROM (SELECT DISTINCT organization_id, campaign_id FROM new_rows) d
  WHERE c.organization_id = d.organization_id AND c.id = d.campaign_id
    AND (NOT c.had_leads OR c.status = 'completed' AND NOT c.restart_due);
  RETURN NULL;
END $$;
-- +goose StatementEnd

-- A campaign send names the A/B variant it carried (NULL: the step's own content), so the A/B analysis counts
-- per variant (replied_at is stamped when a reply is matched to the send).
ALTER TABLE send_tasks ADD COLUMN variant_id uuid;
-- Inbound mail is matched to the campaign send it answers by Message-ID.
CREATE INDEX send_tasks_message_id ON send_tasks (organization_id, message_id) WHERE campaign_id IS NOT NULL;
CREATE INDEX send_tasks_campaign_variant ON send_tasks (organization_id, campaign_id, variant_id) WHERE campaign_id IS NOT NULL;

-- What the engine has planned on each mailbox for the mailbox's local day: how many capped sends it has
-- enqueued (planned) and when the last one may start (planned_until), so campaigns sharing a mailbox plan
-- around each other before the pipeline's claim sees the sends. The claim still enforces cap and gap; this
-- keeps the engine from enqueueing what would only wait there. Rows are locked in mailbox order by a planning
-- campaign; a failed send gives its place back.
CREATE TABLE mailbox_plans (
  organization_id uuid NOT NULL,
  mailbox_id uuid NOT NULL,
  day date NOT NULL,
  planned integer NOT NULL DEFAULT 0 CHECK (planned >= 0),
  planned_until timestamptz,
  PRIMARY KEY (organization_id, mailbox_id),
  FOREIGN KEY (organization_id, mailbox_id) REFERENCES mailboxes (organization_id, id) ON DELETE CASCADE
);
ALTER TABLE mailbox_plans ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON mailbox_plans USING (organization_id = current_org()) WITH CHECK (organization_id = current_org());
GRANT SELECT, INSERT, UPDATE, DELETE ON mailbox_plans TO outflow_app;

-- campaigns_due lists, across organizations, up to p_limit campaigns the engine has work in at p_now, the one
-- it ran longest ago first: active campaigns with a lead due, and completed ones a lead was added to since they
-- completed (restart_due; the engine restarts them after the launch checks); a parked campaign's leads due
-- before its park count once it ends. A narrow SECURITY DEFINER read for the
-- engine's periodic job; each campaign is then worked in its organization's transaction.
-- +goose StatementBegin
CREATE FUNCTION campaigns_due(p_now timestamptz, p_limit integer)
RETURNS TABLE (organization_id uuid, campaign_id uuid)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, public
AS $$
  -- The lead probe is a LATERAL with LIMIT 1, planned per campaign on the due index's full prefix: as a semi
  -- join, statistics not yet analyzed (after an import) could plan a walk of the whole index per campaign.
  SELECT c.organization_id, c.id FROM campaigns c
  CROSS JOIN LATERAL (SELECT 1 FROM campaign_leads l
    WHERE l.organization_id = c.organization_id AND l.campaign_id = c.id
      AND l.state IN ('pending', 'active') AND l.due_at IS NOT NULL AND l.task_id IS NULL AND l.due_at <= p_now
      AND l.due_at > CASE WHEN c.parked_until > p_now THEN c.parked_before ELSE '-infinity'::timestamptz END
    LIMIT 1) due
  WHERE c.status IN ('active', 'completed') AND (c.status = 'active' OR c.restart_due)
  ORDER BY c.engine_ran_at NULLS FIRST, c.organization_id, c.id
  LIMIT p_limit
$$;
-- +goose StatementEnd
REVOKE ALL ON FUNCTION campaigns_due(timestamptz, integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION campaigns_due(timestamptz, integer) TO outflow_app;

-- +goose Down
DROP FUNCTION campaigns_due(timestamptz, integer);
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION campaign_leads_had_leads() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public AS $$
BEGIN
  UPDATE campaigns c SET had_leads = true
  FROM (SELECT DISTINCT organization_id, campaign_id FROM new_rows) d
  WHERE c.organization_id = d.organization_id AND c.id = d.campaign_id AND NOT c.had_leads;
  RETURN NULL;
END $$;
-- +goose StatementEnd
DROP TABLE mailbox_plans;
DROP INDEX send_tasks_campaign_variant;
DROP INDEX send_tasks_message_id;
ALTER TABLE send_tasks DROP COLUMN variant_id;
ALTER TABLE campaigns DROP COLUMN ramp_day, DROP COLUMN rotation_cursor, DROP COLUMN engine_ran_at, DROP COLUMN ab_judged_at,
  DROP COLUMN restart_due, DROP COLUMN parked_before, DROP COLUMN parked_until, DROP COLUMN parked_reason;
CREATE INDEX campaign_leads_campaign ON campaign_leads (organization_id, campaign_id, contact_id);
DROP INDEX campaign_leads_due;
ALTER TABLE campaign_leads DROP COLUMN task_id, DROP COLUMN attempts, DROP COLUMN thread_refs, DROP COLUMN last_step_at;
CREATE INDEX campaign_leads_due ON campaign_leads (due_at) WHERE state IN ('pending', 'active') AND due_at IS NOT NULL;
