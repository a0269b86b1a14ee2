-- +goose Up
-- API keys in full: source-IP allow-lists, mailbox scoping, per-key rate limits, last use, the request log
-- behind usage analytics, and the shared sliding-window rate limiter every API process consults.

ALTER TABLE api_keys
  ADD COLUMN allowed_ips text[] NOT NULL DEFAULT '{}',
  ADD COLUMN allowed_email_accounts uuid[] NOT NULL DEFAULT '{}',
  ADD COLUMN rate_limit_per_minute integer NOT NULL DEFAULT 0 CHECK (rate_limit_per_minute BETWEEN 0 AND 10000),
  ADD COLUMN last_used_at timestamptz,
  ADD COLUMN last_request_ip text,
  ADD CONSTRAINT api_keys_allowed_ips_bound CHECK (cardinality(allowed_ips) <= 100),
  ADD CONSTRAINT api_keys_allowed_email_accounts_bound CHECK (cardinality(allowed_email_accounts) <= 1000);
-- Lists are newest first with an id tie-break.
CREATE INDEX api_keys_newest ON api_keys (organization_id, created_at DESC, id DESC);

-- One row per authenticated API-key request, written in batches off the request path.
CREATE TABLE api_key_usage_logs (
  organization_id uuid NOT NULL,
  id uuid NOT NULL,
  api_key_id uuid NOT NULL,
  endpoint text NOT NULL CHECK (length(endpoint) <= 300),
  method text NOT NULL CHECK (length(method) <= 10),
  ip_address text NOT NULL DEFAULT '',
  user_agent text NOT NULL DEFAULT '',
  response_code integer NOT NULL,
  response_time_ms integer NOT NULL,
  created_at timestamptz NOT NULL,
  PRIMARY KEY (organization_id, id),
  -- Deleting a key permanently removes its log with it.
  FOREIGN KEY (organization_id, api_key_id) REFERENCES api_keys (organization_id, id) ON DELETE CASCADE
);
CREATE INDEX api_key_usage_logs_key ON api_key_usage_logs (organization_id, api_key_id, created_at DESC, id DESC);
CREATE INDEX api_key_usage_logs_time ON api_key_usage_logs (organization_id, created_at);

ALTER TABLE api_key_usage_logs ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON api_key_usage_logs USING (organization_id = current_org()) WITH CHECK (organization_id = current_org());
GRANT SELECT, INSERT, UPDATE, DELETE ON api_key_usage_logs TO outflow_app;

-- The sliding window of admitted requests per credential, kept as per-second counts: at most one row per
-- second of the window per credential, so admitting a request costs the same at 60 or 10,000 per minute.
-- Traffic rebuilds it within a window, so it is UNLOGGED (no WAL; emptied after a crash) and only the
-- rate_limit_take function touches it.
CREATE UNLOGGED TABLE rate_limit_hits (
  credential_id uuid NOT NULL,
  second bigint NOT NULL,
  hits integer NOT NULL,
  PRIMARY KEY (credential_id, second)
);
REVOKE ALL ON rate_limit_hits FROM outflow_app;

-- rate_limit_take admits one request of a credential when fewer than p_limit were admitted in the
-- p_window_seconds ending with the current second, and returns 0; otherwise it returns the seconds until the
-- oldest admitted second leaves the window. A per-credential advisory lock serializes callers across every
-- API process, so no more than p_limit requests pass in any window. Refused requests are not counted.
-- +goose StatementBegin
CREATE FUNCTION rate_limit_take(p_credential uuid, p_limit integer, p_window_seconds integer) RETURNS integer
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, public
AS $$
DECLARE
  v_now bigint;
  v_count bigint;
  v_oldest bigint;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended('rate_limit:' || p_credential::text, 0));
  v_now := floor(extract(epoch FROM clock_timestamp()))::bigint;
  DELETE FROM rate_limit_hits WHERE credential_id = p_credential AND second <= v_now - p_window_seconds;
  SELECT COALESCE(sum(hits), 0), min(second) INTO v_count, v_oldest FROM rate_limit_hits WHERE credential_id = p_credential;
  IF v_count >= p_limit THEN
    RETURN greatest(v_oldest + p_window_seconds - v_now, 1);
  END IF;
  INSERT INTO rate_limit_hits AS h (credential_id, second, hits) VALUES (p_credential, v_now, 1)
  ON CONFLICT (credential_id, second) DO UPDATE SET hits = h.hits + 1;
  RETURN 0;
END
$$;
-- +goose StatementEnd
REVOKE ALL ON FUNCTION rate_limit_take(uuid, integer, integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION rate_limit_take(uuid, integer, integer) TO outflow_app;

-- api_key_usage_sweep trims request logs older than the retention window for every organization (a periodic
-- job calls it); analytics look back 90 days at most.
CREATE FUNCTION api_key_usage_sweep(p_before timestamptz) RETURNS bigint
LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, public
AS $$
  WITH gone AS (DELETE FROM api_key_usage_logs WHERE created_at < p_before RETURNING 1)
  SELECT count(*) FROM gone
$$;
REVOKE ALL ON FUNCTION api_key_usage_sweep(timestamptz) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION api_key_usage_sweep(timestamptz) TO outflow_app;
