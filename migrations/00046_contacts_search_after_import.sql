-- +goose Up
-- Contact search in the window after an import (BenchmarkContactSearchAfterImport): a 50,000-row import made
-- searches 10 to 20 times slower, first while its rows waited for the index job and then, once they were
-- indexed, until autovacuum came by. The search statements now read rows the index job has not put into the
-- search indexes by key or in order (internal/audience/contacts, SearchSQL and Resolve); what this migration
-- changes is the planner's statistics and the candidate functions.
--
-- The planner's statistics describe the table before the import, or an autoanalyze that ran while the
-- rows were not yet search_ready, and autovacuum analyzes a table once a tenth of it has changed, which one
-- organization's import in a shared table may never reach. When they know nothing of an organization (a new
-- one, in a table whose statistics hold only others), the planner takes its 50,000 contacts for one row, and
-- every plan that reads "the organization's rows" looks free: the pending range was read through the address
-- index in address order instead of by key, a search's few matches were found by testing every contact of the
-- organization against them, and once indexed a text pattern was tested against every contact instead of
-- looked up in the trigram index (200 to 500 ms, where the same search takes 10 to 40 ms once analyzed).
--
-- Two functions put the planner right, each in the caller's organization, each comparing the planner's
-- estimate of the organization's contacts with what it has (contact_stats) and analyzing when the estimate is
-- under a tenth of it and that is at least 10,000 (below, reading them all is cheap whatever the plan):
--
--   - contacts_import_settle, called by an import after its insert in its own transaction (ANALYZE counts the
--     transaction's own new rows), analyzes the organization column alone from a sample of 3,000 rows
--     (statistics target 10), so the seconds before the index job has run plan with the right sizes: a few
--     milliseconds where the full sample took a fifth of the import. It skips the analyze rather than wait
--     when another process holds the table's maintenance lock (autovacuum, another import's analyze), so an
--     import never waits on it. It answers whether the picture was off: the smaller sample keeps fewer
--     organizations' counts, so the index job then analyzes in full.
--   - contacts_index_settle, called by the index job after its last batch, analyzes the whole table at the
--     full target when the import asked (asked) or the estimate of the organization's indexed contacts is
--     that far off (search_ready has changed for every row the job moved), waiting up to 10 s for the lock.
--     It also merges the trigram indexes' pending lists: the job's updates go through them (fastupdate), up
--     to 4 MB that every trigram search reads in full until a vacuum merges them.
--
-- Both run only when the planner's picture is this far off: an organization's first large import, or one
-- that grows it tenfold. ANALYZE samples a fixed number of rows whatever the table's size. The app role may
-- neither analyze nor merge (both need the table's owner), so the functions run as the owner and do nothing
-- else.
-- +goose StatementBegin
CREATE FUNCTION contacts_misestimated(org uuid, indexed boolean) RETURNS boolean
LANGUAGE plpgsql SET search_path = public AS $$
DECLARE
  total bigint;
  plan json;
BEGIN
  SELECT s.total INTO total FROM contact_stats s WHERE s.organization_id = org;
  IF coalesce(total, 0) < 10000 THEN
    RETURN false;
  END IF;
  IF indexed THEN
    EXECUTE 'EXPLAIN (FORMAT JSON) SELECT 1 FROM contacts WHERE organization_id = $1 AND search_ready' INTO plan USING org;
  ELSE
    EXECUTE 'EXPLAIN (FORMAT JSON) SELECT 1 FROM contacts WHERE organization_id = $1' INTO plan USING org;
  END IF;
  RETURN (plan->0->'Plan'->>'Plan Rows')::float8 < total / 10;
END $$;
-- +goose StatementEnd
REVOKE ALL ON FUNCTION contacts_misestimated(uuid, boolean) FROM PUBLIC;
-- +goose StatementBegin
CREATE FUNCTION contacts_import_settle() RETURNS boolean
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public SET default_statistics_target = 10 AS $$
BEGIN
  IF NOT contacts_misestimated(current_org(), false) THEN
    RETURN false;
  END IF;
  ANALYZE (SKIP_LOCKED) contacts (organization_id);
  RETURN true;
END $$;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE FUNCTION contacts_index_settle(asked boolean) RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public SET lock_timeout = '10s' AS $$
BEGIN
  PERFORM gin_clean_pending_list('contacts_search'::regclass);
  PERFORM gin_clean_pending_list('contacts_custom_fields'::regclass);
  IF NOT asked AND NOT contacts_misestimated(current_org(), true) THEN
    RETURN;
  END IF;
  BEGIN
    ANALYZE contacts;
  EXCEPTION WHEN lock_not_available THEN
    NULL; -- a vacuum holds the table; autovacuum analyzes after it
  END;
END $$;
-- +goose StatementEnd
REVOKE ALL ON FUNCTION contacts_import_settle(), contacts_index_settle(boolean) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION contacts_import_settle(), contacts_index_settle(boolean) TO outflow_app;

-- The candidate functions read an import's rows before the index job has run through contacts_pending, which
-- handed every pending row over whole (all its columns) to be tested against the pattern: 50,000 rows after a
-- full import, on every search. They now test the pattern inside each range's scan and hand over only the ids
-- that match, about half the time (BenchmarkContactSearchAfterImport, pending). The search statements read
-- the ranges the same way (internal/audience/contacts), so contacts_pending has no reader left.
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION contacts_text_candidates(pattern text, max_rows integer) RETURNS SETOF uuid
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = public AS $$
BEGIN
  RETURN QUERY EXECUTE
    'SELECT id FROM (
       SELECT id FROM contacts WHERE organization_id = current_org() AND search_ready
         AND lower(first_name || '' '' || last_name || '' '' || email || '' '' || company) LIKE $1
       UNION ALL
       SELECT p.id FROM contacts_pending_ranges(current_org()) r, LATERAL (
         SELECT c.id FROM contacts c WHERE c.organization_id = current_org() AND c.id BETWEEN r.lo AND r.hi AND NOT c.search_ready
           AND lower(c.first_name || '' '' || c.last_name || '' '' || c.email || '' '' || c.company) LIKE $1 OFFSET 0) p) m
     LIMIT $2'
    USING pattern, max_rows;
