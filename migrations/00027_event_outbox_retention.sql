-- +goose Up
-- Part 1's bus keeps events for 7 days. A periodic job prunes older outbox rows in every organization through
-- this narrow definer function (the workers' role sees one organization at a time), a batch per call so no
-- one statement holds many row locks; created_at is indexed so each batch is an index range, not a scan of a
-- week of events. Deliveries keep their rows: their event data reads as gone (the queries LEFT JOIN it).
CREATE INDEX event_outbox_created ON event_outbox (created_at);

CREATE FUNCTION event_outbox_prune(p_before timestamptz, p_limit integer) RETURNS bigint
LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, public
AS $$
  WITH old AS (
    SELECT organization_id, id FROM event_outbox WHERE created_at < p_before ORDER BY created_at LIMIT p_limit
  ), gone AS (
    DELETE FROM event_outbox o USING old
    WHERE o.organization_id = old.organization_id AND o.id = old.id
    RETURNING 1
  )
  SELECT count(*) FROM gone
$$;
REVOKE ALL ON FUNCTION event_outbox_prune(timestamptz, integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION event_outbox_prune(timestamptz, integer) TO outflow_app;

-- +goose Down
DROP FUNCTION event_outbox_prune(timestamptz, integer);
DROP INDEX event_outbox_created;