END $$;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION contacts_custom_candidates(pattern text, max_rows integer) RETURNS SETOF uuid
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = public AS $$
BEGIN
  RETURN QUERY EXECUTE
    'SELECT id FROM (
       SELECT id FROM contacts WHERE organization_id = current_org() AND search_ready
         AND lower(custom_fields::text) LIKE $1
       UNION ALL
       SELECT p.id FROM contacts_pending_ranges(current_org()) r, LATERAL (
         SELECT c.id FROM contacts c WHERE c.organization_id = current_org() AND c.id BETWEEN r.lo AND r.hi AND NOT c.search_ready
           AND lower(c.custom_fields::text) LIKE $1 OFFSET 0) p) m
     LIMIT $2'
    USING pattern, max_rows;
END $$;
-- +goose StatementEnd
DROP FUNCTION contacts_pending(uuid);

-- +goose Down
CREATE FUNCTION contacts_pending(org uuid) RETURNS SETOF contacts
LANGUAGE sql STABLE AS $$
  SELECT c.* FROM contacts_pending_ranges(org) r,
    LATERAL (SELECT * FROM contacts c WHERE c.organization_id = org AND c.id BETWEEN r.lo AND r.hi AND NOT c.search_ready OFFSET 0) c
$$;
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION contacts_text_candidates(pattern text, max_rows integer) RETURNS SETOF uuid
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = public AS $$
BEGIN
  RETURN QUERY EXECUTE
    'SELECT id FROM (
       SELECT id FROM contacts WHERE organization_id = current_org() AND search_ready
         AND lower(first_name || '' '' || last_name || '' '' || email || '' '' || company) LIKE $1
       UNION ALL
       SELECT id FROM contacts_pending(current_org())
         WHERE lower(first_name || '' '' || last_name || '' '' || email || '' '' || company) LIKE $1) m
     LIMIT $2'
    USING pattern, max_rows;
END $$;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION contacts_custom_candidates(pattern text, max_rows integer) RETURNS SETOF uuid
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = public AS $$
BEGIN
  RETURN QUERY EXECUTE
    'SELECT id FROM (
       SELECT id FROM contacts WHERE organization_id = current_org() AND search_ready
         AND lower(custom_fields::text) LIKE $1
       UNION ALL
       SELECT id FROM contacts_pending(current_org())
         WHERE lower(custom_fields::text) LIKE $1) m
     LIMIT $2'
    USING pattern, max_rows;
END $$;
-- +goose StatementEnd
DROP FUNCTION contacts_index_settle(boolean);
DROP FUNCTION contacts_import_settle();
DROP FUNCTION contacts_misestimated(uuid, boolean);
