--
-- PostgreSQL database dump
--

SET statement_timeout = 0;
SET lock_timeout = 0;
SET idle_in_transaction_session_timeout = 0;
SET client_encoding = 'UTF8';
SET standard_conforming_strings = on;
SELECT pg_catalog.set_config('search_path', '', false);
SET check_function_bodies = false;
SET xmloption = content;
SET client_min_messages = warning;
SET row_security = off;

--
-- Name: pg_trgm; Type: EXTENSION; Schema: -; Owner: -
--

CREATE EXTENSION IF NOT EXISTS pg_trgm WITH SCHEMA public;

--
-- Name: river_job_state; Type: TYPE; Schema: public; Owner: -
--

CREATE TYPE public.river_job_state AS ENUM (
    'available',
    'cancelled',
    'completed',
    'discarded',
    'pending',
    'retryable',
    'running',
    'scheduled'
);

--
-- Name: api_key_usage_sweep(timestamp with time zone); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.api_key_usage_sweep(p_before timestamp with time zone) RETURNS bigint
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public'
    AS $$
  WITH gone AS (DELETE FROM api_key_usage_logs WHERE created_at < p_before RETURNING 1)
  SELECT count(*) FROM gone
$$;

SET default_tablespace = '';

SET default_table_access_method = heap;

--
-- Name: api_keys; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.api_keys (
    organization_id uuid NOT NULL,
    id uuid NOT NULL,
    user_id uuid,
    name text NOT NULL,
    description text DEFAULT ''::text NOT NULL,
    key_hash bytea NOT NULL,
    key_prefix text NOT NULL,
    key_suffix text NOT NULL,
    permissions bigint NOT NULL,
    status text DEFAULT 'active'::text NOT NULL,
    revoked_at timestamp with time zone,
    revoked_reason text,
    expires_at timestamp with time zone,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    allowed_ips text[] DEFAULT '{}'::text[] NOT NULL,
    allowed_email_accounts uuid[] DEFAULT '{}'::uuid[] NOT NULL,
    rate_limit_per_minute integer DEFAULT 0 NOT NULL,
    last_used_at timestamp with time zone,
    last_request_ip text,
    CONSTRAINT api_keys_allowed_email_accounts_bound CHECK ((cardinality(allowed_email_accounts) <= 1000)),
    CONSTRAINT api_keys_allowed_ips_bound CHECK ((cardinality(allowed_ips) <= 100)),
    CONSTRAINT api_keys_name_check CHECK (((length(name) >= 1) AND (length(name) <= 255))),
    CONSTRAINT api_keys_rate_limit_per_minute_check CHECK (((rate_limit_per_minute >= 0) AND (rate_limit_per_minute <= 10000))),
    CONSTRAINT api_keys_status_check CHECK ((status = ANY (ARRAY['active'::text, 'revoked'::text])))
);

--
-- Name: auth_api_key_lookup(bytea); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.auth_api_key_lookup(p_key_hash bytea) RETURNS SETOF public.api_keys
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public'
    AS $$
BEGIN
  RETURN QUERY SELECT * FROM api_keys WHERE key_hash = p_key_hash;
END
$$;

--
-- Name: auth_member_role_permissions(uuid, uuid); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.auth_member_role_permissions(p_organization_id uuid, p_user_id uuid) RETURNS bigint
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public'
    AS $$
BEGIN
  RETURN coalesce((SELECT r.permissions FROM memberships m
                   JOIN custom_roles r ON r.organization_id = m.organization_id AND r.id = m.custom_role_id
                   WHERE m.organization_id = p_organization_id AND m.user_id = p_user_id), 0);
END
$$;

--
-- Name: auth_oauth_access_token(text); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.auth_oauth_access_token(p_signature text) RETURNS TABLE(organization_id uuid, grant_id uuid, user_id uuid, client_id text, scopes bigint, expires_at timestamp with time zone)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public'
    AS $$
#variable_conflict use_column
BEGIN
  RETURN QUERY
  SELECT t.organization_id, t.grant_id, g.user_id, c.client_id, t.scopes & g.scopes & c.scopes, t.expires_at
  FROM oauth_tokens t
  JOIN oauth_grants g ON g.organization_id = t.organization_id AND g.id = t.grant_id
  JOIN oauth_clients c ON c.id = g.client_id
  JOIN memberships m ON m.organization_id = g.organization_id AND m.user_id = g.user_id
  WHERE t.kind = 'access_token' AND t.signature = p_signature AND t.active AND g.revoked_at IS NULL;
END
$$;

--
-- Name: memberships; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.memberships (
    organization_id uuid NOT NULL,
    user_id uuid NOT NULL,
    role text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    custom_role_id uuid GENERATED ALWAYS AS (
CASE
    WHEN (role = ANY (ARRAY['owner'::text, 'admin'::text, 'member'::text])) THEN NULL::uuid
    ELSE (role)::uuid
END) STORED,
    CONSTRAINT memberships_role_check CHECK (((role = ANY (ARRAY['owner'::text, 'admin'::text, 'member'::text])) OR (role ~ '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'::text)))
);

--
-- Name: auth_user_memberships(uuid); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.auth_user_memberships(p_user_id uuid) RETURNS SETOF public.memberships
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public'
    AS $$
BEGIN
  RETURN QUERY SELECT * FROM memberships WHERE user_id = p_user_id ORDER BY created_at, organization_id;
END
$$;

--
-- Name: campaign_leads_count(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.campaign_leads_count() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'public'
    AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    UPDATE contacts c SET campaign_count = c.campaign_count + d.n
    FROM (SELECT organization_id, contact_id, count(*) AS n FROM new_rows GROUP BY 1, 2) d
    WHERE c.organization_id = d.organization_id AND c.id = d.contact_id;
  ELSE
    UPDATE contacts c SET campaign_count = greatest(c.campaign_count - d.n, 0)
    FROM (SELECT organization_id, contact_id, count(*) AS n FROM old_rows GROUP BY 1, 2) d
    WHERE c.organization_id = d.organization_id AND c.id = d.contact_id;
  END IF;
  RETURN NULL;
END $$;

--
-- Name: campaign_leads_had_leads(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.campaign_leads_had_leads() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'public'
    AS $$
BEGIN
  UPDATE campaigns c SET had_leads = true, restart_due = restart_due OR c.status = 'completed'
  FROM (SELECT DISTINCT organization_id, campaign_id FROM new_rows) d
  WHERE c.organization_id = d.organization_id AND c.id = d.campaign_id
    AND (NOT c.had_leads OR c.status = 'completed' AND NOT c.restart_due);
  RETURN NULL;
END $$;

--
-- Name: campaign_segments_due(timestamp with time zone, integer); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.campaign_segments_due(p_before timestamp with time zone, p_limit integer) RETURNS TABLE(organization_id uuid, campaign_id uuid)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public'
    AS $$
  SELECT s.organization_id, s.campaign_id FROM campaign_segments s
  WHERE s.enrolled_at < p_before
  GROUP BY s.organization_id, s.campaign_id
  ORDER BY min(s.enrolled_at), s.organization_id, s.campaign_id
  LIMIT p_limit
$$;

--
-- Name: campaigns_due(timestamp with time zone, integer); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.campaigns_due(p_now timestamp with time zone, p_limit integer) RETURNS TABLE(organization_id uuid, campaign_id uuid)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public'
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

--
-- Name: contact_categories_count(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.contact_categories_count() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'public'
    AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    UPDATE labels l SET contact_count = l.contact_count + d.n
    FROM (SELECT organization_id, category_id, count(*) AS n FROM new_rows GROUP BY 1, 2) d
    WHERE l.organization_id = d.organization_id AND l.id = d.category_id;
  ELSE
    UPDATE labels l SET contact_count = l.contact_count - d.n
    FROM (SELECT organization_id, category_id, count(*) AS n FROM old_rows GROUP BY 1, 2) d
    WHERE l.organization_id = d.organization_id AND l.id = d.category_id;
  END IF;
  RETURN NULL;
END $$;

--
-- Name: contact_stats_apply(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.contact_stats_apply() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'public'
    AS $$
BEGIN
  IF TG_OP IN ('UPDATE', 'DELETE') THEN
    UPDATE contact_stats s SET
      total = s.total - d.total, subscribed = s.subscribed - d.subscribed, in_campaign = s.in_campaign - d.in_campaign,
      not_contacted = s.not_contacted - d.not_contacted, valid = s.valid - d.valid, risky = s.risky - d.risky,
      invalid = s.invalid - d.invalid, unknown = s.unknown - d.unknown, pending = s.pending - d.pending
    FROM (
      SELECT organization_id, count(*) AS total, count(*) FILTER (WHERE subscribed) AS subscribed,
        count(*) FILTER (WHERE campaign_count > 0) AS in_campaign,
        count(*) FILTER (WHERE last_contacted_at IS NULL) AS not_contacted,
        count(*) FILTER (WHERE verification_status = 'valid') AS valid,
        count(*) FILTER (WHERE verification_status = 'risky') AS risky,
        count(*) FILTER (WHERE verification_status = 'invalid') AS invalid,
        count(*) FILTER (WHERE verification_status = 'unknown') AS unknown,
        count(*) FILTER (WHERE verification_source = '') AS pending
      FROM old_rows GROUP BY organization_id
    ) d
    WHERE s.organization_id = d.organization_id;
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') THEN
    INSERT INTO contact_stats AS s (organization_id, total, subscribed, in_campaign, not_contacted, valid, risky, invalid, unknown, pending)
    SELECT organization_id, count(*), count(*) FILTER (WHERE subscribed), count(*) FILTER (WHERE campaign_count > 0),
      count(*) FILTER (WHERE last_contacted_at IS NULL), count(*) FILTER (WHERE verification_status = 'valid'),
      count(*) FILTER (WHERE verification_status = 'risky'), count(*) FILTER (WHERE verification_status = 'invalid'),
      count(*) FILTER (WHERE verification_status = 'unknown'), count(*) FILTER (WHERE verification_source = '')
    FROM new_rows GROUP BY organization_id
    ON CONFLICT (organization_id) DO UPDATE SET
      total = s.total + excluded.total, subscribed = s.subscribed + excluded.subscribed,
      in_campaign = s.in_campaign + excluded.in_campaign, not_contacted = s.not_contacted + excluded.not_contacted,
      valid = s.valid + excluded.valid, risky = s.risky + excluded.risky, invalid = s.invalid + excluded.invalid,
      unknown = s.unknown + excluded.unknown, pending = s.pending + excluded.pending;
  END IF;
  RETURN NULL;
END $$;

--
-- Name: contacts_custom_candidates(text, integer); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.contacts_custom_candidates(pattern text, max_rows integer) RETURNS SETOF uuid
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'public'
    AS $_$
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
END $_$;

--
-- Name: contacts_import_settle(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.contacts_import_settle() RETURNS boolean
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'public'
    SET default_statistics_target TO '10'
    AS $$
BEGIN
  IF NOT contacts_misestimated(current_org(), false) THEN
    RETURN false;
  END IF;
  ANALYZE (SKIP_LOCKED) contacts (organization_id);
  RETURN true;
END $$;

--
-- Name: contacts_index_settle(boolean); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.contacts_index_settle(asked boolean) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'public'
    SET lock_timeout TO '10s'
    AS $$
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

--
-- Name: contacts_misestimated(uuid, boolean); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.contacts_misestimated(org uuid, indexed boolean) RETURNS boolean
    LANGUAGE plpgsql
    SET search_path TO 'public'
    AS $_$
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
END $_$;

--
-- Name: contacts_pending_ranges(uuid); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.contacts_pending_ranges(org uuid) RETURNS TABLE(lo uuid, hi uuid)
    LANGUAGE plpgsql STABLE ROWS 1
    AS $$
DECLARE
  r record;
BEGIN
  FOR r IN SELECT p.lo, p.hi FROM contact_index_pending p WHERE p.organization_id = org ORDER BY p.lo LOOP
    IF hi IS NOT NULL AND r.lo <= hi THEN
      hi := greatest(hi, r.hi);
      CONTINUE;
    END IF;
    IF hi IS NOT NULL THEN
      RETURN NEXT;
    END IF;
    lo := r.lo;
    hi := r.hi;
  END LOOP;
  IF hi IS NOT NULL THEN
    RETURN NEXT;
  END IF;
END $$;

--
-- Name: contacts_text_candidates(text, integer); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.contacts_text_candidates(pattern text, max_rows integer) RETURNS SETOF uuid
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'public'
    AS $_$
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
END $_$;

--
-- Name: current_org(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.current_org() RETURNS uuid
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$ SELECT NULLIF(current_setting('outflow.organization_id', true), '')::uuid $$;

--
-- Name: event_outbox_prune(timestamp with time zone, integer); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.event_outbox_prune(p_before timestamp with time zone, p_limit integer) RETURNS bigint
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public'
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

--
-- Name: idempotency_sweep(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.idempotency_sweep() RETURNS bigint
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public'
    AS $$
  WITH gone AS (DELETE FROM idempotency_keys WHERE expires_at < now() RETURNING 1)
  SELECT count(*) FROM gone
$$;

--
-- Name: inbox_thread_refresh(uuid, uuid[]); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.inbox_thread_refresh(p_org uuid, p_threads uuid[]) RETURNS void
    LANGUAGE sql
    SET search_path TO 'pg_catalog', 'public'
    AS $$
  DELETE FROM inbox_thread_folders WHERE organization_id = p_org AND thread_id = ANY (p_threads);
  INSERT INTO inbox_thread_folders (organization_id, thread_id, folder_role, mailbox_id, last_message_at, last_message_id, total, unread)
  SELECT DISTINCT ON (m.thread_id, r.scope) p_org, m.thread_id, r.scope, m.mailbox_id, m.received_at, m.id,
    count(*) OVER w, count(*) FILTER (WHERE NOT m.seen) OVER w
  FROM inbox_messages m
  CROSS JOIN LATERAL (VALUES (m.folder_role), (CASE WHEN m.folder_role IN ('spam', 'trash') THEN NULL ELSE 'all' END)) r (scope)
  WHERE m.organization_id = p_org AND m.thread_id = ANY (p_threads) AND r.scope IS NOT NULL
  WINDOW w AS (PARTITION BY m.thread_id, r.scope)
  ORDER BY m.thread_id, r.scope, m.received_at DESC, m.id DESC;
  UPDATE inbox_threads t SET
    message_count = a.total,
    unread_count = a.unread,
    last_message_at = coalesce(a.last_at, t.last_message_at),
    newest_message_id = a.newest,
    awaiting_reply = coalesce(a.newest_outbound, false)
  FROM (
    SELECT u.id,
      (SELECT count(*) FROM inbox_messages m WHERE m.organization_id = p_org AND m.thread_id = u.id) AS total,
      coalesce(f.unread, 0) AS unread, f.last_message_at AS last_at, f.last_message_id AS newest,
      (SELECT m.outbound FROM inbox_messages m WHERE m.organization_id = p_org AND m.id = f.last_message_id) AS newest_outbound
    FROM unnest(p_threads) AS u (id)
    LEFT JOIN inbox_thread_folders f ON f.organization_id = p_org AND f.thread_id = u.id AND f.folder_role = 'all'
  ) a
  WHERE t.organization_id = p_org AND t.id = a.id;
$$;

--
-- Name: organization_invitations; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.organization_invitations (
    organization_id uuid NOT NULL,
    id uuid NOT NULL,
    email text NOT NULL,
    role text NOT NULL,
    custom_role_id uuid,
    token_hash bytea NOT NULL,
    state text DEFAULT 'pending'::text NOT NULL,
    invited_by uuid NOT NULL,
    expires_at timestamp with time zone NOT NULL,
    accepted_at timestamp with time zone,
    revoked_at timestamp with time zone,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT organization_invitations_check CHECK (((custom_role_id IS NULL) OR (role = 'member'::text))),
    CONSTRAINT organization_invitations_email_check CHECK (((email = lower(email)) AND ((length(email) >= 3) AND (length(email) <= 320)))),
    CONSTRAINT organization_invitations_role_check CHECK ((role = ANY (ARRAY['owner'::text, 'admin'::text, 'member'::text]))),
    CONSTRAINT organization_invitations_state_check CHECK ((state = ANY (ARRAY['pending'::text, 'accepted'::text, 'revoked'::text, 'expired'::text])))
);

--
-- Name: invitation_by_token(bytea); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.invitation_by_token(p_token_hash bytea) RETURNS SETOF public.organization_invitations
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public'
    AS $$ SELECT * FROM organization_invitations WHERE token_hash = p_token_hash $$;

--
-- Name: mailbox_dns_due(timestamp with time zone, integer); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.mailbox_dns_due(p_checked_before timestamp with time zone, p_limit integer) RETURNS TABLE(organization_id uuid, id uuid)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public'
    AS $$
  SELECT m.organization_id, m.id FROM mailboxes m
  WHERE (m.tracking_domain <> '' AND (m.tracking_checked_at IS NULL OR m.tracking_checked_at < p_checked_before))
     OR m.auth_checked_at IS NULL OR m.auth_checked_at < p_checked_before
  ORDER BY least(coalesce(m.tracking_checked_at, '-infinity'), coalesce(m.auth_checked_at, '-infinity'))
  LIMIT p_limit
$$;

--
-- Name: mailbox_oauth_session_by_state(bytea); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.mailbox_oauth_session_by_state(p_state_hash bytea) RETURNS TABLE(organization_id uuid, id uuid)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public'
    AS $$ SELECT organization_id, id FROM mailbox_oauth_sessions WHERE state_hash = p_state_hash $$;

--
-- Name: mailbox_sync_unleased(timestamp with time zone, integer); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.mailbox_sync_unleased(p_now timestamp with time zone, p_limit integer) RETURNS TABLE(organization_id uuid, id uuid)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public'
    AS $$
  SELECT m.organization_id, m.id FROM mailboxes m
  LEFT JOIN mailbox_sync s ON s.organization_id = m.organization_id AND s.mailbox_id = m.id
  WHERE m.status = 'active' AND m.imap_host <> '' AND (s.lease_until IS NULL OR s.lease_until < p_now)
  ORDER BY s.lease_until NULLS FIRST
  LIMIT p_limit
$$;

--
-- Name: webhook_endpoints; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.webhook_endpoints (
    organization_id uuid NOT NULL,
    id uuid NOT NULL,
    url text NOT NULL,
    description text DEFAULT ''::text NOT NULL,
    event_types text[] DEFAULT '{}'::text[] NOT NULL,
    enabled boolean DEFAULT true NOT NULL,
    secret_sealed bytea NOT NULL,
    secret_generation integer DEFAULT 1 NOT NULL,
    previous_secret_sealed bytea,
    verified_at timestamp with time zone,
    ownership_confirmed boolean DEFAULT false NOT NULL,
    oauth_client_id uuid,
    last_success_at timestamp with time zone,
    last_failure_at timestamp with time zone,
    last_failure_reason text,
    consecutive_failures integer DEFAULT 0 NOT NULL,
    failing_since timestamp with time zone,
    disabled_reason text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT webhook_endpoints_description_check CHECK ((length(description) <= 500)),
    CONSTRAINT webhook_endpoints_event_types_check CHECK ((cardinality(event_types) <= 100)),
    CONSTRAINT webhook_endpoints_url_check CHECK (((length(url) >= 1) AND (length(url) <= 2048)))
);

--
-- Name: oauth_app_webhook_endpoints(uuid); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.oauth_app_webhook_endpoints(p_client_id uuid) RETURNS SETOF public.webhook_endpoints
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public'
    AS $$
  SELECT e.*
  FROM oauth_clients c
  JOIN webhook_endpoints e ON e.oauth_client_id = c.id
  WHERE c.id = p_client_id AND c.organization_id = current_org()
  ORDER BY e.created_at, e.organization_id
$$;

--
-- Name: oauth_app_webhook_endpoints_sync(uuid, boolean); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.oauth_app_webhook_endpoints_sync(p_client_id uuid, p_rearm boolean) RETURNS bigint
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public'
    AS $$
DECLARE
  v_url text;
  v_name text;
  v_changed bigint;
  v_created bigint;
BEGIN
  SELECT webhook_url, name INTO v_url, v_name FROM oauth_clients
  WHERE id = p_client_id AND organization_id = current_org();
  IF NOT FOUND THEN
    RETURN 0;
  END IF;
  IF v_url = '' THEN
    DELETE FROM webhook_endpoints WHERE oauth_client_id = p_client_id;
    GET DIAGNOSTICS v_changed = ROW_COUNT;
    RETURN v_changed;
  END IF;
  UPDATE webhook_endpoints
  SET url = v_url, updated_at = now(),
      verified_at = CASE WHEN p_rearm THEN NULL ELSE verified_at END,
      ownership_confirmed = ownership_confirmed AND NOT p_rearm
  WHERE oauth_client_id = p_client_id AND url <> v_url;
  GET DIAGNOSTICS v_changed = ROW_COUNT;
  INSERT INTO webhook_endpoints (organization_id, id, url, description, secret_sealed, oauth_client_id)
  SELECT g.organization_id, gen_random_uuid(), v_url, left('Managed by the OAuth app ' || v_name, 500), '\x'::bytea, p_client_id
  FROM oauth_grants g
  WHERE g.client_id = p_client_id AND g.revoked_at IS NULL
  ON CONFLICT (organization_id, oauth_client_id) WHERE oauth_client_id IS NOT NULL DO NOTHING;
  GET DIAGNOSTICS v_created = ROW_COUNT;
  RETURN v_changed + v_created;
END
$$;

--
-- Name: oauth_clients; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.oauth_clients (
    id uuid NOT NULL,
    organization_id uuid,
    client_id text NOT NULL,
    client_type text NOT NULL,
    token_endpoint_auth_method text NOT NULL,
    secret_hash bytea,
    name text NOT NULL,
    description text DEFAULT ''::text NOT NULL,
    logo text DEFAULT ''::text NOT NULL,
    website text DEFAULT ''::text NOT NULL,
    policy_uri text DEFAULT ''::text NOT NULL,
    tos_uri text DEFAULT ''::text NOT NULL,
    contacts text[] DEFAULT '{}'::text[] NOT NULL,
    software_id text DEFAULT ''::text NOT NULL,
    software_version text DEFAULT ''::text NOT NULL,
    redirect_uris text[] NOT NULL,
    grant_types text[] NOT NULL,
    scopes bigint NOT NULL,
    allowed_webhook_domains text[] DEFAULT '{}'::text[] NOT NULL,
    webhook_url text DEFAULT ''::text NOT NULL,
    webhook_events text[] DEFAULT '{}'::text[] NOT NULL,
    webhook_secret_sealed bytea,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT oauth_clients_allowed_webhook_domains_check CHECK ((cardinality(allowed_webhook_domains) <= 50)),
    CONSTRAINT oauth_clients_check CHECK (((client_type = 'public'::text) = (token_endpoint_auth_method = 'none'::text))),
    CONSTRAINT oauth_clients_check1 CHECK (((client_type = 'public'::text) = (secret_hash IS NULL))),
    CONSTRAINT oauth_clients_check2 CHECK (((organization_id IS NOT NULL) OR (webhook_url = ''::text))),
    CONSTRAINT oauth_clients_client_id_check CHECK (((length(client_id) >= 1) AND (length(client_id) <= 100))),
    CONSTRAINT oauth_clients_client_type_check CHECK ((client_type = ANY (ARRAY['confidential'::text, 'public'::text]))),
    CONSTRAINT oauth_clients_contacts_check CHECK ((cardinality(contacts) <= 20)),
    CONSTRAINT oauth_clients_description_check CHECK ((length(description) <= 2000)),
    CONSTRAINT oauth_clients_logo_check CHECK ((length(logo) <= 2000)),
    CONSTRAINT oauth_clients_name_check CHECK (((length(name) >= 1) AND (length(name) <= 255))),
    CONSTRAINT oauth_clients_policy_uri_check CHECK ((length(policy_uri) <= 2000)),
    CONSTRAINT oauth_clients_redirect_uris_check CHECK (((cardinality(redirect_uris) >= 1) AND (cardinality(redirect_uris) <= 20))),
    CONSTRAINT oauth_clients_scopes_check CHECK ((scopes >= 0)),
    CONSTRAINT oauth_clients_software_id_check CHECK ((length(software_id) <= 255)),
    CONSTRAINT oauth_clients_software_version_check CHECK ((length(software_version) <= 255)),
    CONSTRAINT oauth_clients_token_endpoint_auth_method_check CHECK ((token_endpoint_auth_method = ANY (ARRAY['none'::text, 'client_secret_basic'::text, 'client_secret_post'::text]))),
    CONSTRAINT oauth_clients_tos_uri_check CHECK ((length(tos_uri) <= 2000)),
    CONSTRAINT oauth_clients_webhook_url_check CHECK ((length(webhook_url) <= 2000)),
    CONSTRAINT oauth_clients_website_check CHECK ((length(website) <= 2000))
);

--
-- Name: oauth_client_lookup(text); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.oauth_client_lookup(p_client_id text) RETURNS SETOF public.oauth_clients
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public'
    AS $$ SELECT * FROM oauth_clients WHERE client_id = p_client_id $$;

--
-- Name: oauth_grant_organization(uuid); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.oauth_grant_organization(p_grant_id uuid) RETURNS uuid
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public'
    AS $$ SELECT organization_id FROM oauth_grants WHERE id = p_grant_id $$;

--
-- Name: oauth_tokens; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.oauth_tokens (
    organization_id uuid NOT NULL,
    signature text NOT NULL,
    kind text NOT NULL,
    grant_id uuid NOT NULL,
    scopes bigint NOT NULL,
    request jsonb NOT NULL,
    active boolean DEFAULT true NOT NULL,
    expires_at timestamp with time zone NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT oauth_tokens_kind_check CHECK ((kind = ANY (ARRAY['authorize_code'::text, 'access_token'::text, 'refresh_token'::text, 'pkce'::text]))),
    CONSTRAINT oauth_tokens_scopes_check CHECK ((scopes >= 0)),
    CONSTRAINT oauth_tokens_signature_check CHECK (((length(signature) >= 1) AND (length(signature) <= 200)))
);

--
-- Name: oauth_token_lookup(text, text); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.oauth_token_lookup(p_kind text, p_signature text) RETURNS SETOF public.oauth_tokens
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public'
    AS $$ SELECT * FROM oauth_tokens WHERE kind = p_kind AND signature = p_signature $$;

--
-- Name: oauth_token_sweep(timestamp with time zone); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.oauth_token_sweep(p_before timestamp with time zone) RETURNS bigint
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public'
    AS $$
  WITH gone AS (DELETE FROM oauth_tokens WHERE expires_at < p_before RETURNING 1)
  SELECT count(*) FROM gone
$$;

--
-- Name: organizations_delete_contacts(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.organizations_delete_contacts() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'public'
    AS $$
BEGIN
  DELETE FROM contacts WHERE organization_id IN (SELECT id FROM old_rows);
  RETURN NULL;
END $$;

--
-- Name: rate_limit_take(uuid, integer, integer); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.rate_limit_take(p_credential uuid, p_limit integer, p_window_seconds integer) RETURNS integer
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public'
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

--
-- Name: river_job_state_in_bitmask(bit, public.river_job_state); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.river_job_state_in_bitmask(bitmask bit, state public.river_job_state) RETURNS boolean
    LANGUAGE sql IMMUTABLE
    AS $$
    SELECT CASE state
        WHEN 'available' THEN get_bit(bitmask, 7)
        WHEN 'cancelled' THEN get_bit(bitmask, 6)
        WHEN 'completed' THEN get_bit(bitmask, 5)
        WHEN 'discarded' THEN get_bit(bitmask, 4)
        WHEN 'pending'   THEN get_bit(bitmask, 3)
        WHEN 'retryable' THEN get_bit(bitmask, 2)
        WHEN 'running'   THEN get_bit(bitmask, 1)
        WHEN 'scheduled' THEN get_bit(bitmask, 0)
        ELSE 0
    END = 1;
$$;

--
-- Name: webhook_app(uuid); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.webhook_app(p_client_id uuid) RETURNS TABLE(webhook_url text, webhook_events text[], allowed_webhook_domains text[], webhook_secret_sealed bytea, scopes bigint)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public'
    AS $$
  SELECT c.webhook_url, c.webhook_events, c.allowed_webhook_domains, c.webhook_secret_sealed, c.scopes
  FROM oauth_clients c
  WHERE c.id = p_client_id
    AND EXISTS (SELECT 1 FROM webhook_endpoints e WHERE e.organization_id = current_org() AND e.oauth_client_id = p_client_id)
$$;

--
-- Name: webhook_deliveries; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.webhook_deliveries (
    organization_id uuid NOT NULL,
    id uuid NOT NULL,
    endpoint_id uuid NOT NULL,
    event_id uuid NOT NULL,
    event_type text NOT NULL,
    status text DEFAULT 'pending'::text NOT NULL,
    attempt_count integer DEFAULT 0 NOT NULL,
    max_attempts integer DEFAULT 8 NOT NULL,
    next_attempt_at timestamp with time zone DEFAULT now() NOT NULL,
    last_attempt_at timestamp with time zone,
    lease_until timestamp with time zone,
    secret_generation integer DEFAULT 1 NOT NULL,
    response_status integer,
    response_body_excerpt text,
    error_reason text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT webhook_deliveries_response_body_excerpt_check CHECK ((length(response_body_excerpt) <= 1024)),
    CONSTRAINT webhook_deliveries_status_check CHECK ((status = ANY (ARRAY['pending'::text, 'in_flight'::text, 'delivered'::text, 'failed'::text, 'abandoned'::text])))
);

--
-- Name: webhook_app_deliveries(uuid, text, text, timestamp with time zone, uuid, integer); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.webhook_app_deliveries(p_client_id uuid, p_status text, p_event_type text, p_before_created_at timestamp with time zone, p_before_id uuid, p_limit integer) RETURNS SETOF public.webhook_deliveries
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public'
    AS $$
  SELECT d.*
  FROM oauth_clients c
  JOIN webhook_endpoints e ON e.oauth_client_id = c.id
  JOIN webhook_deliveries d ON d.organization_id = e.organization_id AND d.endpoint_id = e.id
  WHERE c.id = p_client_id AND c.organization_id = current_org()
    AND (p_status IS NULL OR d.status = p_status)
    AND (p_event_type IS NULL OR d.event_type = p_event_type)
    AND (p_before_created_at IS NULL OR (d.created_at, d.id) < (p_before_created_at, p_before_id))
  ORDER BY d.created_at DESC, d.id DESC
  LIMIT p_limit
$$;

--
-- Name: event_outbox; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.event_outbox (
    organization_id uuid NOT NULL,
    id uuid NOT NULL,
    event_type text NOT NULL,
    data jsonb NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    dispatched_at timestamp with time zone,
    CONSTRAINT event_outbox_event_type_check CHECK (((length(event_type) >= 1) AND (length(event_type) <= 100)))
);

--
-- Name: webhook_app_events(uuid, uuid[], uuid[]); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.webhook_app_events(p_client_id uuid, p_organization_ids uuid[], p_event_ids uuid[]) RETURNS SETOF public.event_outbox
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public'
    AS $$
  SELECT o.*
  FROM unnest(p_organization_ids, p_event_ids) AS k (organization_id, id)
  JOIN event_outbox o ON o.organization_id = k.organization_id AND o.id = k.id
  WHERE EXISTS (SELECT 1 FROM oauth_clients c WHERE c.id = p_client_id AND c.organization_id = current_org())
    AND EXISTS (SELECT 1 FROM webhook_endpoints e
                JOIN webhook_deliveries d ON d.organization_id = e.organization_id AND d.endpoint_id = e.id
                WHERE e.organization_id = o.organization_id AND e.oauth_client_id = p_client_id AND d.event_id = o.id)
$$;

--
-- Name: webhook_delivery_stalled(timestamp with time zone, timestamp with time zone, integer); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.webhook_delivery_stalled(p_now timestamp with time zone, p_due_before timestamp with time zone, p_limit integer) RETURNS TABLE(organization_id uuid, id uuid)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public'
    AS $$
  SELECT d.organization_id, d.id
  FROM webhook_deliveries d
  WHERE d.status IN ('pending', 'failed', 'in_flight') AND d.next_attempt_at < p_now
    AND ((d.status <> 'in_flight' AND d.next_attempt_at < p_due_before)
         OR (d.status = 'in_flight' AND d.lease_until < p_now))
  ORDER BY d.next_attempt_at
  LIMIT p_limit
$$;

--
-- Name: webhook_limits_sweep(timestamp with time zone, timestamp with time zone); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.webhook_limits_sweep(p_windows_before timestamp with time zone, p_drops_before timestamp with time zone) RETURNS bigint
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public'
    AS $$
  WITH w AS (DELETE FROM webhook_rate_windows WHERE window_start < p_windows_before RETURNING 1),
       d AS (DELETE FROM webhook_throttle_drops WHERE window_start < p_drops_before RETURNING 1)
  SELECT (SELECT count(*) FROM w) + (SELECT count(*) FROM d)
$$;

--
-- Name: agent_policies; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.agent_policies (
    organization_id uuid NOT NULL,
    id uuid NOT NULL,
    name text NOT NULL,
    enabled boolean DEFAULT true NOT NULL,
    api_key_id uuid,
    oauth_grant_id uuid,
    capabilities text[] NOT NULL,
    mailbox_ids uuid[] NOT NULL,
    max_recipients_per_run integer NOT NULL,
    max_recipients_per_day integer NOT NULL,
    max_actions_per_day integer NOT NULL,
    max_monthly_mailbox_spend_cents bigint,
    expires_at timestamp with time zone NOT NULL,
    created_by uuid,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT agent_policies_capabilities_check CHECK ((((cardinality(capabilities) >= 1) AND (cardinality(capabilities) <= 4)) AND (capabilities <@ ARRAY['campaign.launch'::text, 'email.compose'::text, 'inbox.reply'::text, 'mailbox.provision'::text]))),
    CONSTRAINT agent_policies_check CHECK (((api_key_id IS NULL) <> (oauth_grant_id IS NULL))),
    CONSTRAINT agent_policies_check1 CHECK (((NOT ('mailbox.provision'::text = ANY (capabilities))) OR (max_monthly_mailbox_spend_cents IS NOT NULL))),
    CONSTRAINT agent_policies_mailbox_ids_check CHECK (((cardinality(mailbox_ids) >= 1) AND (cardinality(mailbox_ids) <= 1000))),
    CONSTRAINT agent_policies_max_actions_per_day_check CHECK ((max_actions_per_day >= 1)),
    CONSTRAINT agent_policies_max_monthly_mailbox_spend_cents_check CHECK ((max_monthly_mailbox_spend_cents >= 0)),
    CONSTRAINT agent_policies_max_recipients_per_day_check CHECK ((max_recipients_per_day >= 1)),
    CONSTRAINT agent_policies_max_recipients_per_run_check CHECK ((max_recipients_per_run >= 1)),
    CONSTRAINT agent_policies_name_check CHECK (((length(name) >= 1) AND (length(name) <= 255)))
);

--
-- Name: agent_policy_usage; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.agent_policy_usage (
    organization_id uuid NOT NULL,
    policy_id uuid NOT NULL,
    day date NOT NULL,
    recipients integer DEFAULT 0 NOT NULL,
    actions integer DEFAULT 0 NOT NULL,
    CONSTRAINT agent_policy_usage_actions_check CHECK ((actions >= 0)),
    CONSTRAINT agent_policy_usage_recipients_check CHECK ((recipients >= 0))
);

--
-- Name: analytics_campaign_days; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.analytics_campaign_days (
    organization_id uuid NOT NULL,
    day date NOT NULL,
    sent bigint DEFAULT 0 NOT NULL,
    opens bigint DEFAULT 0 NOT NULL,
    machine_opens bigint DEFAULT 0 NOT NULL,
    clicks bigint DEFAULT 0 NOT NULL,
    machine_clicks bigint DEFAULT 0 NOT NULL,
    replies bigint DEFAULT 0 NOT NULL,
    intent_positive bigint DEFAULT 0 NOT NULL,
    intent_negative bigint DEFAULT 0 NOT NULL,
    intent_question bigint DEFAULT 0 NOT NULL,
    intent_neutral bigint DEFAULT 0 NOT NULL,
    intent_out_of_office bigint DEFAULT 0 NOT NULL,
    intent_automated bigint DEFAULT 0 NOT NULL,
    bounces_hard bigint DEFAULT 0 NOT NULL,
    bounces_soft bigint DEFAULT 0 NOT NULL,
    complaints bigint DEFAULT 0 NOT NULL,
    unsubscribes bigint DEFAULT 0 NOT NULL,
    placement_inbox bigint DEFAULT 0 NOT NULL,
    placement_spam bigint DEFAULT 0 NOT NULL,
    campaign_id uuid NOT NULL
);

--
-- Name: analytics_campaign_hours; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.analytics_campaign_hours (
    organization_id uuid NOT NULL,
    sent bigint DEFAULT 0 NOT NULL,
    opens bigint DEFAULT 0 NOT NULL,
    machine_opens bigint DEFAULT 0 NOT NULL,
    clicks bigint DEFAULT 0 NOT NULL,
    machine_clicks bigint DEFAULT 0 NOT NULL,
    replies bigint DEFAULT 0 NOT NULL,
    intent_positive bigint DEFAULT 0 NOT NULL,
    intent_negative bigint DEFAULT 0 NOT NULL,
    intent_question bigint DEFAULT 0 NOT NULL,
    intent_neutral bigint DEFAULT 0 NOT NULL,
    intent_out_of_office bigint DEFAULT 0 NOT NULL,
    intent_automated bigint DEFAULT 0 NOT NULL,
    bounces_hard bigint DEFAULT 0 NOT NULL,
    bounces_soft bigint DEFAULT 0 NOT NULL,
    complaints bigint DEFAULT 0 NOT NULL,
    unsubscribes bigint DEFAULT 0 NOT NULL,
    placement_inbox bigint DEFAULT 0 NOT NULL,
    placement_spam bigint DEFAULT 0 NOT NULL,
    campaign_id uuid NOT NULL,
    hour timestamp with time zone NOT NULL,
    CONSTRAINT analytics_campaign_hours_hour_check CHECK ((date_trunc('hour'::text, (hour AT TIME ZONE 'UTC'::text)) = (hour AT TIME ZONE 'UTC'::text)))
);

--
-- Name: analytics_engagement; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.analytics_engagement (
    organization_id uuid NOT NULL,
    campaign_id uuid NOT NULL,
    dimension text NOT NULL,
    key text NOT NULL,
    contact_id uuid NOT NULL,
    clicked boolean DEFAULT false NOT NULL,
    CONSTRAINT analytics_engagement_dimension_check CHECK ((dimension = ANY (ARRAY['country'::text, 'client'::text, 'device'::text]))),
    CONSTRAINT analytics_engagement_key_check CHECK ((length(key) <= 64))
);

--
-- Name: analytics_mailbox_days; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.analytics_mailbox_days (
    organization_id uuid NOT NULL,
    day date NOT NULL,
    kind text NOT NULL,
    sent bigint DEFAULT 0 NOT NULL,
    opens bigint DEFAULT 0 NOT NULL,
    machine_opens bigint DEFAULT 0 NOT NULL,
    clicks bigint DEFAULT 0 NOT NULL,
    machine_clicks bigint DEFAULT 0 NOT NULL,
    replies bigint DEFAULT 0 NOT NULL,
    intent_positive bigint DEFAULT 0 NOT NULL,
    intent_negative bigint DEFAULT 0 NOT NULL,
    intent_question bigint DEFAULT 0 NOT NULL,
    intent_neutral bigint DEFAULT 0 NOT NULL,
    intent_out_of_office bigint DEFAULT 0 NOT NULL,
    intent_automated bigint DEFAULT 0 NOT NULL,
    bounces_hard bigint DEFAULT 0 NOT NULL,
    bounces_soft bigint DEFAULT 0 NOT NULL,
    complaints bigint DEFAULT 0 NOT NULL,
    unsubscribes bigint DEFAULT 0 NOT NULL,
    placement_inbox bigint DEFAULT 0 NOT NULL,
    placement_spam bigint DEFAULT 0 NOT NULL,
    mailbox_id uuid NOT NULL,
    provider text DEFAULT ''::text NOT NULL,
    CONSTRAINT analytics_mailbox_days_provider_check CHECK ((length(provider) <= 64)),
    CONSTRAINT analytics_org_days_kind_check CHECK ((kind = ANY (ARRAY['campaign'::text, 'direct'::text, 'warmup'::text])))
);

--
-- Name: analytics_org_days; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.analytics_org_days (
    organization_id uuid NOT NULL,
    day date NOT NULL,
    kind text NOT NULL,
    sent bigint DEFAULT 0 NOT NULL,
    opens bigint DEFAULT 0 NOT NULL,
    machine_opens bigint DEFAULT 0 NOT NULL,
    clicks bigint DEFAULT 0 NOT NULL,
    machine_clicks bigint DEFAULT 0 NOT NULL,
    replies bigint DEFAULT 0 NOT NULL,
    intent_positive bigint DEFAULT 0 NOT NULL,
    intent_negative bigint DEFAULT 0 NOT NULL,
    intent_question bigint DEFAULT 0 NOT NULL,
    intent_neutral bigint DEFAULT 0 NOT NULL,
    intent_out_of_office bigint DEFAULT 0 NOT NULL,
    intent_automated bigint DEFAULT 0 NOT NULL,
    bounces_hard bigint DEFAULT 0 NOT NULL,
    bounces_soft bigint DEFAULT 0 NOT NULL,
    complaints bigint DEFAULT 0 NOT NULL,
    unsubscribes bigint DEFAULT 0 NOT NULL,
    placement_inbox bigint DEFAULT 0 NOT NULL,
    placement_spam bigint DEFAULT 0 NOT NULL,
    CONSTRAINT analytics_org_days_kind_check CHECK ((kind = ANY (ARRAY['campaign'::text, 'direct'::text, 'warmup'::text])))
);

--
-- Name: analytics_step_days; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.analytics_step_days (
    organization_id uuid NOT NULL,
    day date NOT NULL,
    sent bigint DEFAULT 0 NOT NULL,
    opens bigint DEFAULT 0 NOT NULL,
    machine_opens bigint DEFAULT 0 NOT NULL,
    clicks bigint DEFAULT 0 NOT NULL,
    machine_clicks bigint DEFAULT 0 NOT NULL,
    replies bigint DEFAULT 0 NOT NULL,
    intent_positive bigint DEFAULT 0 NOT NULL,
    intent_negative bigint DEFAULT 0 NOT NULL,
    intent_question bigint DEFAULT 0 NOT NULL,
    intent_neutral bigint DEFAULT 0 NOT NULL,
    intent_out_of_office bigint DEFAULT 0 NOT NULL,
    intent_automated bigint DEFAULT 0 NOT NULL,
    bounces_hard bigint DEFAULT 0 NOT NULL,
    bounces_soft bigint DEFAULT 0 NOT NULL,
    complaints bigint DEFAULT 0 NOT NULL,
    unsubscribes bigint DEFAULT 0 NOT NULL,
    placement_inbox bigint DEFAULT 0 NOT NULL,
    placement_spam bigint DEFAULT 0 NOT NULL,
    campaign_id uuid NOT NULL,
    step_id uuid NOT NULL,
    variant_id uuid NOT NULL
);

--
-- Name: api_key_usage_logs; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.api_key_usage_logs (
    organization_id uuid NOT NULL,
    id uuid NOT NULL,
    api_key_id uuid NOT NULL,
    endpoint text NOT NULL,
    method text NOT NULL,
    ip_address text DEFAULT ''::text NOT NULL,
    user_agent text DEFAULT ''::text NOT NULL,
    response_code integer NOT NULL,
    response_time_ms integer NOT NULL,
    created_at timestamp with time zone NOT NULL,
    CONSTRAINT api_key_usage_logs_endpoint_check CHECK ((length(endpoint) <= 300)),
    CONSTRAINT api_key_usage_logs_method_check CHECK ((length(method) <= 10))
);

--
-- Name: app_connections; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.app_connections (
    organization_id uuid NOT NULL,
    id uuid NOT NULL,
    name text NOT NULL,
    base_url text NOT NULL,
    secret_sealed bytea NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT app_connections_base_url_check CHECK (((length(base_url) >= 9) AND (length(base_url) <= 2048))),
    CONSTRAINT app_connections_name_check CHECK (((length(name) >= 1) AND (length(name) <= 100)))
);

--
-- Name: approvals; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.approvals (
    organization_id uuid NOT NULL,
    id uuid NOT NULL,
    run_id uuid,
    action_type text NOT NULL,
    status text DEFAULT 'pending'::text NOT NULL,
    payload jsonb NOT NULL,
    reasons text[] DEFAULT '{}'::text[] NOT NULL,
    policy_id uuid,
    credential_kind text NOT NULL,
    credential_id uuid NOT NULL,
    requested_by_user_id uuid,
    decided_by uuid,
    decision_reason text DEFAULT ''::text NOT NULL,
    decided_at timestamp with time zone,
    executed_at timestamp with time zone,
    result jsonb,
    expires_at timestamp with time zone NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT approvals_action_type_check CHECK ((action_type = ANY (ARRAY['campaign.launch'::text, 'email.compose'::text, 'inbox.reply'::text, 'mailbox.provision'::text]))),
    CONSTRAINT approvals_credential_kind_check CHECK ((credential_kind = ANY (ARRAY['api_key'::text, 'oauth'::text, 'session'::text]))),
    CONSTRAINT approvals_decision_reason_check CHECK ((length(decision_reason) <= 1000)),
    CONSTRAINT approvals_payload_check CHECK ((jsonb_typeof(payload) = 'object'::text)),
    CONSTRAINT approvals_status_check CHECK ((status = ANY (ARRAY['pending'::text, 'approved'::text, 'denied'::text, 'expired'::text, 'executed'::text])))
);

--
-- Name: audit_log; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.audit_log (
    organization_id uuid NOT NULL,
    id uuid NOT NULL,
    actor_type text NOT NULL,
    actor_id uuid,
    action text NOT NULL,
    target_type text DEFAULT ''::text NOT NULL,
    target_id text DEFAULT ''::text NOT NULL,
    metadata jsonb DEFAULT '{}'::jsonb NOT NULL,
    ip_address text DEFAULT ''::text NOT NULL,
    user_agent text DEFAULT ''::text NOT NULL,
    request_id text DEFAULT ''::text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    user_id uuid,
    event text DEFAULT ''::text NOT NULL,
    CONSTRAINT audit_log_action_check CHECK (((length(action) >= 1) AND (length(action) <= 100))),
    CONSTRAINT audit_log_actor_type_check CHECK ((actor_type = ANY (ARRAY['user'::text, 'api_key'::text, 'oauth_app'::text, 'system'::text]))),
    CONSTRAINT audit_log_event_check CHECK ((length(event) <= 100))
);

--
-- Name: auth_challenges; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.auth_challenges (
    id uuid NOT NULL,
    kind text NOT NULL,
    user_id uuid,
    email text DEFAULT ''::text NOT NULL,
    code_hash bytea,
    payload jsonb DEFAULT '{}'::jsonb NOT NULL,
    attempts integer DEFAULT 0 NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    expires_at timestamp with time zone NOT NULL,
    consumed_at timestamp with time zone,
    CONSTRAINT auth_challenges_kind_check CHECK ((kind = ANY (ARRAY['login'::text, 'register'::text, 'reset'::text, 'two_fa'::text, 'sso_handoff'::text, 'sso_state'::text, 'passkey_register'::text, 'passkey_login'::text])))
);

--
-- Name: campaign_attachments; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.campaign_attachments (
    organization_id uuid NOT NULL,
    campaign_id uuid NOT NULL,
    id uuid NOT NULL,
    step_id uuid,
    filename text NOT NULL,
    mime_type text NOT NULL,
    size integer NOT NULL,
    sha256 bytea NOT NULL,
    content bytea NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT campaign_attachments_filename_check CHECK (((length(filename) >= 1) AND (length(filename) <= 255))),
    CONSTRAINT campaign_attachments_mime_type_check CHECK (((length(mime_type) >= 3) AND (length(mime_type) <= 255))),
    CONSTRAINT campaign_attachments_sha256_check CHECK ((length(sha256) = 32)),
    CONSTRAINT campaign_attachments_size_check CHECK (((size >= 1) AND (size <= 5242880)))
);

--
-- Name: campaign_creation_days; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.campaign_creation_days (
    organization_id uuid NOT NULL,
    day date NOT NULL,
    created integer DEFAULT 0 NOT NULL,
    CONSTRAINT campaign_creation_days_created_check CHECK ((created >= 0))
);

--
-- Name: campaign_labels; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.campaign_labels (
    organization_id uuid NOT NULL,
    campaign_id uuid NOT NULL,
    label_id uuid NOT NULL
);

--
-- Name: campaign_leads; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.campaign_leads (
    organization_id uuid NOT NULL,
    campaign_id uuid NOT NULL,
    contact_id uuid NOT NULL,
    state text DEFAULT 'pending'::text NOT NULL,
    sent integer DEFAULT 0 NOT NULL,
    opened integer DEFAULT 0 NOT NULL,
    machine_opened integer DEFAULT 0 NOT NULL,
    clicked integer DEFAULT 0 NOT NULL,
    replied integer DEFAULT 0 NOT NULL,
    bounced integer DEFAULT 0 NOT NULL,
    current_step text DEFAULT ''::text NOT NULL,
    sender text DEFAULT ''::text NOT NULL,
    failure_reason text DEFAULT ''::text NOT NULL,
    hold_since timestamp with time zone,
    hold_until timestamp with time zone,
    hold_reason text DEFAULT ''::text NOT NULL,
    hold_source text,
    last_activity_at timestamp with time zone,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    entered_at timestamp with time zone DEFAULT now(),
    step_position integer DEFAULT 0 NOT NULL,
    due_at timestamp with time zone DEFAULT now(),
    wait_reason text DEFAULT ''::text NOT NULL,
    mailbox_id uuid,
    variant_id uuid,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    task_id uuid,
    attempts smallint DEFAULT 0 NOT NULL,
    thread_refs text[] DEFAULT '{}'::text[] NOT NULL,
    last_step_at timestamp with time zone,
    app jsonb DEFAULT '{}'::jsonb NOT NULL,
    machine_clicked integer DEFAULT 0 NOT NULL,
    CONSTRAINT campaign_leads_app_check CHECK ((jsonb_typeof(app) = 'object'::text)),
    CONSTRAINT campaign_leads_attempts_check CHECK ((attempts >= 0)),
    CONSTRAINT campaign_leads_hold_reason CHECK ((length(hold_reason) <= 200)),
    CONSTRAINT campaign_leads_hold_source_check CHECK ((hold_source = ANY (ARRAY['manual'::text, 'out_of_office'::text, 'negative_reply'::text]))),
    CONSTRAINT campaign_leads_state_check CHECK ((state = ANY (ARRAY['pending'::text, 'active'::text, 'completed'::text, 'failed'::text, 'paused'::text, 'undeliverable'::text]))),
    CONSTRAINT campaign_leads_step_position_check CHECK ((step_position >= 0)),
    CONSTRAINT campaign_leads_thread_refs_check CHECK ((cardinality(thread_refs) <= 100)),
    CONSTRAINT campaign_leads_wait_reason_check CHECK ((length(wait_reason) <= 200))
);

--
-- Name: campaign_logs; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.campaign_logs (
    organization_id uuid NOT NULL,
    campaign_id uuid NOT NULL,
    id uuid NOT NULL,
    contact_id uuid,
    event_type text NOT NULL,
    message text DEFAULT ''::text NOT NULL,
    metadata jsonb DEFAULT '{}'::jsonb NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT campaign_logs_event_type_check CHECK (((length(event_type) >= 1) AND (length(event_type) <= 64))),
    CONSTRAINT campaign_logs_message_check CHECK ((length(message) <= 2000)),
    CONSTRAINT campaign_logs_metadata_check CHECK ((jsonb_typeof(metadata) = 'object'::text))
);

--
-- Name: campaign_mailboxes; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.campaign_mailboxes (
    organization_id uuid NOT NULL,
    campaign_id uuid NOT NULL,
    mailbox_id uuid NOT NULL,
    weight integer DEFAULT 1 NOT NULL,
    enabled boolean DEFAULT true NOT NULL,
    last_sent_at timestamp with time zone,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT campaign_mailboxes_weight_check CHECK (((weight >= 1) AND (weight <= 100)))
);

--
-- Name: campaign_preflight_reports; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.campaign_preflight_reports (
    organization_id uuid NOT NULL,
    campaign_id uuid NOT NULL,
    id uuid NOT NULL,
    passed boolean NOT NULL,
    score integer NOT NULL,
    checks jsonb NOT NULL,
    recommendations jsonb DEFAULT '[]'::jsonb NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT campaign_preflight_reports_checks_check CHECK ((jsonb_typeof(checks) = 'array'::text)),
    CONSTRAINT campaign_preflight_reports_recommendations_check CHECK ((jsonb_typeof(recommendations) = 'array'::text)),
    CONSTRAINT campaign_preflight_reports_score_check CHECK (((score >= 0) AND (score <= 100)))
);

--
-- Name: campaign_segments; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.campaign_segments (
    organization_id uuid NOT NULL,
    campaign_id uuid NOT NULL,
    segment_id uuid NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    enrolled_at timestamp with time zone DEFAULT now() NOT NULL
);

--
-- Name: campaign_send_days; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.campaign_send_days (
    organization_id uuid NOT NULL,
    campaign_id uuid NOT NULL,
    day date NOT NULL,
    sent integer DEFAULT 0 NOT NULL,
    new_leads integer DEFAULT 0 NOT NULL,
    CONSTRAINT campaign_send_days_new_leads_check CHECK ((new_leads >= 0)),
    CONSTRAINT campaign_send_days_sent_check CHECK ((sent >= 0))
);

--
-- Name: campaign_step_runs; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.campaign_step_runs (
    organization_id uuid NOT NULL,
    id uuid NOT NULL,
    campaign_id uuid NOT NULL,
    step_id uuid NOT NULL,
    contact_id uuid NOT NULL,
    kind text NOT NULL,
    status text NOT NULL,
    attempts integer DEFAULT 0 NOT NULL,
    error jsonb,
    output jsonb,
    wait_event_name text DEFAULT ''::text NOT NULL,
    wait_until timestamp with time zone,
    resumed_by_event uuid,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT campaign_step_runs_attempts_check CHECK ((attempts >= 0)),
    CONSTRAINT campaign_step_runs_kind_check CHECK ((kind = ANY (ARRAY['app_action'::text, 'wait_for_event'::text]))),
    CONSTRAINT campaign_step_runs_output_check CHECK (((output IS NULL) OR ((jsonb_typeof(output) = 'object'::text) AND (octet_length((output)::text) <= 65536)))),
    CONSTRAINT campaign_step_runs_status_check CHECK ((status = ANY (ARRAY['running'::text, 'succeeded'::text, 'failed'::text, 'blocked'::text, 'waiting'::text, 'resumed'::text, 'timed_out'::text]))),
    CONSTRAINT campaign_step_runs_wait_event_name_check CHECK ((length(wait_event_name) <= 255))
);

--
-- Name: campaign_steps; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.campaign_steps (
    organization_id uuid NOT NULL,
    campaign_id uuid NOT NULL,
    id uuid NOT NULL,
    "position" integer NOT NULL,
    name text DEFAULT ''::text NOT NULL,
    kind text DEFAULT 'email'::text NOT NULL,
    subject text DEFAULT ''::text NOT NULL,
    body_plain text DEFAULT ''::text NOT NULL,
    body_html text DEFAULT ''::text NOT NULL,
    body_sync boolean DEFAULT true NOT NULL,
    body_code boolean DEFAULT false NOT NULL,
    wait_after integer DEFAULT 0 NOT NULL,
    thread_reply boolean DEFAULT false NOT NULL,
    conditions jsonb,
    action jsonb,
    on_timeout text DEFAULT 'continue'::text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT campaign_steps_action_check CHECK (((action IS NULL) OR (jsonb_typeof(action) = 'object'::text))),
    CONSTRAINT campaign_steps_body_html_check CHECK ((length(body_html) <= 200000)),
    CONSTRAINT campaign_steps_body_plain_check CHECK ((length(body_plain) <= 100000)),
    CONSTRAINT campaign_steps_conditions_check CHECK (((conditions IS NULL) OR (jsonb_typeof(conditions) = 'object'::text))),
    CONSTRAINT campaign_steps_kind_check CHECK ((kind = ANY (ARRAY['email'::text, 'action'::text, 'wait'::text]))),
    CONSTRAINT campaign_steps_name_check CHECK ((length(name) <= 255)),
    CONSTRAINT campaign_steps_on_timeout_check CHECK ((on_timeout = ANY (ARRAY['continue'::text, 'stop'::text]))),
    CONSTRAINT campaign_steps_position_check CHECK ((("position" >= 0) AND ("position" <= 99))),
    CONSTRAINT campaign_steps_subject_check CHECK ((length(subject) <= 998)),
    CONSTRAINT campaign_steps_wait_after_check CHECK (((wait_after >= 0) AND (wait_after <= 365)))
);

--
-- Name: campaign_test_runs; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.campaign_test_runs (
    organization_id uuid NOT NULL,
    campaign_id uuid NOT NULL,
    id uuid NOT NULL,
    contact_id uuid,
    mailbox_id uuid,
    prospect_email text NOT NULL,
    state text DEFAULT 'running'::text NOT NULL,
    current_step_id uuid,
    steps jsonb DEFAULT '[]'::jsonb NOT NULL,
    app_variables jsonb DEFAULT '{}'::jsonb NOT NULL,
    error_code text DEFAULT ''::text NOT NULL,
    error_message text DEFAULT ''::text NOT NULL,
    waiting_event text DEFAULT ''::text NOT NULL,
    waiting_until timestamp with time zone,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    completed_at timestamp with time zone,
    error_fix text DEFAULT ''::text NOT NULL,
    CONSTRAINT campaign_test_runs_app_variables_check CHECK ((jsonb_typeof(app_variables) = 'object'::text)),
    CONSTRAINT campaign_test_runs_error_fix_check CHECK ((length(error_fix) <= 1000)),
    CONSTRAINT campaign_test_runs_prospect_email_check CHECK (((length(prospect_email) >= 3) AND (length(prospect_email) <= 254))),
    CONSTRAINT campaign_test_runs_state_check CHECK ((state = ANY (ARRAY['running'::text, 'waiting_for_event'::text, 'completed'::text, 'failed'::text, 'cancelled'::text]))),
    CONSTRAINT campaign_test_runs_steps_check CHECK ((jsonb_typeof(steps) = 'array'::text))
);

--
-- Name: campaign_variants; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.campaign_variants (
    organization_id uuid NOT NULL,
    campaign_id uuid NOT NULL,
    id uuid NOT NULL,
    step_id uuid,
    name text NOT NULL,
    weight integer DEFAULT 50 NOT NULL,
    subject text DEFAULT ''::text NOT NULL,
    body_plain text DEFAULT ''::text NOT NULL,
    body_html text DEFAULT ''::text NOT NULL,
    is_control boolean DEFAULT false NOT NULL,
    is_active boolean DEFAULT true NOT NULL,
    metadata jsonb DEFAULT '{}'::jsonb NOT NULL,
    promoted_at timestamp with time zone,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT campaign_variants_body_html_check CHECK ((length(body_html) <= 200000)),
    CONSTRAINT campaign_variants_body_plain_check CHECK ((length(body_plain) <= 100000)),
    CONSTRAINT campaign_variants_metadata_check CHECK ((jsonb_typeof(metadata) = 'object'::text)),
    CONSTRAINT campaign_variants_name_check CHECK (((length(name) >= 1) AND (length(name) <= 100))),
    CONSTRAINT campaign_variants_subject_check CHECK ((length(subject) <= 998)),
    CONSTRAINT campaign_variants_weight_check CHECK (((weight >= 0) AND (weight <= 100)))
);

--
-- Name: campaigns; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.campaigns (
    organization_id uuid NOT NULL,
    id uuid NOT NULL,
    name text NOT NULL,
    status text DEFAULT 'draft'::text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    user_id uuid,
    description text DEFAULT ''::text NOT NULL,
    kind text DEFAULT 'sequence'::text NOT NULL,
    stop_on_reply boolean DEFAULT true NOT NULL,
    open_tracking boolean DEFAULT false NOT NULL,
    link_tracking boolean DEFAULT false NOT NULL,
    text_only boolean DEFAULT false NOT NULL,
    unsubscribe_header boolean DEFAULT true NOT NULL,
    risky_emails boolean DEFAULT false NOT NULL,
    daily_limit integer DEFAULT 50 NOT NULL,
    cc text[] DEFAULT '{}'::text[] NOT NULL,
    bcc text[] DEFAULT '{}'::text[] NOT NULL,
    start_date timestamp with time zone,
    end_date timestamp with time zone,
    timezone text DEFAULT 'UTC'::text NOT NULL,
    days smallint DEFAULT 31 NOT NULL,
    start_time text DEFAULT '09:00'::text NOT NULL,
    end_time text DEFAULT '17:00'::text NOT NULL,
    schedule_windows jsonb DEFAULT '[]'::jsonb NOT NULL,
    contact_order_by text DEFAULT 'created_at'::text NOT NULL,
    contact_order_dir text DEFAULT 'asc'::text NOT NULL,
    contact_order_field text,
    sender_strategy text DEFAULT 'tags'::text NOT NULL,
    rotation_mode text DEFAULT 'round_robin'::text NOT NULL,
    ramp_enabled boolean DEFAULT false NOT NULL,
    ramp_start integer DEFAULT 10 NOT NULL,
    ramp_increment integer DEFAULT 5 NOT NULL,
    ramp_ceiling integer DEFAULT 50 NOT NULL,
    ramp_level integer DEFAULT 0 NOT NULL,
    esp_match_mode text DEFAULT 'off'::text NOT NULL,
    max_new_leads_per_day integer DEFAULT 0 NOT NULL,
    prioritize_new_leads boolean DEFAULT false NOT NULL,
    entry_delay_minutes integer DEFAULT 0 NOT NULL,
    continuous boolean DEFAULT false NOT NULL,
    idle_since timestamp with time zone,
    tracking_domain text DEFAULT ''::text NOT NULL,
    tracking_domain_verified_at timestamp with time zone,
    utm_tracking boolean DEFAULT false NOT NULL,
    utm_source text DEFAULT ''::text NOT NULL,
    utm_medium text DEFAULT ''::text NOT NULL,
    utm_campaign text DEFAULT ''::text NOT NULL,
    advanced jsonb DEFAULT '{}'::jsonb NOT NULL,
    advanced_updated_at timestamp with time zone,
    had_leads boolean DEFAULT false NOT NULL,
    started_at timestamp with time zone,
    completed_at timestamp with time zone,
    paused_reason text DEFAULT ''::text NOT NULL,
    last_status_change_at timestamp with time zone,
    ramp_day date,
    rotation_cursor bigint DEFAULT 0 NOT NULL,
    engine_ran_at timestamp with time zone,
    ab_judged_at timestamp with time zone,
    restart_due boolean DEFAULT false NOT NULL,
    parked_before timestamp with time zone,
    parked_until timestamp with time zone,
    parked_reason text DEFAULT ''::text NOT NULL,
    CONSTRAINT campaigns_advanced_check CHECK ((jsonb_typeof(advanced) = 'object'::text)),
    CONSTRAINT campaigns_bcc_check CHECK ((cardinality(bcc) <= 10)),
    CONSTRAINT campaigns_cc_check CHECK ((cardinality(cc) <= 10)),
    CONSTRAINT campaigns_contact_order_by_check CHECK ((length(contact_order_by) <= 64)),
    CONSTRAINT campaigns_contact_order_dir_check CHECK ((contact_order_dir = ANY (ARRAY['asc'::text, 'desc'::text]))),
    CONSTRAINT campaigns_contact_order_field_check CHECK ((length(contact_order_field) <= 64)),
    CONSTRAINT campaigns_daily_limit_check CHECK (((daily_limit >= 1) AND (daily_limit <= 100000))),
    CONSTRAINT campaigns_days_check CHECK (((days >= 0) AND (days <= 127))),
    CONSTRAINT campaigns_description_check CHECK ((length(description) <= 2000)),
    CONSTRAINT campaigns_end_time_check CHECK ((end_time ~ '^([01][0-9]|2[0-4]):[0-5][0-9]$'::text)),
    CONSTRAINT campaigns_entry_delay_minutes_check CHECK (((entry_delay_minutes >= 0) AND (entry_delay_minutes <= 129600))),
    CONSTRAINT campaigns_esp_match_mode_check CHECK ((esp_match_mode = ANY (ARRAY['off'::text, 'prefer'::text, 'strict'::text]))),
    CONSTRAINT campaigns_kind_check CHECK ((kind = ANY (ARRAY['sequence'::text, 'one_time'::text]))),
    CONSTRAINT campaigns_max_new_leads_per_day_check CHECK (((max_new_leads_per_day >= 0) AND (max_new_leads_per_day <= 1000000))),
    CONSTRAINT campaigns_name_check CHECK (((length(name) >= 1) AND (length(name) <= 255))),
    CONSTRAINT campaigns_parked_reason_check CHECK ((length(parked_reason) <= 200)),
    CONSTRAINT campaigns_paused_reason_check CHECK ((length(paused_reason) <= 500)),
    CONSTRAINT campaigns_ramp_ceiling_check CHECK (((ramp_ceiling >= 1) AND (ramp_ceiling <= 5000))),
    CONSTRAINT campaigns_ramp_increment_check CHECK (((ramp_increment >= 0) AND (ramp_increment <= 5000))),
    CONSTRAINT campaigns_ramp_level_check CHECK ((ramp_level >= 0)),
    CONSTRAINT campaigns_ramp_start_check CHECK (((ramp_start >= 1) AND (ramp_start <= 5000))),
    CONSTRAINT campaigns_rotation_mode_check CHECK ((rotation_mode = ANY (ARRAY['round_robin'::text, 'weighted'::text, 'least_used'::text]))),
    CONSTRAINT campaigns_schedule_windows_check CHECK ((jsonb_typeof(schedule_windows) = 'array'::text)),
    CONSTRAINT campaigns_sender_strategy_check CHECK ((sender_strategy = ANY (ARRAY['tags'::text, 'explicit'::text]))),
    CONSTRAINT campaigns_start_time_check CHECK ((start_time ~ '^([01][0-9]|2[0-3]):[0-5][0-9]$'::text)),
    CONSTRAINT campaigns_status_check CHECK ((status = ANY (ARRAY['draft'::text, 'active'::text, 'paused'::text, 'paused_no_accounts'::text, 'paused_trial_expired'::text, 'completed'::text]))),
    CONSTRAINT campaigns_timezone_check CHECK (((length(timezone) >= 1) AND (length(timezone) <= 64))),
    CONSTRAINT campaigns_tracking_domain_check CHECK ((length(tracking_domain) <= 253)),
    CONSTRAINT campaigns_utm_campaign_check CHECK ((length(utm_campaign) <= 128)),
    CONSTRAINT campaigns_utm_medium_check CHECK ((length(utm_medium) <= 128)),
    CONSTRAINT campaigns_utm_source_check CHECK ((length(utm_source) <= 128))
);

--
-- Name: contact_activities; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.contact_activities (
    organization_id uuid NOT NULL,
    id uuid NOT NULL,
    contact_id uuid NOT NULL,
    user_id uuid,
    activity_type text NOT NULL,
    metadata jsonb DEFAULT '{}'::jsonb NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT contact_activities_activity_type_check CHECK ((activity_type = ANY (ARRAY['email_sent'::text, 'email_opened'::text, 'email_clicked'::text, 'email_replied'::text, 'email_bounced'::text, 'note_added'::text, 'note_updated'::text, 'deal_created'::text, 'deal_stage_changed'::text, 'deal_won'::text, 'deal_lost'::text, 'task_created'::text, 'task_completed'::text, 'contact_created'::text, 'contact_updated'::text, 'campaign_added'::text, 'campaign_removed'::text, 'category_added'::text, 'category_removed'::text]))),
    CONSTRAINT contact_activities_metadata_check CHECK ((jsonb_typeof(metadata) = 'object'::text))
);

--
-- Name: contact_categories; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.contact_categories (
    organization_id uuid NOT NULL,
    contact_id uuid NOT NULL,
    category_id uuid NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL
);

--
-- Name: contact_duplicate_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.contact_duplicate_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

--
-- Name: contact_index_pending; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.contact_index_pending (
    organization_id uuid NOT NULL,
    lo uuid NOT NULL,
    hi uuid NOT NULL,
    CONSTRAINT contact_index_pending_check CHECK ((lo <= hi))
);

--
-- Name: contact_notes; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.contact_notes (
    organization_id uuid NOT NULL,
    id uuid NOT NULL,
    contact_id uuid NOT NULL,
    user_id uuid NOT NULL,
    content text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT contact_notes_content_check CHECK (((length(content) >= 1) AND (length(content) <= 10000)))
);

--
-- Name: contact_stats; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.contact_stats (
    organization_id uuid NOT NULL,
    total bigint DEFAULT 0 NOT NULL,
    subscribed bigint DEFAULT 0 NOT NULL,
    in_campaign bigint DEFAULT 0 NOT NULL,
    not_contacted bigint DEFAULT 0 NOT NULL,
    valid bigint DEFAULT 0 NOT NULL,
    risky bigint DEFAULT 0 NOT NULL,
    invalid bigint DEFAULT 0 NOT NULL,
    unknown bigint DEFAULT 0 NOT NULL,
    pending bigint DEFAULT 0 NOT NULL
);

--
-- Name: contacts; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.contacts (
    organization_id uuid NOT NULL,
    id uuid NOT NULL,
    email character varying(254) NOT NULL,
    duplicate_seq bigint DEFAULT 0 NOT NULL,
    first_name character varying(255) DEFAULT ''::text NOT NULL,
    last_name character varying(255) DEFAULT ''::text NOT NULL,
    company character varying(255) DEFAULT ''::text NOT NULL,
    phone character varying(64) DEFAULT ''::text NOT NULL,
    custom_fields jsonb DEFAULT '{}'::jsonb NOT NULL,
    subscribed boolean DEFAULT true NOT NULL,
    source text DEFAULT 'api'::text NOT NULL,
    campaign_count integer DEFAULT 0 NOT NULL,
    last_contacted_at timestamp with time zone,
    verification_status text DEFAULT 'unknown'::text NOT NULL,
    verification_sub_status text DEFAULT ''::text NOT NULL,
    verification_source text DEFAULT ''::text NOT NULL,
    verification_provider character varying(64) DEFAULT ''::text NOT NULL,
    verification_reason character varying(500) DEFAULT ''::text NOT NULL,
    verification_checked_at timestamp with time zone,
    verification_confidence smallint DEFAULT 0 NOT NULL,
    is_catch_all boolean DEFAULT false NOT NULL,
    esp_provider character varying(64) DEFAULT ''::text NOT NULL,
    esp_resolved_at timestamp with time zone,
    search_ready boolean DEFAULT true NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT contacts_campaign_count_check CHECK ((campaign_count >= 0)),
    CONSTRAINT contacts_custom_fields_check CHECK ((jsonb_typeof(custom_fields) = 'object'::text)),
    CONSTRAINT contacts_email_check CHECK (
CASE
    WHEN (octet_length((email)::text) = length((email)::text)) THEN ((octet_length((email)::text) >= 3) AND ((email)::text = lower(((email)::text COLLATE "C"))))
    ELSE ((length((email)::text) >= 3) AND ((email)::text = lower((email)::text)))
END),
    CONSTRAINT contacts_source_check CHECK ((source = ANY (ARRAY['manual'::text, 'api'::text, 'import'::text, 'form'::text, 'automation'::text]))),
    CONSTRAINT contacts_verification_confidence_check CHECK (((verification_confidence >= 0) AND (verification_confidence <= 100))),
    CONSTRAINT contacts_verification_source_check CHECK ((verification_source = ANY (ARRAY[''::text, 'probe'::text, 'provider'::text, 'imported'::text, 'manual'::text]))),
    CONSTRAINT contacts_verification_status_check CHECK ((verification_status = ANY (ARRAY['valid'::text, 'risky'::text, 'invalid'::text, 'unknown'::text]))),
    CONSTRAINT contacts_verification_sub_status_check CHECK ((verification_sub_status = ANY (ARRAY[''::text, 'catch_all'::text, 'disposable'::text, 'role'::text, 'spamtrap'::text, 'mailbox_full'::text, 'no_mx'::text, 'syntax'::text, 'undisclosed'::text])))
);

--
-- Name: custom_roles; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.custom_roles (
    organization_id uuid NOT NULL,
    id uuid NOT NULL,
    name text NOT NULL,
    description text DEFAULT ''::text NOT NULL,
    permissions bigint NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT custom_roles_description_check CHECK ((length(description) <= 1000)),
    CONSTRAINT custom_roles_name_check CHECK (((length(name) >= 1) AND (length(name) <= 255))),
    CONSTRAINT custom_roles_permissions_check CHECK ((permissions >= 0))
);

--
-- Name: deals; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.deals (
    organization_id uuid NOT NULL,
    id uuid NOT NULL,
    pipeline_id uuid NOT NULL,
    stage_id uuid NOT NULL,
    contact_id uuid,
    name text NOT NULL,
    value numeric(18,2),
    currency text DEFAULT 'USD'::text NOT NULL,
    status text DEFAULT 'open'::text NOT NULL,
    expected_close_date timestamp with time zone,
    won_at timestamp with time zone,
    lost_at timestamp with time zone,
    lost_reason text,
    assigned_to uuid,
    campaign_id uuid,
    source_mailbox_id uuid,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT deals_currency_check CHECK (((length(currency) >= 1) AND (length(currency) <= 8))),
    CONSTRAINT deals_name_check CHECK (((length(name) >= 1) AND (length(name) <= 255))),
    CONSTRAINT deals_status_check CHECK ((status = ANY (ARRAY['open'::text, 'won'::text, 'lost'::text])))
);

--
-- Name: deliverability_events; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.deliverability_events (
    organization_id uuid NOT NULL,
    id uuid NOT NULL,
    event_type text NOT NULL,
    source text NOT NULL,
    at timestamp with time zone NOT NULL,
    recipient_email text NOT NULL,
    contact_id uuid,
    campaign_id uuid,
    task_id uuid,
    mailbox_id uuid,
    provider text DEFAULT ''::text NOT NULL,
    reason text DEFAULT ''::text NOT NULL,
    bounce_type text,
    status_code text DEFAULT ''::text NOT NULL,
    smtp_code integer,
    diagnostic text DEFAULT ''::text NOT NULL,
    feedback_type text DEFAULT ''::text NOT NULL,
    matched_by text DEFAULT ''::text NOT NULL,
    inbound_message_id uuid,
    metadata jsonb DEFAULT '{}'::jsonb NOT NULL,
    idempotency_key text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT deliverability_events_bounce_type_check CHECK ((bounce_type = ANY (ARRAY['hard'::text, 'soft'::text]))),
    CONSTRAINT deliverability_events_check CHECK (((event_type = 'bounce'::text) = (bounce_type IS NOT NULL))),
    CONSTRAINT deliverability_events_diagnostic_check CHECK ((length(diagnostic) <= 2000)),
    CONSTRAINT deliverability_events_event_type_check CHECK ((event_type = ANY (ARRAY['bounce'::text, 'complaint'::text, 'unsubscribe'::text, 'open'::text, 'click'::text, 'reply'::text]))),
    CONSTRAINT deliverability_events_feedback_type_check CHECK ((length(feedback_type) <= 64)),
    CONSTRAINT deliverability_events_idempotency_key_check CHECK (((length(idempotency_key) >= 1) AND (length(idempotency_key) <= 255))),
    CONSTRAINT deliverability_events_matched_by_check CHECK ((length(matched_by) <= 32)),
    CONSTRAINT deliverability_events_metadata_check CHECK (((jsonb_typeof(metadata) = 'object'::text) AND (pg_column_size(metadata) <= 16384))),
    CONSTRAINT deliverability_events_provider_check CHECK ((length(provider) <= 200)),
    CONSTRAINT deliverability_events_reason_check CHECK ((length(reason) <= 1000)),
    CONSTRAINT deliverability_events_recipient_email_check CHECK (((length(recipient_email) >= 1) AND (length(recipient_email) <= 320))),
    CONSTRAINT deliverability_events_smtp_code_check CHECK (((smtp_code >= 200) AND (smtp_code <= 599))),
    CONSTRAINT deliverability_events_source_check CHECK ((source = ANY (ARRAY['dsn'::text, 'arf'::text, 'pipeline'::text, 'ingest'::text, 'one_click'::text, 'link'::text, 'reply'::text, 'action'::text]))),
    CONSTRAINT deliverability_events_status_code_check CHECK ((length(status_code) <= 16))
);

--
-- Name: device_tokens; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.device_tokens (
    token text NOT NULL,
    user_id uuid NOT NULL,
    platform text DEFAULT 'ios'::text NOT NULL,
    environment text DEFAULT 'production'::text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT device_tokens_environment_check CHECK ((environment = ANY (ARRAY['production'::text, 'development'::text]))),
    CONSTRAINT device_tokens_platform_check CHECK ((platform = 'ios'::text)),
    CONSTRAINT device_tokens_token_check CHECK ((token ~ '^[0-9a-f]{1,200}$'::text))
);

--
-- Name: event_consumer_acks; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.event_consumer_acks (
    organization_id uuid NOT NULL,
    event_id uuid NOT NULL,
    consumer text NOT NULL,
    acknowledged_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT event_consumer_acks_consumer_check CHECK ((consumer ~ '^[a-z][a-z0-9_]{0,62}$'::text))
);

--
-- Name: held_leads; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.held_leads (
    organization_id uuid NOT NULL,
    approval_id uuid NOT NULL,
    contact_id uuid NOT NULL,
    campaign_id uuid,
    segment_id uuid,
    via_segment boolean DEFAULT false NOT NULL,
    CONSTRAINT held_leads_check CHECK (((campaign_id IS NULL) <> (segment_id IS NULL))),
    CONSTRAINT held_leads_check1 CHECK (((NOT via_segment) OR (campaign_id IS NOT NULL)))
);

--
-- Name: idempotency_keys; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.idempotency_keys (
    organization_id uuid NOT NULL,
    credential_id uuid NOT NULL,
    key text NOT NULL,
    request_hash bytea NOT NULL,
    state text NOT NULL,
    locked_until timestamp with time zone NOT NULL,
    response_status integer,
    response_content_type text,
    response_body bytea,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    expires_at timestamp with time zone NOT NULL,
    CONSTRAINT idempotency_keys_key_check CHECK (((length(key) >= 1) AND (length(key) <= 255))),
    CONSTRAINT idempotency_keys_state_check CHECK ((state = ANY (ARRAY['in_progress'::text, 'completed'::text])))
);

--
-- Name: inbox_messages; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.inbox_messages (
    organization_id uuid NOT NULL,
    id uuid NOT NULL,
    mailbox_id uuid NOT NULL,
    thread_id uuid NOT NULL,
    folder text NOT NULL,
    folder_role text NOT NULL,
    uid_validity bigint NOT NULL,
    uid bigint NOT NULL,
    message_id text DEFAULT ''::text NOT NULL,
    in_reply_to text DEFAULT ''::text NOT NULL,
    thread_references text[] DEFAULT '{}'::text[] NOT NULL,
    from_email text DEFAULT ''::text NOT NULL,
    from_name text DEFAULT ''::text NOT NULL,
    to_list text[] DEFAULT '{}'::text[] NOT NULL,
    cc_list text[] DEFAULT '{}'::text[] NOT NULL,
    subject text DEFAULT ''::text NOT NULL,
    body_text text DEFAULT ''::text NOT NULL,
    body_html text DEFAULT ''::text NOT NULL,
    flags text[] DEFAULT '{}'::text[] NOT NULL,
    seen boolean DEFAULT false NOT NULL,
    size integer DEFAULT 0 NOT NULL,
    sent_at timestamp with time zone,
    received_at timestamp with time zone NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    bcc_list text[] DEFAULT '{}'::text[] NOT NULL,
    reply_to_list text[] DEFAULT '{}'::text[] NOT NULL,
    mod_seq bigint DEFAULT 0 NOT NULL,
    gmail_id text DEFAULT ''::text NOT NULL,
    snippet text DEFAULT ''::text NOT NULL,
    body_truncated boolean DEFAULT false NOT NULL,
    auto_headers jsonb DEFAULT '{}'::jsonb NOT NULL,
    outbound boolean DEFAULT false NOT NULL,
    move_to text DEFAULT ''::text NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    intent text DEFAULT ''::text NOT NULL,
    intent_confidence real DEFAULT 0 NOT NULL,
    intent_evidence jsonb DEFAULT '[]'::jsonb NOT NULL,
    unsubscribe_request boolean DEFAULT false NOT NULL,
    return_date date,
    classifier text DEFAULT ''::text NOT NULL,
    classified_at timestamp with time zone,
    send_task_id uuid,
    campaign_id uuid,
    contact_id uuid,
    CONSTRAINT inbox_messages_auto_headers_check CHECK ((jsonb_typeof(auto_headers) = 'object'::text)),
    CONSTRAINT inbox_messages_classifier_check CHECK ((length(classifier) <= 100)),
    CONSTRAINT inbox_messages_folder_role_check CHECK ((folder_role = ANY (ARRAY['inbox'::text, 'sent'::text, 'drafts'::text, 'spam'::text, 'trash'::text, 'archive'::text]))),
    CONSTRAINT inbox_messages_gmail_id_check CHECK ((length(gmail_id) <= 32)),
    CONSTRAINT inbox_messages_in_reply_to_check CHECK ((length(in_reply_to) <= 998)),
    CONSTRAINT inbox_messages_intent_check CHECK ((intent = ANY (ARRAY[''::text, 'positive'::text, 'negative'::text, 'question'::text, 'neutral'::text, 'out_of_office'::text, 'automated'::text]))),
    CONSTRAINT inbox_messages_intent_confidence_check CHECK (((intent_confidence >= (0)::double precision) AND (intent_confidence <= (1)::double precision))),
    CONSTRAINT inbox_messages_intent_evidence_check CHECK ((jsonb_typeof(intent_evidence) = 'array'::text)),
    CONSTRAINT inbox_messages_message_id_check CHECK ((length(message_id) <= 998)),
    CONSTRAINT inbox_messages_mod_seq_check CHECK ((mod_seq >= 0)),
    CONSTRAINT inbox_messages_move_to_check CHECK ((length(move_to) <= 500)),
    CONSTRAINT inbox_messages_snippet_check CHECK ((length(snippet) <= 200))
);

--
-- Name: inbox_snoozes; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.inbox_snoozes (
    organization_id uuid NOT NULL,
    id uuid NOT NULL,
    user_id uuid NOT NULL,
    thread_id uuid NOT NULL,
    snoozed_until timestamp with time zone NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL
);

--
-- Name: inbox_thread_folders; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.inbox_thread_folders (
    organization_id uuid NOT NULL,
    thread_id uuid NOT NULL,
    folder_role text NOT NULL,
    mailbox_id uuid NOT NULL,
    last_message_at timestamp with time zone NOT NULL,
    last_message_id uuid NOT NULL,
    total integer NOT NULL,
    unread integer NOT NULL,
    CONSTRAINT inbox_thread_folders_folder_role_check CHECK ((folder_role = ANY (ARRAY['all'::text, 'inbox'::text, 'sent'::text, 'drafts'::text, 'spam'::text, 'trash'::text, 'archive'::text]))),
    CONSTRAINT inbox_thread_folders_total_check CHECK ((total > 0)),
    CONSTRAINT inbox_thread_folders_unread_check CHECK ((unread >= 0))
);

--
-- Name: inbox_thread_labels; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.inbox_thread_labels (
    organization_id uuid NOT NULL,
    thread_id uuid NOT NULL,
    label_id uuid NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL
);

--
-- Name: inbox_threads; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.inbox_threads (
    organization_id uuid NOT NULL,
    id uuid NOT NULL,
    mailbox_id uuid NOT NULL,
    subject text DEFAULT ''::text NOT NULL,
    provider_thread_id text DEFAULT ''::text NOT NULL,
    message_count integer DEFAULT 0 NOT NULL,
    last_message_at timestamp with time zone NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    conversation_key text DEFAULT ''::text NOT NULL,
    unread_count integer DEFAULT 0 NOT NULL,
    newest_message_id uuid,
    awaiting_reply boolean DEFAULT false NOT NULL,
    CONSTRAINT inbox_threads_conversation_key_check CHECK ((length(conversation_key) <= 998)),
    CONSTRAINT inbox_threads_message_count_check CHECK ((message_count >= 0)),
    CONSTRAINT inbox_threads_subject_check CHECK ((length(subject) <= 998)),
    CONSTRAINT inbox_threads_unread_count_check CHECK ((unread_count >= 0))
);

--
-- Name: labels; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.labels (
    organization_id uuid NOT NULL,
    id uuid NOT NULL,
    kind text NOT NULL,
    title text NOT NULL,
    color text DEFAULT ''::text NOT NULL,
    "position" integer DEFAULT 0 NOT NULL,
    contact_count bigint DEFAULT 0 NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT labels_color_check CHECK ((length(color) <= 32)),
    CONSTRAINT labels_kind_check CHECK ((kind = ANY (ARRAY['folder'::text, 'tag'::text, 'category'::text]))),
    CONSTRAINT labels_position_check CHECK (("position" >= 0)),
    CONSTRAINT labels_title_check CHECK (((length(title) >= 1) AND (length(title) <= 100)))
);

--
-- Name: mailbox_errors; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.mailbox_errors (
    organization_id uuid NOT NULL,
    id uuid NOT NULL,
    mailbox_id uuid NOT NULL,
    code text NOT NULL,
    severity text NOT NULL,
    title text NOT NULL,
    message text NOT NULL,
    action_required boolean DEFAULT false NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    resolved_at timestamp with time zone,
    CONSTRAINT mailbox_errors_code_check CHECK ((code ~ '^[A-Z][A-Z0-9_]{1,63}$'::text)),
    CONSTRAINT mailbox_errors_message_check CHECK ((length(message) <= 2000)),
    CONSTRAINT mailbox_errors_severity_check CHECK ((severity = ANY (ARRAY['info'::text, 'warning'::text, 'error'::text, 'critical'::text]))),
    CONSTRAINT mailbox_errors_title_check CHECK ((length(title) <= 200))
);

--
-- Name: mailbox_folders; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.mailbox_folders (
    organization_id uuid NOT NULL,
    mailbox_id uuid NOT NULL,
    name text NOT NULL,
    role text NOT NULL,
    uid_validity bigint DEFAULT 0 NOT NULL,
    last_uid bigint DEFAULT 0 NOT NULL,
    highest_modseq bigint DEFAULT 0 NOT NULL,
    CONSTRAINT mailbox_folders_name_check CHECK (((length(name) >= 1) AND (length(name) <= 500))),
    CONSTRAINT mailbox_folders_role_check CHECK ((role = ANY (ARRAY['inbox'::text, 'sent'::text, 'drafts'::text, 'spam'::text, 'trash'::text, 'archive'::text])))
);

--
-- Name: mailbox_oauth_sessions; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.mailbox_oauth_sessions (
    organization_id uuid NOT NULL,
    id uuid NOT NULL,
    user_id uuid,
    provider text NOT NULL,
    state_hash bytea NOT NULL,
    verifier_sealed bytea NOT NULL,
    status text DEFAULT 'pending'::text NOT NULL,
    mailbox_id uuid,
    error_code text DEFAULT ''::text NOT NULL,
    error_message text DEFAULT ''::text NOT NULL,
    error_fix text DEFAULT ''::text NOT NULL,
    answered_at timestamp with time zone,
    expires_at timestamp with time zone NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT mailbox_oauth_sessions_error_code_check CHECK ((length(error_code) <= 100)),
    CONSTRAINT mailbox_oauth_sessions_error_fix_check CHECK ((length(error_fix) <= 1000)),
    CONSTRAINT mailbox_oauth_sessions_error_message_check CHECK ((length(error_message) <= 1000)),
    CONSTRAINT mailbox_oauth_sessions_provider_check CHECK ((provider = ANY (ARRAY['gmail'::text, 'outlook'::text]))),
    CONSTRAINT mailbox_oauth_sessions_state_hash_check CHECK ((length(state_hash) = 32)),
    CONSTRAINT mailbox_oauth_sessions_status_check CHECK ((status = ANY (ARRAY['pending'::text, 'done'::text, 'failed'::text])))
);

--
-- Name: mailbox_oauth_tokens; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.mailbox_oauth_tokens (
    organization_id uuid NOT NULL,
    mailbox_id uuid NOT NULL,
    refresh_sealed bytea NOT NULL,
    access_sealed bytea NOT NULL,
    expires_at timestamp with time zone NOT NULL,
    refreshed_at timestamp with time zone DEFAULT now() NOT NULL
);

--
-- Name: mailbox_plans; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.mailbox_plans (
    organization_id uuid NOT NULL,
    mailbox_id uuid NOT NULL,
    day date NOT NULL,
    planned integer DEFAULT 0 NOT NULL,
    planned_until timestamp with time zone,
    CONSTRAINT mailbox_plans_planned_check CHECK ((planned >= 0))
);

--
-- Name: mailbox_send_days; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.mailbox_send_days (
    organization_id uuid NOT NULL,
    mailbox_id uuid NOT NULL,
    day date NOT NULL,
    capped integer DEFAULT 0 NOT NULL,
    total integer DEFAULT 0 NOT NULL,
    CONSTRAINT mailbox_send_days_capped_check CHECK ((capped >= 0)),
    CONSTRAINT mailbox_send_days_total_check CHECK ((total >= 0))
);

--
-- Name: mailbox_sync; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.mailbox_sync (
    organization_id uuid NOT NULL,
    mailbox_id uuid NOT NULL,
    lease_owner uuid,
    lease_until timestamp with time zone,
    backfill_status text DEFAULT 'pending'::text NOT NULL,
    backfill_synced integer DEFAULT 0 NOT NULL,
    backfill_since timestamp with time zone,
    backfill_started_at timestamp with time zone,
    backfill_completed_at timestamp with time zone,
    throttled_until timestamp with time zone,
    throttle_reason text DEFAULT ''::text NOT NULL,
    deferred integer DEFAULT 0 NOT NULL,
    last_synced_at timestamp with time zone,
    last_error text DEFAULT ''::text NOT NULL,
    reported_at timestamp with time zone,
    CONSTRAINT mailbox_sync_backfill_status_check CHECK ((backfill_status = ANY (ARRAY['pending'::text, 'running'::text, 'complete'::text]))),
    CONSTRAINT mailbox_sync_backfill_synced_check CHECK ((backfill_synced >= 0)),
    CONSTRAINT mailbox_sync_deferred_check CHECK ((deferred >= 0)),
    CONSTRAINT mailbox_sync_last_error_check CHECK ((length(last_error) <= 1000)),
    CONSTRAINT mailbox_sync_throttle_reason_check CHECK ((throttle_reason = ANY (ARRAY[''::text, 'burst'::text, 'hourly'::text, 'daily'::text, 'org_daily'::text, 'priority_daily'::text])))
);

--
-- Name: mailbox_warmup_appeals; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.mailbox_warmup_appeals (
    organization_id uuid NOT NULL,
    id uuid NOT NULL,
    mailbox_id uuid NOT NULL,
    reason text DEFAULT ''::text NOT NULL,
    status text DEFAULT 'pending'::text NOT NULL,
    created_by uuid,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    decided_at timestamp with time zone,
    CONSTRAINT mailbox_warmup_appeals_reason_check CHECK ((length(reason) <= 2000)),
    CONSTRAINT mailbox_warmup_appeals_status_check CHECK ((status = ANY (ARRAY['pending'::text, 'accepted'::text, 'rejected'::text])))
);

--
-- Name: mailboxes; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.mailboxes (
    organization_id uuid NOT NULL,
    id uuid NOT NULL,
    user_id uuid,
    worker_id uuid,
    email text NOT NULL,
    name text DEFAULT ''::text NOT NULL,
    provider text NOT NULL,
    status text DEFAULT 'active'::text NOT NULL,
    signature_plain text DEFAULT ''::text NOT NULL,
    signature_html text DEFAULT ''::text NOT NULL,
    signature_sync boolean DEFAULT false NOT NULL,
    signature_code boolean DEFAULT false NOT NULL,
    send_as_email text DEFAULT ''::text NOT NULL,
    reply_to text DEFAULT ''::text NOT NULL,
    save_to_sent boolean DEFAULT true NOT NULL,
    campaign_limit integer DEFAULT 50 NOT NULL,
    min_wait_time integer DEFAULT 600 NOT NULL,
    timezone text DEFAULT ''::text NOT NULL,
    tags uuid[] DEFAULT '{}'::uuid[] NOT NULL,
    smtp_host text DEFAULT ''::text NOT NULL,
    smtp_port integer DEFAULT 0 NOT NULL,
    smtp_username text DEFAULT ''::text NOT NULL,
    smtp_security text DEFAULT ''::text NOT NULL,
    smtp_password bytea,
    imap_host text DEFAULT ''::text NOT NULL,
    imap_port integer DEFAULT 0 NOT NULL,
    imap_username text DEFAULT ''::text NOT NULL,
    imap_security text DEFAULT ''::text NOT NULL,
    imap_password bytea,
    identities jsonb DEFAULT '[]'::jsonb NOT NULL,
    identity_synced_at timestamp with time zone,
    signature_source text DEFAULT 'manual'::text NOT NULL,
    signature_imported_at timestamp with time zone,
    last_synced_at timestamp with time zone,
    last_id bigint DEFAULT 0 NOT NULL,
    rotation_state text DEFAULT 'active'::text NOT NULL,
    rotation_since timestamp with time zone,
    rotation_reason text DEFAULT ''::text NOT NULL,
    warmup timestamp with time zone,
    warmup_paused_at timestamp with time zone,
    warmup_base integer DEFAULT 2 NOT NULL,
    warmup_max integer DEFAULT 40 NOT NULL,
    warmup_increase integer DEFAULT 2 NOT NULL,
    warmup_reply_rate integer DEFAULT 30 NOT NULL,
    warmup_tag text DEFAULT ''::text NOT NULL,
    warmup_pool_type text DEFAULT 'free'::text NOT NULL,
    warmup_start_time text DEFAULT ''::text NOT NULL,
    warmup_end_time text DEFAULT ''::text NOT NULL,
    warmup_days integer DEFAULT 7 NOT NULL,
    warmup_health text DEFAULT 'healthy'::text NOT NULL,
    tracking_domain text DEFAULT ''::text NOT NULL,
    tracking_domain_verified boolean DEFAULT false NOT NULL,
    tracking_domain_verified_at timestamp with time zone,
    auth_state text DEFAULT 'unknown'::text NOT NULL,
    auth_spf boolean DEFAULT false NOT NULL,
    auth_dkim boolean DEFAULT false NOT NULL,
    auth_dmarc boolean DEFAULT false NOT NULL,
    auth_dmarc_policy text DEFAULT ''::text NOT NULL,
    auth_reason text DEFAULT ''::text NOT NULL,
    auth_checked_at timestamp with time zone,
    auth_failing_since timestamp with time zone,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    last_capped_send_at timestamp with time zone,
    tracking_status text DEFAULT 'unset'::text NOT NULL,
    tracking_message text DEFAULT ''::text NOT NULL,
    tracking_observed text DEFAULT ''::text NOT NULL,
    tracking_host_unresolvable boolean DEFAULT false NOT NULL,
    tracking_checked_at timestamp with time zone,
    warmup_blocked_at timestamp with time zone,
    warmup_blocked_until timestamp with time zone,
    warmup_block_reason text DEFAULT ''::text NOT NULL,
    sent_copies text DEFAULT 'unknown'::text NOT NULL,
    CONSTRAINT mailboxes_auth_state_check CHECK ((auth_state = ANY (ARRAY['passing'::text, 'failing'::text, 'unknown'::text]))),
    CONSTRAINT mailboxes_campaign_limit_check CHECK (((campaign_limit >= 0) AND (campaign_limit <= 5000))),
    CONSTRAINT mailboxes_check CHECK ((warmup_base <= warmup_max)),
    CONSTRAINT mailboxes_email_check CHECK (((email = lower(email)) AND ((length(email) >= 3) AND (length(email) <= 254)))),
    CONSTRAINT mailboxes_identities_check CHECK ((jsonb_typeof(identities) = 'array'::text)),
    CONSTRAINT mailboxes_imap_host_check CHECK ((length(imap_host) <= 253)),
    CONSTRAINT mailboxes_imap_port_check CHECK (((imap_port >= 0) AND (imap_port <= 65535))),
    CONSTRAINT mailboxes_imap_security_check CHECK ((imap_security = ANY (ARRAY[''::text, 'tls'::text, 'starttls'::text, 'none'::text]))),
    CONSTRAINT mailboxes_imap_username_check CHECK ((length(imap_username) <= 320)),
    CONSTRAINT mailboxes_min_wait_time_check CHECK (((min_wait_time >= 0) AND (min_wait_time <= 86400))),
    CONSTRAINT mailboxes_name_check CHECK ((length(name) <= 255)),
    CONSTRAINT mailboxes_provider_check CHECK ((provider = ANY (ARRAY['gmail'::text, 'outlook'::text, 'smtp_imap'::text]))),
    CONSTRAINT mailboxes_reply_to_check CHECK ((length(reply_to) <= 254)),
    CONSTRAINT mailboxes_rotation_reason_check CHECK ((length(rotation_reason) <= 500)),
    CONSTRAINT mailboxes_rotation_state_check CHECK ((rotation_state = ANY (ARRAY['reserve'::text, 'active'::text, 'resting'::text]))),
    CONSTRAINT mailboxes_send_as_email_check CHECK ((length(send_as_email) <= 254)),
    CONSTRAINT mailboxes_sent_copies_check CHECK ((sent_copies = ANY (ARRAY['unknown'::text, 'server'::text, 'append'::text]))),
    CONSTRAINT mailboxes_signature_html_check CHECK ((length(signature_html) <= 10000)),
    CONSTRAINT mailboxes_signature_plain_check CHECK ((length(signature_plain) <= 10000)),
    CONSTRAINT mailboxes_signature_source_check CHECK ((signature_source = ANY (ARRAY['manual'::text, 'provider'::text]))),
    CONSTRAINT mailboxes_smtp_host_check CHECK ((length(smtp_host) <= 253)),
    CONSTRAINT mailboxes_smtp_port_check CHECK (((smtp_port >= 0) AND (smtp_port <= 65535))),
    CONSTRAINT mailboxes_smtp_security_check CHECK ((smtp_security = ANY (ARRAY[''::text, 'tls'::text, 'starttls'::text, 'none'::text]))),
    CONSTRAINT mailboxes_smtp_username_check CHECK ((length(smtp_username) <= 320)),
    CONSTRAINT mailboxes_status_check CHECK ((status = ANY (ARRAY['active'::text, 'inactive'::text, 'revoked'::text]))),
    CONSTRAINT mailboxes_tags_check CHECK ((cardinality(tags) <= 50)),
    CONSTRAINT mailboxes_timezone_check CHECK ((length(timezone) <= 64)),
    CONSTRAINT mailboxes_tracking_domain_check CHECK ((length(tracking_domain) <= 253)),
    CONSTRAINT mailboxes_tracking_message_check CHECK ((length(tracking_message) <= 500)),
    CONSTRAINT mailboxes_tracking_observed_check CHECK ((length(tracking_observed) <= 1000)),
    CONSTRAINT mailboxes_tracking_status_check CHECK ((tracking_status = ANY (ARRAY['verified'::text, 'unset'::text, 'no_target'::text, 'not_found'::text, 'wrong_target'::text, 'lookup_error'::text, 'pending'::text]))),
    CONSTRAINT mailboxes_warmup_base_check CHECK (((warmup_base >= 1) AND (warmup_base <= 100))),
    CONSTRAINT mailboxes_warmup_block_reason_check CHECK ((length(warmup_block_reason) <= 500)),
    CONSTRAINT mailboxes_warmup_days_check CHECK (((warmup_days >= 1) AND (warmup_days <= 7))),
    CONSTRAINT mailboxes_warmup_end_time_check CHECK (((warmup_end_time = ''::text) OR (warmup_end_time ~ '^([01][0-9]|2[0-3]):[0-5][0-9]$'::text))),
    CONSTRAINT mailboxes_warmup_health_check CHECK ((warmup_health = ANY (ARRAY['healthy'::text, 'watch'::text, 'throttled'::text, 'quarantined'::text, 'blocked'::text]))),
    CONSTRAINT mailboxes_warmup_increase_check CHECK (((warmup_increase >= 0) AND (warmup_increase <= 50))),
    CONSTRAINT mailboxes_warmup_max_check CHECK (((warmup_max >= 1) AND (warmup_max <= 200))),
    CONSTRAINT mailboxes_warmup_pool_type_check CHECK ((warmup_pool_type = ANY (ARRAY['free'::text, 'premium'::text]))),
    CONSTRAINT mailboxes_warmup_reply_rate_check CHECK (((warmup_reply_rate >= 0) AND (warmup_reply_rate <= 100))),
    CONSTRAINT mailboxes_warmup_start_time_check CHECK (((warmup_start_time = ''::text) OR (warmup_start_time ~ '^([01][0-9]|2[0-3]):[0-5][0-9]$'::text))),
    CONSTRAINT mailboxes_warmup_tag_check CHECK ((length(warmup_tag) <= 64))
)
WITH (fillfactor='50');

--
-- Name: notification_channel_windows; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.notification_channel_windows (
    user_id uuid NOT NULL,
    channel text NOT NULL,
    last_due_at timestamp with time zone NOT NULL,
    CONSTRAINT notification_channel_windows_channel_check CHECK ((channel = ANY (ARRAY['email'::text, 'push'::text])))
);

--
-- Name: notification_deliveries; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.notification_deliveries (
    id uuid NOT NULL,
    user_id uuid NOT NULL,
    channel text NOT NULL,
    organization_id uuid,
    category text NOT NULL,
    title text NOT NULL,
    body text DEFAULT ''::text NOT NULL,
    link text DEFAULT ''::text NOT NULL,
    due_at timestamp with time zone NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT notification_deliveries_channel_check CHECK ((channel = ANY (ARRAY['email'::text, 'push'::text])))
);

--
-- Name: notification_preferences; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.notification_preferences (
    user_id uuid NOT NULL,
    categories jsonb DEFAULT '{}'::jsonb NOT NULL,
    email_digest_minutes integer DEFAULT 30 NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT notification_preferences_email_digest_minutes_check CHECK (((email_digest_minutes >= 30) AND (email_digest_minutes <= 1440)))
);

--
-- Name: notifications; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.notifications (
    id uuid NOT NULL,
    user_id uuid NOT NULL,
    organization_id uuid,
    category text NOT NULL,
    title text NOT NULL,
    body text DEFAULT ''::text NOT NULL,
    link text DEFAULT ''::text NOT NULL,
    read_at timestamp with time zone,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT notifications_category_check CHECK (((length(category) >= 1) AND (length(category) <= 50))),
    CONSTRAINT notifications_title_check CHECK (((length(title) >= 1) AND (length(title) <= 200)))
);

--
-- Name: oauth_grants; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.oauth_grants (
    organization_id uuid NOT NULL,
    id uuid NOT NULL,
    client_id uuid NOT NULL,
    user_id uuid NOT NULL,
    scopes bigint NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    revoked_at timestamp with time zone,
    revoked_reason text,
    CONSTRAINT oauth_grants_scopes_check CHECK ((scopes >= 0))
);

--
-- Name: organizations; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.organizations (
    id uuid NOT NULL,
    name text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    trial_ends_at timestamp with time zone,
    reply_undo_seconds integer DEFAULT 30 NOT NULL,
    CONSTRAINT organizations_name_check CHECK (((length(name) >= 1) AND (length(name) <= 255))),
    CONSTRAINT organizations_reply_undo_seconds_check CHECK (((reply_undo_seconds >= 5) AND (reply_undo_seconds <= 120)))
);

--
-- Name: passkey_credentials; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.passkey_credentials (
    id uuid NOT NULL,
    user_id uuid NOT NULL,
    rp_id text NOT NULL,
    credential_id bytea NOT NULL,
    name text NOT NULL,
    provider text DEFAULT ''::text NOT NULL,
    aaguid uuid,
    public_key_sealed bytea NOT NULL,
    attestation_type text DEFAULT ''::text NOT NULL,
    attestation_format text DEFAULT ''::text NOT NULL,
    transports text[] DEFAULT '{}'::text[] NOT NULL,
    attachment text DEFAULT ''::text NOT NULL,
    sign_count bigint DEFAULT 0 NOT NULL,
    clone_warning boolean DEFAULT false NOT NULL,
    flags smallint NOT NULL,
    attestation jsonb DEFAULT '{}'::jsonb NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    last_used_at timestamp with time zone,
    CONSTRAINT passkey_credentials_credential_id_check CHECK (((length(credential_id) >= 1) AND (length(credential_id) <= 1023))),
    CONSTRAINT passkey_credentials_flags_check CHECK (((flags >= 0) AND (flags <= 255))),
    CONSTRAINT passkey_credentials_name_check CHECK (((length(name) >= 1) AND (length(name) <= 255)))
);

--
-- Name: product_events; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.product_events (
    organization_id uuid NOT NULL,
    id uuid NOT NULL,
    contact_id uuid NOT NULL,
    name text NOT NULL,
    data jsonb DEFAULT '{}'::jsonb NOT NULL,
    occurred_at timestamp with time zone NOT NULL,
    received_at timestamp with time zone DEFAULT now() NOT NULL,
    idempotency_key text NOT NULL,
    CONSTRAINT product_events_data_check CHECK (((jsonb_typeof(data) = 'object'::text) AND (octet_length((data)::text) <= 65536))),
    CONSTRAINT product_events_idempotency_key_check CHECK (((length(idempotency_key) >= 1) AND (length(idempotency_key) <= 255))),
    CONSTRAINT product_events_name_check CHECK ((((length(name) >= 1) AND (length(name) <= 255)) AND (name ~ '^[a-z0-9_-]+(\.[a-z0-9_-]+)*$'::text)))
);

--
-- Name: rate_limit_counters; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.rate_limit_counters (
    key text NOT NULL,
    window_start timestamp with time zone NOT NULL,
    hits integer NOT NULL
);

--
-- Name: rate_limit_hits; Type: TABLE; Schema: public; Owner: -
--

CREATE UNLOGGED TABLE public.rate_limit_hits (
    credential_id uuid NOT NULL,
    second bigint NOT NULL,
    hits integer NOT NULL
);

--
-- Name: river_job; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.river_job (
    id bigint NOT NULL,
    state public.river_job_state DEFAULT 'available'::public.river_job_state NOT NULL,
    attempt smallint DEFAULT 0 NOT NULL,
    max_attempts smallint DEFAULT 25 NOT NULL,
    attempted_at timestamp with time zone,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    finalized_at timestamp with time zone,
    scheduled_at timestamp with time zone DEFAULT now() NOT NULL,
    priority smallint DEFAULT 1 NOT NULL,
    args jsonb NOT NULL,
    attempted_by text[],
    errors jsonb[],
    kind text NOT NULL,
    metadata jsonb DEFAULT '{}'::jsonb NOT NULL,
    queue text DEFAULT 'default'::text NOT NULL,
    tags character varying(255)[] DEFAULT '{}'::character varying[] NOT NULL,
    unique_key bytea,
    unique_states bit(8),
    CONSTRAINT finalized_or_finalized_at_null CHECK ((((finalized_at IS NULL) AND (state <> ALL (ARRAY['cancelled'::public.river_job_state, 'completed'::public.river_job_state, 'discarded'::public.river_job_state]))) OR ((finalized_at IS NOT NULL) AND (state = ANY (ARRAY['cancelled'::public.river_job_state, 'completed'::public.river_job_state, 'discarded'::public.river_job_state]))))),
    CONSTRAINT kind_length CHECK (((char_length(kind) > 0) AND (char_length(kind) < 128))),
    CONSTRAINT max_attempts_is_positive CHECK ((max_attempts > 0)),
    CONSTRAINT priority_in_range CHECK (((priority >= 1) AND (priority <= 4))),
    CONSTRAINT queue_length CHECK (((char_length(queue) > 0) AND (char_length(queue) < 128)))
);

--
-- Name: river_job_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.river_job_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

--
-- Name: river_job_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.river_job_id_seq OWNED BY public.river_job.id;

--
-- Name: river_leader; Type: TABLE; Schema: public; Owner: -
--

CREATE UNLOGGED TABLE public.river_leader (
    elected_at timestamp with time zone NOT NULL,
    expires_at timestamp with time zone NOT NULL,
    leader_id text NOT NULL,
    name text DEFAULT 'default'::text NOT NULL,
    CONSTRAINT leader_id_length CHECK (((char_length(leader_id) > 0) AND (char_length(leader_id) < 128))),
    CONSTRAINT name_length CHECK ((name = 'default'::text))
);

--
-- Name: river_migration; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.river_migration (
    line text NOT NULL,
    version bigint NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT line_length CHECK (((char_length(line) > 0) AND (char_length(line) < 128))),
    CONSTRAINT version_gte_1 CHECK ((version >= 1))
);

--
-- Name: river_notification; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.river_notification (
    id bigint NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    payload text NOT NULL,
    topic text NOT NULL,
    CONSTRAINT topic_length CHECK (((length(topic) > 0) AND (length(topic) < 128)))
);

--
-- Name: river_notification_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.river_notification_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

--
-- Name: river_notification_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.river_notification_id_seq OWNED BY public.river_notification.id;

--
-- Name: river_queue; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.river_queue (
    name text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    metadata jsonb DEFAULT '{}'::jsonb NOT NULL,
    paused_at timestamp with time zone,
    updated_at timestamp with time zone DEFAULT CURRENT_TIMESTAMP NOT NULL
);

--
-- Name: run_events; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.run_events (
    organization_id uuid NOT NULL,
    run_id uuid NOT NULL,
    seq integer NOT NULL,
    id uuid NOT NULL,
    type text NOT NULL,
    state text NOT NULL,
    message text DEFAULT ''::text NOT NULL,
    data jsonb DEFAULT '{}'::jsonb NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT run_events_data_check CHECK ((jsonb_typeof(data) = 'object'::text)),
    CONSTRAINT run_events_message_check CHECK ((length(message) <= 2000)),
    CONSTRAINT run_events_seq_check CHECK ((seq >= 1)),
    CONSTRAINT run_events_type_check CHECK (((length(type) >= 1) AND (length(type) <= 100)))
);

--
-- Name: runs; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.runs (
    organization_id uuid NOT NULL,
    id uuid NOT NULL,
    state text DEFAULT 'queued'::text NOT NULL,
    intent text NOT NULL,
    input jsonb NOT NULL,
    campaign_id uuid,
    frozen_sender_ids uuid[] DEFAULT '{}'::uuid[] NOT NULL,
    recipient_count integer DEFAULT 0 NOT NULL,
    action_count integer DEFAULT 0 NOT NULL,
    policy_decision jsonb DEFAULT '{}'::jsonb NOT NULL,
    preflight_report jsonb,
    error_details jsonb,
    approval_id uuid,
    credential_kind text NOT NULL,
    credential_id uuid NOT NULL,
    user_id uuid,
    idempotency_key text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT runs_action_count_check CHECK ((action_count >= 0)),
    CONSTRAINT runs_credential_kind_check CHECK ((credential_kind = ANY (ARRAY['api_key'::text, 'oauth'::text, 'session'::text]))),
    CONSTRAINT runs_idempotency_key_check CHECK (((length(idempotency_key) >= 1) AND (length(idempotency_key) <= 255))),
    CONSTRAINT runs_input_check CHECK ((jsonb_typeof(input) = 'object'::text)),
    CONSTRAINT runs_intent_check CHECK ((intent = ANY (ARRAY['draft'::text, 'launch'::text]))),
    CONSTRAINT runs_policy_decision_check CHECK ((jsonb_typeof(policy_decision) = 'object'::text)),
    CONSTRAINT runs_recipient_count_check CHECK ((recipient_count >= 0)),
    CONSTRAINT runs_state_check CHECK ((state = ANY (ARRAY['queued'::text, 'preflighting'::text, 'awaiting_approval'::text, 'launching'::text, 'active'::text, 'failed'::text, 'denied'::text, 'paused'::text, 'completed'::text, 'cancelled'::text])))
);

--
-- Name: schema_migrations; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.schema_migrations (
    id integer NOT NULL,
    version_id bigint NOT NULL,
    is_applied boolean NOT NULL,
    tstamp timestamp without time zone DEFAULT now() NOT NULL
);

--
-- Name: schema_migrations_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.schema_migrations ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.schema_migrations_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

--
-- Name: segment_pins; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.segment_pins (
    organization_id uuid NOT NULL,
    segment_id uuid NOT NULL,
    contact_id uuid NOT NULL,
    include boolean NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL
);

--
-- Name: segments; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.segments (
    organization_id uuid NOT NULL,
    id uuid NOT NULL,
    name text NOT NULL,
    description text DEFAULT ''::text NOT NULL,
    kind text NOT NULL,
    filters jsonb,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT segments_check CHECK (((kind = 'dynamic'::text) = (filters IS NOT NULL))),
    CONSTRAINT segments_description_check CHECK ((length(description) <= 1000)),
    CONSTRAINT segments_kind_check CHECK ((kind = ANY (ARRAY['static'::text, 'dynamic'::text]))),
    CONSTRAINT segments_name_check CHECK (((length(name) >= 1) AND (length(name) <= 255)))
);

--
-- Name: send_tasks; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.send_tasks (
    organization_id uuid NOT NULL,
    id uuid NOT NULL,
    kind text NOT NULL,
    status text DEFAULT 'queued'::text NOT NULL,
    mailbox_id uuid,
    from_email text DEFAULT ''::text NOT NULL,
    from_name text DEFAULT ''::text NOT NULL,
    contact_id uuid,
    to_email text NOT NULL,
    campaign_id uuid,
    step_id uuid,
    step_name text DEFAULT ''::text NOT NULL,
    subject text DEFAULT ''::text NOT NULL,
    message_id text DEFAULT ''::text NOT NULL,
    error_code text DEFAULT ''::text NOT NULL,
    error_message text DEFAULT ''::text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    sent_at timestamp with time zone,
    opened_at timestamp with time zone,
    clicked_at timestamp with time zone,
    replied_at timestamp with time zone,
    bounced_at timestamp with time zone,
    to_list text[] DEFAULT '{}'::text[] NOT NULL,
    cc text[] DEFAULT '{}'::text[] NOT NULL,
    bcc text[] DEFAULT '{}'::text[] NOT NULL,
    reply_to text DEFAULT ''::text NOT NULL,
    in_reply_to text DEFAULT ''::text NOT NULL,
    thread_references text[] DEFAULT '{}'::text[] NOT NULL,
    body_text text DEFAULT ''::text NOT NULL,
    body_html text DEFAULT ''::text NOT NULL,
    send_mode text DEFAULT 'instant'::text NOT NULL,
    not_before timestamp with time zone DEFAULT now() NOT NULL,
    attempts integer DEFAULT 0 NOT NULL,
    claimed_at timestamp with time zone,
    counted_day date,
    failed_at timestamp with time zone,
    attachment_ids uuid[] DEFAULT '{}'::uuid[] NOT NULL,
    signed boolean DEFAULT false NOT NULL,
    variant_id uuid,
    unsubscribe_url text DEFAULT ''::text NOT NULL,
    thread_id uuid,
    handed_over_at timestamp with time zone,
    outcome_check text DEFAULT ''::text NOT NULL,
    decided_by uuid,
    decided_at timestamp with time zone,
    sent_copy text DEFAULT ''::text NOT NULL,
    accepted_at timestamp with time zone,
    CONSTRAINT send_tasks_attachment_ids_check CHECK ((cardinality(attachment_ids) <= 20)),
    CONSTRAINT send_tasks_attempts_check CHECK (((attempts >= 0) AND (attempts <= 100))),
    CONSTRAINT send_tasks_bcc_check CHECK ((cardinality(bcc) <= 50)),
    CONSTRAINT send_tasks_body_html_check CHECK ((length(body_html) <= 2000000)),
    CONSTRAINT send_tasks_body_text_check CHECK ((length(body_text) <= 1000000)),
    CONSTRAINT send_tasks_cc_check CHECK ((cardinality(cc) <= 50)),
    CONSTRAINT send_tasks_in_reply_to_check CHECK ((length(in_reply_to) <= 998)),
    CONSTRAINT send_tasks_kind_check CHECK ((kind = ANY (ARRAY['campaign'::text, 'direct'::text, 'reply'::text, 'warmup'::text]))),
    CONSTRAINT send_tasks_outcome_check_check CHECK ((outcome_check = ANY (ARRAY[''::text, 'checking'::text, 'needs_decision'::text, 'found_in_sent'::text, 'resent'::text, 'skipped'::text]))),
    CONSTRAINT send_tasks_reply_to_check CHECK ((length(reply_to) <= 320)),
    CONSTRAINT send_tasks_send_mode_check CHECK ((send_mode = ANY (ARRAY['instant'::text, 'smart'::text, 'scheduled'::text]))),
    CONSTRAINT send_tasks_sent_copy_check CHECK ((sent_copy = ANY (ARRAY[''::text, 'pending'::text, 'filed'::text]))),
    CONSTRAINT send_tasks_status_check CHECK ((status = ANY (ARRAY['queued'::text, 'sending'::text, 'sent'::text, 'failed'::text, 'ambiguous'::text, 'canceled'::text]))),
    CONSTRAINT send_tasks_subject_check CHECK ((length(subject) <= 998)),
    CONSTRAINT send_tasks_thread_references_check CHECK ((cardinality(thread_references) <= 100)),
    CONSTRAINT send_tasks_to_email_check CHECK (((length(to_email) >= 3) AND (length(to_email) <= 320))),
    CONSTRAINT send_tasks_to_list_check CHECK ((cardinality(to_list) <= 50)),
    CONSTRAINT send_tasks_unsubscribe_url_check CHECK ((length(unsubscribe_url) <= 2048))
)
WITH (fillfactor='70');

--
-- Name: session_refresh_tokens; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.session_refresh_tokens (
    token_hash bytea NOT NULL,
    session_id uuid NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    rotated_at timestamp with time zone
);

--
-- Name: sessions; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.sessions (
    id uuid NOT NULL,
    user_id uuid NOT NULL,
    organization_id uuid,
    auth_provider text DEFAULT 'password'::text NOT NULL,
    browser text DEFAULT ''::text NOT NULL,
    os text DEFAULT ''::text NOT NULL,
    location_city text DEFAULT ''::text NOT NULL,
    location_region text DEFAULT ''::text NOT NULL,
    location_country text DEFAULT ''::text NOT NULL,
    country_code text DEFAULT ''::text NOT NULL,
    ip_address text DEFAULT ''::text NOT NULL,
    refresh_expires_at timestamp with time zone NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    last_active_at timestamp with time zone DEFAULT now() NOT NULL,
    revoked_at timestamp with time zone,
    revoked_reason text
);

--
-- Name: signing_keys; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.signing_keys (
    kid text NOT NULL,
    private_key_sealed bytea NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    retires_at timestamp with time zone NOT NULL
);

--
-- Name: suppressions; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.suppressions (
    organization_id uuid NOT NULL,
    id uuid NOT NULL,
    kind text NOT NULL,
    value text NOT NULL,
    reason text DEFAULT ''::text NOT NULL,
    source text NOT NULL,
    campaign_id uuid,
    expires_at timestamp with time zone,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT suppressions_kind_check CHECK ((kind = ANY (ARRAY['email'::text, 'domain'::text]))),
    CONSTRAINT suppressions_reason_check CHECK ((length(reason) <= 500)),
    CONSTRAINT suppressions_source_check CHECK ((source = ANY (ARRAY['bounce'::text, 'complaint'::text, 'unsubscribe'::text, 'manual'::text, 'import'::text]))),
    CONSTRAINT suppressions_value_check CHECK (((value = lower(value)) AND ((length(value) >= 1) AND (length(value) <= 320))))
);

--
-- Name: system_heartbeats; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.system_heartbeats (
    name text NOT NULL,
    beat_at timestamp with time zone NOT NULL
);

--
-- Name: team_members; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.team_members (
    organization_id uuid NOT NULL,
    team_id uuid NOT NULL,
    user_id uuid NOT NULL,
    added_at timestamp with time zone DEFAULT now() NOT NULL
);

--
-- Name: teams; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.teams (
    organization_id uuid NOT NULL,
    id uuid NOT NULL,
    name text NOT NULL,
    color text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT teams_color_check CHECK ((color ~ '^#[0-9a-f]{6}$'::text)),
    CONSTRAINT teams_name_check CHECK (((length(name) >= 1) AND (length(name) <= 255)))
);

--
-- Name: tracking_events; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.tracking_events (
    organization_id uuid NOT NULL,
    id uuid NOT NULL,
    task_id uuid NOT NULL,
    kind text NOT NULL,
    at timestamp with time zone NOT NULL,
    user_agent text DEFAULT ''::text NOT NULL,
    ip_hash text DEFAULT ''::text NOT NULL,
    source_network text DEFAULT ''::text NOT NULL,
    scanner text DEFAULT ''::text NOT NULL,
    scanner_probable boolean DEFAULT false NOT NULL,
    privacy_proxy boolean DEFAULT false NOT NULL,
    link_index integer,
    url text,
    ticket_issued boolean DEFAULT false NOT NULL,
    verdict text,
    rule text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    effects_due_at timestamp with time zone,
    effects_applied_at timestamp with time zone,
    country text DEFAULT ''::text NOT NULL,
    CONSTRAINT tracking_events_check CHECK (((kind = 'click'::text) = ((link_index IS NOT NULL) AND (url IS NOT NULL)))),
    CONSTRAINT tracking_events_check1 CHECK (((verdict IS NULL) = (rule IS NULL))),
    CONSTRAINT tracking_events_country_check CHECK ((length(country) <= 2)),
    CONSTRAINT tracking_events_effects_check CHECK ((((effects_due_at IS NULL) OR ((kind = 'click'::text) AND (verdict = 'human'::text))) AND ((effects_applied_at IS NULL) OR (effects_due_at IS NOT NULL)))),
    CONSTRAINT tracking_events_ip_hash_check CHECK ((length(ip_hash) <= 128)),
    CONSTRAINT tracking_events_kind_check CHECK ((kind = ANY (ARRAY['open'::text, 'click'::text]))),
    CONSTRAINT tracking_events_link_index_check CHECK (((link_index >= 0) AND (link_index <= 65535))),
    CONSTRAINT tracking_events_rule_check CHECK ((length(rule) <= 64)),
    CONSTRAINT tracking_events_scanner_check CHECK ((length(scanner) <= 200)),
    CONSTRAINT tracking_events_source_network_check CHECK ((length(source_network) <= 200)),
    CONSTRAINT tracking_events_url_check CHECK ((length(url) <= 2048)),
    CONSTRAINT tracking_events_user_agent_check CHECK ((length(user_agent) <= 512)),
    CONSTRAINT tracking_events_verdict_check CHECK ((verdict = ANY (ARRAY['human'::text, 'machine'::text])))
);

--
-- Name: user_identities; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.user_identities (
    provider text NOT NULL,
    subject text NOT NULL,
    user_id uuid NOT NULL,
    email text DEFAULT ''::text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    last_used_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT user_identities_provider_check CHECK ((provider = ANY (ARRAY['apple'::text, 'google'::text, 'oidc'::text]))),
    CONSTRAINT user_identities_subject_check CHECK (((length(subject) >= 1) AND (length(subject) <= 255)))
);

--
-- Name: user_recovery_codes; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.user_recovery_codes (
    user_id uuid NOT NULL,
    code_hash bytea NOT NULL,
    used_at timestamp with time zone
);

--
-- Name: user_two_factor; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.user_two_factor (
    user_id uuid NOT NULL,
    secret_sealed bytea NOT NULL,
    enabled_at timestamp with time zone,
    last_used_step bigint DEFAULT 0 NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL
);

--
-- Name: users; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.users (
    id uuid NOT NULL,
    email text NOT NULL,
    password_hash text,
    first_name text DEFAULT ''::text NOT NULL,
    last_name text DEFAULT ''::text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    avatar_url text DEFAULT ''::text NOT NULL,
    referral_source text DEFAULT ''::text NOT NULL,
    onboarding_completed_at timestamp with time zone,
    email_verified_at timestamp with time zone,
    max_organizations integer DEFAULT 10 NOT NULL,
    free_trial_used boolean DEFAULT false NOT NULL,
    admin_permissions bigint DEFAULT 0 NOT NULL,
    last_organization_id uuid,
    onboarding_role text DEFAULT ''::text NOT NULL,
    onboarding_team_size text DEFAULT ''::text NOT NULL,
    CONSTRAINT users_email_check CHECK (((email = lower(email)) AND ((length(email) >= 3) AND (length(email) <= 320))))
);

--
-- Name: verification_run_contacts; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.verification_run_contacts (
    organization_id uuid NOT NULL,
    run_id uuid NOT NULL,
    contact_id uuid NOT NULL,
    done boolean DEFAULT false NOT NULL
);

--
-- Name: verification_runs; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.verification_runs (
    organization_id uuid NOT NULL,
    id uuid NOT NULL,
    status text DEFAULT 'queued'::text NOT NULL,
    provider text DEFAULT 'builtin'::text NOT NULL,
    total integer DEFAULT 0 NOT NULL,
    processed integer DEFAULT 0 NOT NULL,
    valid integer DEFAULT 0 NOT NULL,
    risky integer DEFAULT 0 NOT NULL,
    invalid integer DEFAULT 0 NOT NULL,
    unknown integer DEFAULT 0 NOT NULL,
    error text DEFAULT ''::text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    started_at timestamp with time zone,
    finished_at timestamp with time zone,
    CONSTRAINT verification_runs_status_check CHECK ((status = ANY (ARRAY['queued'::text, 'running'::text, 'completed'::text, 'failed'::text])))
);

--
-- Name: webauthn_users; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.webauthn_users (
    rp_id text NOT NULL,
    user_id uuid NOT NULL,
    handle bytea NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT webauthn_users_handle_check CHECK (((length(handle) >= 16) AND (length(handle) <= 64)))
);

--
-- Name: webhook_rate_windows; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.webhook_rate_windows (
    organization_id uuid NOT NULL,
    endpoint_id uuid NOT NULL,
    event_type text NOT NULL,
    window_start timestamp with time zone NOT NULL,
    shard smallint NOT NULL,
    hits integer DEFAULT 1 NOT NULL,
    CONSTRAINT webhook_rate_windows_shard_check CHECK (((shard >= 0) AND (shard <= 63)))
);

--
-- Name: webhook_throttle_drops; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.webhook_throttle_drops (
    organization_id uuid NOT NULL,
    id uuid NOT NULL,
    endpoint_id uuid,
    event_type text NOT NULL,
    reason text NOT NULL,
    window_start timestamp with time zone NOT NULL,
    window_end timestamp with time zone NOT NULL,
    dropped integer DEFAULT 0 NOT NULL,
    last_dropped_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT webhook_throttle_drops_reason_check CHECK ((reason = ANY (ARRAY['endpoint_rate_limit'::text, 'org_event_type_throttle'::text])))
);

--
-- Name: river_job id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.river_job ALTER COLUMN id SET DEFAULT nextval('public.river_job_id_seq'::regclass);

--
-- Name: river_notification id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.river_notification ALTER COLUMN id SET DEFAULT nextval('public.river_notification_id_seq'::regclass);

--
-- Name: agent_policies agent_policies_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.agent_policies
    ADD CONSTRAINT agent_policies_pkey PRIMARY KEY (organization_id, id);

--
-- Name: agent_policy_usage agent_policy_usage_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.agent_policy_usage
    ADD CONSTRAINT agent_policy_usage_pkey PRIMARY KEY (organization_id, policy_id, day);

--
-- Name: analytics_campaign_days analytics_campaign_days_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.analytics_campaign_days
    ADD CONSTRAINT analytics_campaign_days_pkey PRIMARY KEY (organization_id, campaign_id, day);

--
-- Name: analytics_campaign_hours analytics_campaign_hours_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.analytics_campaign_hours
    ADD CONSTRAINT analytics_campaign_hours_pkey PRIMARY KEY (organization_id, campaign_id, hour);

--
-- Name: analytics_engagement analytics_engagement_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.analytics_engagement
    ADD CONSTRAINT analytics_engagement_pkey PRIMARY KEY (organization_id, campaign_id, dimension, key, contact_id) INCLUDE (clicked);

--
-- Name: analytics_mailbox_days analytics_mailbox_days_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.analytics_mailbox_days
    ADD CONSTRAINT analytics_mailbox_days_pkey PRIMARY KEY (organization_id, mailbox_id, day, kind);

--
-- Name: analytics_org_days analytics_org_days_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.analytics_org_days
    ADD CONSTRAINT analytics_org_days_pkey PRIMARY KEY (organization_id, day, kind);

--
-- Name: analytics_step_days analytics_step_days_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.analytics_step_days
    ADD CONSTRAINT analytics_step_days_pkey PRIMARY KEY (organization_id, campaign_id, step_id, variant_id, day);

--
-- Name: api_key_usage_logs api_key_usage_logs_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.api_key_usage_logs
    ADD CONSTRAINT api_key_usage_logs_pkey PRIMARY KEY (organization_id, id);

--
-- Name: api_keys api_keys_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.api_keys
    ADD CONSTRAINT api_keys_pkey PRIMARY KEY (organization_id, id);

--
-- Name: app_connections app_connections_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.app_connections
    ADD CONSTRAINT app_connections_pkey PRIMARY KEY (organization_id, id);

--
-- Name: approvals approvals_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.approvals
    ADD CONSTRAINT approvals_pkey PRIMARY KEY (organization_id, id);

--
-- Name: audit_log audit_log_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.audit_log
    ADD CONSTRAINT audit_log_pkey PRIMARY KEY (organization_id, id);

--
-- Name: auth_challenges auth_challenges_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.auth_challenges
    ADD CONSTRAINT auth_challenges_pkey PRIMARY KEY (id);

--
-- Name: campaign_attachments campaign_attachments_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.campaign_attachments
    ADD CONSTRAINT campaign_attachments_pkey PRIMARY KEY (organization_id, id);

--
-- Name: campaign_creation_days campaign_creation_days_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.campaign_creation_days
    ADD CONSTRAINT campaign_creation_days_pkey PRIMARY KEY (organization_id, day);

--
-- Name: campaign_labels campaign_labels_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.campaign_labels
    ADD CONSTRAINT campaign_labels_pkey PRIMARY KEY (organization_id, campaign_id, label_id);

--
-- Name: campaign_leads campaign_leads_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.campaign_leads
    ADD CONSTRAINT campaign_leads_pkey PRIMARY KEY (organization_id, campaign_id, contact_id);

--
-- Name: campaign_logs campaign_logs_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.campaign_logs
    ADD CONSTRAINT campaign_logs_pkey PRIMARY KEY (organization_id, id);

--
-- Name: campaign_mailboxes campaign_mailboxes_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.campaign_mailboxes
    ADD CONSTRAINT campaign_mailboxes_pkey PRIMARY KEY (organization_id, campaign_id, mailbox_id);

--
-- Name: campaign_preflight_reports campaign_preflight_reports_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.campaign_preflight_reports
    ADD CONSTRAINT campaign_preflight_reports_pkey PRIMARY KEY (organization_id, id);

--
-- Name: campaign_segments campaign_segments_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.campaign_segments
    ADD CONSTRAINT campaign_segments_pkey PRIMARY KEY (organization_id, campaign_id, segment_id);

--
-- Name: campaign_send_days campaign_send_days_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.campaign_send_days
    ADD CONSTRAINT campaign_send_days_pkey PRIMARY KEY (organization_id, campaign_id, day);

--
-- Name: campaign_step_runs campaign_step_runs_organization_id_campaign_id_contact_id_s_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.campaign_step_runs
    ADD CONSTRAINT campaign_step_runs_organization_id_campaign_id_contact_id_s_key UNIQUE (organization_id, campaign_id, contact_id, step_id);

--
-- Name: campaign_step_runs campaign_step_runs_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.campaign_step_runs
    ADD CONSTRAINT campaign_step_runs_pkey PRIMARY KEY (organization_id, id);

--
-- Name: campaign_steps campaign_steps_organization_id_campaign_id_position_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.campaign_steps
    ADD CONSTRAINT campaign_steps_organization_id_campaign_id_position_key UNIQUE (organization_id, campaign_id, "position") DEFERRABLE INITIALLY DEFERRED;

--
-- Name: campaign_steps campaign_steps_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.campaign_steps
    ADD CONSTRAINT campaign_steps_pkey PRIMARY KEY (organization_id, id);

--
-- Name: campaign_test_runs campaign_test_runs_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.campaign_test_runs
    ADD CONSTRAINT campaign_test_runs_pkey PRIMARY KEY (organization_id, id);

--
-- Name: campaign_variants campaign_variants_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.campaign_variants
    ADD CONSTRAINT campaign_variants_pkey PRIMARY KEY (organization_id, id);

--
-- Name: campaigns campaigns_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.campaigns
    ADD CONSTRAINT campaigns_pkey PRIMARY KEY (organization_id, id);

--
-- Name: contact_activities contact_activities_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.contact_activities
    ADD CONSTRAINT contact_activities_pkey PRIMARY KEY (organization_id, id);

--
-- Name: contact_categories contact_categories_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.contact_categories
    ADD CONSTRAINT contact_categories_pkey PRIMARY KEY (organization_id, contact_id, category_id);

--
-- Name: contact_notes contact_notes_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.contact_notes
    ADD CONSTRAINT contact_notes_pkey PRIMARY KEY (organization_id, id);

--
-- Name: contact_stats contact_stats_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.contact_stats
    ADD CONSTRAINT contact_stats_pkey PRIMARY KEY (organization_id);

--
-- Name: contacts contacts_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.contacts
    ADD CONSTRAINT contacts_pkey PRIMARY KEY (organization_id, id);

--
-- Name: custom_roles custom_roles_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.custom_roles
    ADD CONSTRAINT custom_roles_pkey PRIMARY KEY (organization_id, id);

--
-- Name: deals deals_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.deals
    ADD CONSTRAINT deals_pkey PRIMARY KEY (organization_id, id);

--
-- Name: deliverability_events deliverability_events_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.deliverability_events
    ADD CONSTRAINT deliverability_events_pkey PRIMARY KEY (organization_id, id);

--
-- Name: device_tokens device_tokens_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.device_tokens
    ADD CONSTRAINT device_tokens_pkey PRIMARY KEY (token);

--
-- Name: event_consumer_acks event_consumer_acks_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.event_consumer_acks
    ADD CONSTRAINT event_consumer_acks_pkey PRIMARY KEY (organization_id, event_id, consumer);

--
-- Name: event_outbox event_outbox_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.event_outbox
    ADD CONSTRAINT event_outbox_pkey PRIMARY KEY (organization_id, id);

--
-- Name: idempotency_keys idempotency_keys_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.idempotency_keys
    ADD CONSTRAINT idempotency_keys_pkey PRIMARY KEY (organization_id, credential_id, key);

--
-- Name: inbox_messages inbox_messages_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.inbox_messages
    ADD CONSTRAINT inbox_messages_pkey PRIMARY KEY (organization_id, id);

--
-- Name: inbox_snoozes inbox_snoozes_organization_id_user_id_thread_id_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.inbox_snoozes
    ADD CONSTRAINT inbox_snoozes_organization_id_user_id_thread_id_key UNIQUE (organization_id, user_id, thread_id);

--
-- Name: inbox_snoozes inbox_snoozes_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.inbox_snoozes
    ADD CONSTRAINT inbox_snoozes_pkey PRIMARY KEY (organization_id, id);

--
-- Name: inbox_thread_folders inbox_thread_folders_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.inbox_thread_folders
    ADD CONSTRAINT inbox_thread_folders_pkey PRIMARY KEY (organization_id, thread_id, folder_role);

--
-- Name: inbox_thread_labels inbox_thread_labels_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.inbox_thread_labels
    ADD CONSTRAINT inbox_thread_labels_pkey PRIMARY KEY (organization_id, thread_id, label_id);

--
-- Name: inbox_threads inbox_threads_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.inbox_threads
    ADD CONSTRAINT inbox_threads_pkey PRIMARY KEY (organization_id, id);

--
-- Name: labels labels_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.labels
    ADD CONSTRAINT labels_pkey PRIMARY KEY (organization_id, id);

--
-- Name: mailbox_errors mailbox_errors_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.mailbox_errors
    ADD CONSTRAINT mailbox_errors_pkey PRIMARY KEY (organization_id, id);

--
-- Name: mailbox_folders mailbox_folders_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.mailbox_folders
    ADD CONSTRAINT mailbox_folders_pkey PRIMARY KEY (organization_id, mailbox_id, name);

--
-- Name: mailbox_oauth_sessions mailbox_oauth_sessions_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.mailbox_oauth_sessions
    ADD CONSTRAINT mailbox_oauth_sessions_pkey PRIMARY KEY (organization_id, id);

--
-- Name: mailbox_oauth_sessions mailbox_oauth_sessions_state_hash_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.mailbox_oauth_sessions
    ADD CONSTRAINT mailbox_oauth_sessions_state_hash_key UNIQUE (state_hash);

--
-- Name: mailbox_oauth_tokens mailbox_oauth_tokens_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.mailbox_oauth_tokens
    ADD CONSTRAINT mailbox_oauth_tokens_pkey PRIMARY KEY (organization_id, mailbox_id);

--
-- Name: mailbox_plans mailbox_plans_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.mailbox_plans
    ADD CONSTRAINT mailbox_plans_pkey PRIMARY KEY (organization_id, mailbox_id);

--
-- Name: mailbox_send_days mailbox_send_days_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.mailbox_send_days
    ADD CONSTRAINT mailbox_send_days_pkey PRIMARY KEY (organization_id, mailbox_id, day);

--
-- Name: mailbox_sync mailbox_sync_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.mailbox_sync
    ADD CONSTRAINT mailbox_sync_pkey PRIMARY KEY (organization_id, mailbox_id);

--
-- Name: mailbox_warmup_appeals mailbox_warmup_appeals_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.mailbox_warmup_appeals
    ADD CONSTRAINT mailbox_warmup_appeals_pkey PRIMARY KEY (organization_id, id);

--
-- Name: mailboxes mailboxes_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.mailboxes
    ADD CONSTRAINT mailboxes_pkey PRIMARY KEY (organization_id, id);

--
-- Name: memberships memberships_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.memberships
    ADD CONSTRAINT memberships_pkey PRIMARY KEY (organization_id, user_id);

--
-- Name: notification_channel_windows notification_channel_windows_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.notification_channel_windows
    ADD CONSTRAINT notification_channel_windows_pkey PRIMARY KEY (user_id, channel);

--
-- Name: notification_deliveries notification_deliveries_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.notification_deliveries
    ADD CONSTRAINT notification_deliveries_pkey PRIMARY KEY (id);

--
-- Name: notification_preferences notification_preferences_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.notification_preferences
    ADD CONSTRAINT notification_preferences_pkey PRIMARY KEY (user_id);

--
-- Name: notifications notifications_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.notifications
    ADD CONSTRAINT notifications_pkey PRIMARY KEY (id);

--
-- Name: oauth_clients oauth_clients_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.oauth_clients
    ADD CONSTRAINT oauth_clients_pkey PRIMARY KEY (id);

--
-- Name: oauth_grants oauth_grants_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.oauth_grants
    ADD CONSTRAINT oauth_grants_pkey PRIMARY KEY (organization_id, id);

--
-- Name: oauth_tokens oauth_tokens_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.oauth_tokens
    ADD CONSTRAINT oauth_tokens_pkey PRIMARY KEY (organization_id, kind, signature);

--
-- Name: organization_invitations organization_invitations_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.organization_invitations
    ADD CONSTRAINT organization_invitations_pkey PRIMARY KEY (organization_id, id);

--
-- Name: organizations organizations_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.organizations
    ADD CONSTRAINT organizations_pkey PRIMARY KEY (id);

--
-- Name: passkey_credentials passkey_credentials_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.passkey_credentials
    ADD CONSTRAINT passkey_credentials_pkey PRIMARY KEY (id);

--
-- Name: product_events product_events_organization_id_idempotency_key_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.product_events
    ADD CONSTRAINT product_events_organization_id_idempotency_key_key UNIQUE (organization_id, idempotency_key);

--
-- Name: product_events product_events_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.product_events
    ADD CONSTRAINT product_events_pkey PRIMARY KEY (organization_id, id);

--
-- Name: rate_limit_counters rate_limit_counters_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.rate_limit_counters
    ADD CONSTRAINT rate_limit_counters_pkey PRIMARY KEY (key, window_start);

--
-- Name: rate_limit_hits rate_limit_hits_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.rate_limit_hits
    ADD CONSTRAINT rate_limit_hits_pkey PRIMARY KEY (credential_id, second);

--
-- Name: river_job river_job_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.river_job
    ADD CONSTRAINT river_job_pkey PRIMARY KEY (id);

--
-- Name: river_leader river_leader_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.river_leader
    ADD CONSTRAINT river_leader_pkey PRIMARY KEY (name);

--
-- Name: river_migration river_migration_pkey1; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.river_migration
    ADD CONSTRAINT river_migration_pkey1 PRIMARY KEY (line, version);

--
-- Name: river_notification river_notification_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.river_notification
    ADD CONSTRAINT river_notification_pkey PRIMARY KEY (id);

--
-- Name: river_queue river_queue_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.river_queue
    ADD CONSTRAINT river_queue_pkey PRIMARY KEY (name);

--
-- Name: run_events run_events_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.run_events
    ADD CONSTRAINT run_events_pkey PRIMARY KEY (organization_id, run_id, seq);

--
-- Name: runs runs_organization_id_credential_id_idempotency_key_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.runs
    ADD CONSTRAINT runs_organization_id_credential_id_idempotency_key_key UNIQUE (organization_id, credential_id, idempotency_key);

--
-- Name: runs runs_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.runs
    ADD CONSTRAINT runs_pkey PRIMARY KEY (organization_id, id);

--
-- Name: schema_migrations schema_migrations_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.schema_migrations
    ADD CONSTRAINT schema_migrations_pkey PRIMARY KEY (id);

--
-- Name: segment_pins segment_pins_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.segment_pins
    ADD CONSTRAINT segment_pins_pkey PRIMARY KEY (organization_id, segment_id, contact_id);

--
-- Name: segments segments_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.segments
    ADD CONSTRAINT segments_pkey PRIMARY KEY (organization_id, id);

--
-- Name: send_tasks send_tasks_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.send_tasks
    ADD CONSTRAINT send_tasks_pkey PRIMARY KEY (organization_id, id);

--
-- Name: session_refresh_tokens session_refresh_tokens_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.session_refresh_tokens
    ADD CONSTRAINT session_refresh_tokens_pkey PRIMARY KEY (token_hash);

--
-- Name: sessions sessions_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.sessions
    ADD CONSTRAINT sessions_pkey PRIMARY KEY (id);

--
-- Name: signing_keys signing_keys_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.signing_keys
    ADD CONSTRAINT signing_keys_pkey PRIMARY KEY (kid);

--
-- Name: suppressions suppressions_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.suppressions
    ADD CONSTRAINT suppressions_pkey PRIMARY KEY (organization_id, id);

--
-- Name: system_heartbeats system_heartbeats_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.system_heartbeats
    ADD CONSTRAINT system_heartbeats_pkey PRIMARY KEY (name);

--
-- Name: team_members team_members_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.team_members
    ADD CONSTRAINT team_members_pkey PRIMARY KEY (organization_id, team_id, user_id);

--
-- Name: teams teams_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.teams
    ADD CONSTRAINT teams_pkey PRIMARY KEY (organization_id, id);

--
-- Name: tracking_events tracking_events_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.tracking_events
    ADD CONSTRAINT tracking_events_pkey PRIMARY KEY (organization_id, id);

--
-- Name: user_identities user_identities_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.user_identities
    ADD CONSTRAINT user_identities_pkey PRIMARY KEY (provider, subject);

--
-- Name: user_recovery_codes user_recovery_codes_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.user_recovery_codes
    ADD CONSTRAINT user_recovery_codes_pkey PRIMARY KEY (user_id, code_hash);

--
-- Name: user_two_factor user_two_factor_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.user_two_factor
    ADD CONSTRAINT user_two_factor_pkey PRIMARY KEY (user_id);

--
-- Name: users users_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.users
    ADD CONSTRAINT users_pkey PRIMARY KEY (id);

--
-- Name: verification_run_contacts verification_run_contacts_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.verification_run_contacts
    ADD CONSTRAINT verification_run_contacts_pkey PRIMARY KEY (organization_id, run_id, contact_id);

--
-- Name: verification_runs verification_runs_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.verification_runs
    ADD CONSTRAINT verification_runs_pkey PRIMARY KEY (organization_id, id);

--
-- Name: webauthn_users webauthn_users_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.webauthn_users
    ADD CONSTRAINT webauthn_users_pkey PRIMARY KEY (rp_id, user_id);

--
-- Name: webhook_deliveries webhook_deliveries_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.webhook_deliveries
    ADD CONSTRAINT webhook_deliveries_pkey PRIMARY KEY (organization_id, id);

--
-- Name: webhook_endpoints webhook_endpoints_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.webhook_endpoints
    ADD CONSTRAINT webhook_endpoints_pkey PRIMARY KEY (organization_id, id);

--
-- Name: webhook_rate_windows webhook_rate_windows_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.webhook_rate_windows
    ADD CONSTRAINT webhook_rate_windows_pkey PRIMARY KEY (organization_id, endpoint_id, event_type, window_start, shard);

--
-- Name: webhook_throttle_drops webhook_throttle_drops_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.webhook_throttle_drops
    ADD CONSTRAINT webhook_throttle_drops_pkey PRIMARY KEY (organization_id, id);

--
-- Name: agent_policies_api_key; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX agent_policies_api_key ON public.agent_policies USING btree (organization_id, api_key_id) WHERE (enabled AND (api_key_id IS NOT NULL));

--
-- Name: agent_policies_oauth_grant; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX agent_policies_oauth_grant ON public.agent_policies USING btree (organization_id, oauth_grant_id) WHERE (enabled AND (oauth_grant_id IS NOT NULL));

--
-- Name: analytics_campaign_days_period; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX analytics_campaign_days_period ON public.analytics_campaign_days USING btree (organization_id, day) INCLUDE (campaign_id, sent, opens, machine_opens, clicks, machine_clicks, replies);

--
-- Name: analytics_mailbox_days_warmup; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX analytics_mailbox_days_warmup ON public.analytics_mailbox_days USING btree (organization_id, mailbox_id, day) WHERE (kind = 'warmup'::text);

--
-- Name: api_key_usage_logs_key; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX api_key_usage_logs_key ON public.api_key_usage_logs USING btree (organization_id, api_key_id, created_at DESC, id DESC);

--
-- Name: api_key_usage_logs_time; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX api_key_usage_logs_time ON public.api_key_usage_logs USING btree (organization_id, created_at);

--
-- Name: api_keys_key_hash; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX api_keys_key_hash ON public.api_keys USING btree (key_hash);

--
-- Name: api_keys_newest; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX api_keys_newest ON public.api_keys USING btree (organization_id, created_at DESC, id DESC);

--
-- Name: app_connections_name; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX app_connections_name ON public.app_connections USING btree (organization_id, lower(name));

--
-- Name: approvals_pending_expiry; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX approvals_pending_expiry ON public.approvals USING btree (expires_at) WHERE (status = 'pending'::text);

--
-- Name: approvals_recent; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX approvals_recent ON public.approvals USING btree (organization_id, created_at DESC, id DESC);

--
-- Name: audit_log_created; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX audit_log_created ON public.audit_log USING btree (organization_id, created_at DESC, id DESC);

--
-- Name: auth_challenges_expires_at; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX auth_challenges_expires_at ON public.auth_challenges USING btree (expires_at);

--
-- Name: campaign_attachments_campaign; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX campaign_attachments_campaign ON public.campaign_attachments USING btree (organization_id, campaign_id, created_at, id);

--
-- Name: campaign_labels_label; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX campaign_labels_label ON public.campaign_labels USING btree (organization_id, label_id);

--
-- Name: campaign_leads_contact; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX campaign_leads_contact ON public.campaign_leads USING btree (organization_id, contact_id);

--
-- Name: campaign_leads_due; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX campaign_leads_due ON public.campaign_leads USING btree (organization_id, campaign_id, due_at) WHERE ((state = ANY (ARRAY['pending'::text, 'active'::text])) AND (due_at IS NOT NULL) AND (task_id IS NULL));

--
-- Name: campaign_logs_campaign; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX campaign_logs_campaign ON public.campaign_logs USING btree (organization_id, campaign_id, id DESC);

--
-- Name: campaign_mailboxes_mailbox; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX campaign_mailboxes_mailbox ON public.campaign_mailboxes USING btree (organization_id, mailbox_id);

--
-- Name: campaign_preflight_reports_campaign; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX campaign_preflight_reports_campaign ON public.campaign_preflight_reports USING btree (organization_id, campaign_id, created_at DESC);

--
-- Name: campaign_segments_enrolled; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX campaign_segments_enrolled ON public.campaign_segments USING btree (enrolled_at);

--
-- Name: campaign_segments_segment; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX campaign_segments_segment ON public.campaign_segments USING btree (organization_id, segment_id);

--
-- Name: campaign_step_runs_campaign; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX campaign_step_runs_campaign ON public.campaign_step_runs USING btree (organization_id, campaign_id, status);

--
-- Name: campaign_step_runs_waiting; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX campaign_step_runs_waiting ON public.campaign_step_runs USING btree (organization_id, contact_id, wait_event_name) WHERE (status = 'waiting'::text);

--
-- Name: campaign_test_runs_campaign; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX campaign_test_runs_campaign ON public.campaign_test_runs USING btree (organization_id, campaign_id, id DESC);

--
-- Name: campaign_variants_campaign; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX campaign_variants_campaign ON public.campaign_variants USING btree (organization_id, campaign_id, created_at, id);

--
-- Name: campaign_variants_control; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX campaign_variants_control ON public.campaign_variants USING btree (organization_id, step_id) WHERE is_control;

--
-- Name: campaigns_active; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX campaigns_active ON public.campaigns USING btree (organization_id, id) WHERE (status = 'active'::text);

--
-- Name: campaigns_list; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX campaigns_list ON public.campaigns USING btree (organization_id, id DESC);

--
-- Name: contact_activities_contact; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX contact_activities_contact ON public.contact_activities USING btree (organization_id, contact_id, created_at DESC, id DESC);

--
-- Name: contact_categories_category; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX contact_categories_category ON public.contact_categories USING btree (organization_id, category_id, contact_id);

--
-- Name: contact_index_pending_range; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX contact_index_pending_range ON public.contact_index_pending USING btree (organization_id, lo);

--
-- Name: contact_notes_contact; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX contact_notes_contact ON public.contact_notes USING btree (organization_id, contact_id, created_at DESC, id DESC);

--
-- Name: contacts_campaign_count; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX contacts_campaign_count ON public.contacts USING btree (organization_id, campaign_count, id) WHERE search_ready;

--
-- Name: contacts_custom_fields; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX contacts_custom_fields ON public.contacts USING gin (lower((custom_fields)::text) public.gin_trgm_ops) WHERE search_ready;

--
-- Name: contacts_email; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX contacts_email ON public.contacts USING btree (organization_id, email, duplicate_seq);

--
-- Name: contacts_first_name; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX contacts_first_name ON public.contacts USING btree (organization_id, first_name, id) WHERE search_ready;

--
-- Name: contacts_last_name; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX contacts_last_name ON public.contacts USING btree (organization_id, last_name, id) WHERE search_ready;

--
-- Name: contacts_search; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX contacts_search ON public.contacts USING gin (lower((((((((first_name)::text || ' '::text) || (last_name)::text) || ' '::text) || (email)::text) || ' '::text) || (company)::text)) public.gin_trgm_ops) WHERE search_ready;

--
-- Name: contacts_updated; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX contacts_updated ON public.contacts USING btree (organization_id, updated_at, id) WHERE search_ready;

--
-- Name: custom_roles_name; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX custom_roles_name ON public.custom_roles USING btree (organization_id, lower(name));

--
-- Name: deals_contact; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX deals_contact ON public.deals USING btree (organization_id, contact_id, created_at DESC) WHERE (contact_id IS NOT NULL);

--
-- Name: deliverability_events_campaign; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX deliverability_events_campaign ON public.deliverability_events USING btree (organization_id, campaign_id, event_type, at) WHERE (campaign_id IS NOT NULL);

--
-- Name: deliverability_events_contact; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX deliverability_events_contact ON public.deliverability_events USING btree (organization_id, contact_id, at) WHERE (contact_id IS NOT NULL);

--
-- Name: deliverability_events_idempotency; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX deliverability_events_idempotency ON public.deliverability_events USING btree (organization_id, idempotency_key) WHERE (idempotency_key IS NOT NULL);

--
-- Name: device_tokens_user_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX device_tokens_user_id ON public.device_tokens USING btree (user_id);

--
-- Name: event_outbox_created; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX event_outbox_created ON public.event_outbox USING btree (created_at);

--
-- Name: event_outbox_pending; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX event_outbox_pending ON public.event_outbox USING btree (created_at) WHERE (dispatched_at IS NULL);

--
-- Name: held_leads_approval; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX held_leads_approval ON public.held_leads USING btree (organization_id, approval_id);

--
-- Name: held_leads_campaign; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX held_leads_campaign ON public.held_leads USING btree (organization_id, campaign_id) WHERE (campaign_id IS NOT NULL);

--
-- Name: held_leads_contact; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX held_leads_contact ON public.held_leads USING btree (organization_id, contact_id);

--
-- Name: held_leads_segment; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX held_leads_segment ON public.held_leads USING btree (organization_id, segment_id) WHERE (segment_id IS NOT NULL);

--
-- Name: held_leads_via_segment; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX held_leads_via_segment ON public.held_leads USING btree (organization_id, campaign_id, contact_id) WHERE via_segment;

--
-- Name: idempotency_keys_expires_at; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX idempotency_keys_expires_at ON public.idempotency_keys USING btree (expires_at);

--
-- Name: inbox_messages_campaign_intent; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX inbox_messages_campaign_intent ON public.inbox_messages USING btree (organization_id, campaign_id, intent) WHERE (campaign_id IS NOT NULL);

--
-- Name: inbox_messages_message_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX inbox_messages_message_id ON public.inbox_messages USING btree (organization_id, mailbox_id, message_id) WHERE (message_id <> ''::text);

--
-- Name: inbox_messages_references; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX inbox_messages_references ON public.inbox_messages USING gin (thread_references);

--
-- Name: inbox_messages_thread; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX inbox_messages_thread ON public.inbox_messages USING btree (organization_id, thread_id, received_at);

--
-- Name: inbox_messages_uid; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX inbox_messages_uid ON public.inbox_messages USING btree (organization_id, mailbox_id, folder, uid_validity, uid);

--
-- Name: inbox_snoozes_due; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX inbox_snoozes_due ON public.inbox_snoozes USING btree (organization_id, user_id, snoozed_until);

--
-- Name: inbox_thread_folders_list; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX inbox_thread_folders_list ON public.inbox_thread_folders USING btree (organization_id, folder_role, last_message_at DESC, thread_id DESC);

--
-- Name: inbox_thread_folders_mailbox; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX inbox_thread_folders_mailbox ON public.inbox_thread_folders USING btree (organization_id, mailbox_id, folder_role, last_message_at DESC, thread_id DESC);

--
-- Name: inbox_thread_folders_unread; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX inbox_thread_folders_unread ON public.inbox_thread_folders USING btree (organization_id, folder_role, last_message_at DESC, thread_id DESC) WHERE (unread > 0);

--
-- Name: inbox_thread_labels_label; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX inbox_thread_labels_label ON public.inbox_thread_labels USING btree (organization_id, label_id, thread_id);

--
-- Name: inbox_threads_conversation; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX inbox_threads_conversation ON public.inbox_threads USING btree (organization_id, conversation_key) WHERE (conversation_key <> ''::text);

--
-- Name: inbox_threads_latest; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX inbox_threads_latest ON public.inbox_threads USING btree (organization_id, last_message_at DESC, id DESC);

--
-- Name: inbox_threads_mailbox; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX inbox_threads_mailbox ON public.inbox_threads USING btree (organization_id, mailbox_id, last_message_at DESC);

--
-- Name: labels_order; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX labels_order ON public.labels USING btree (organization_id, kind, "position", id);

--
-- Name: mailbox_errors_newest; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX mailbox_errors_newest ON public.mailbox_errors USING btree (organization_id, mailbox_id, created_at DESC, id DESC);

--
-- Name: mailbox_oauth_sessions_expires_at; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX mailbox_oauth_sessions_expires_at ON public.mailbox_oauth_sessions USING btree (organization_id, expires_at);

--
-- Name: mailbox_warmup_appeals_pending; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX mailbox_warmup_appeals_pending ON public.mailbox_warmup_appeals USING btree (organization_id, mailbox_id) WHERE (status = 'pending'::text);

--
-- Name: mailboxes_email; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX mailboxes_email ON public.mailboxes USING btree (organization_id, email);

--
-- Name: mailboxes_tags; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX mailboxes_tags ON public.mailboxes USING gin (tags);

--
-- Name: memberships_custom_role; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX memberships_custom_role ON public.memberships USING btree (organization_id, custom_role_id) WHERE (custom_role_id IS NOT NULL);

--
-- Name: memberships_user_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX memberships_user_id ON public.memberships USING btree (user_id);

--
-- Name: notification_deliveries_due; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX notification_deliveries_due ON public.notification_deliveries USING btree (user_id, channel, due_at);

--
-- Name: notifications_user_created; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX notifications_user_created ON public.notifications USING btree (user_id, created_at DESC, id DESC);

--
-- Name: notifications_user_unread; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX notifications_user_unread ON public.notifications USING btree (user_id, created_at DESC, id DESC) WHERE (read_at IS NULL);

--
-- Name: oauth_clients_client_id; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX oauth_clients_client_id ON public.oauth_clients USING btree (client_id);

--
-- Name: oauth_clients_newest; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX oauth_clients_newest ON public.oauth_clients USING btree (organization_id, created_at DESC, id DESC);

--
-- Name: oauth_grants_client; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX oauth_grants_client ON public.oauth_grants USING btree (client_id);

--
-- Name: oauth_grants_live; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX oauth_grants_live ON public.oauth_grants USING btree (organization_id, client_id) WHERE (revoked_at IS NULL);

--
-- Name: oauth_tokens_expires_at; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX oauth_tokens_expires_at ON public.oauth_tokens USING btree (expires_at);

--
-- Name: oauth_tokens_grant; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX oauth_tokens_grant ON public.oauth_tokens USING btree (organization_id, grant_id, kind);

--
-- Name: oauth_tokens_signature; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX oauth_tokens_signature ON public.oauth_tokens USING btree (kind, signature);

--
-- Name: organization_invitations_created; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX organization_invitations_created ON public.organization_invitations USING btree (organization_id, created_at DESC, id DESC);

--
-- Name: organization_invitations_pending; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX organization_invitations_pending ON public.organization_invitations USING btree (organization_id, email) WHERE (state = 'pending'::text);

--
-- Name: organization_invitations_token_hash; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX organization_invitations_token_hash ON public.organization_invitations USING btree (token_hash);

--
-- Name: passkey_credentials_credential_id; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX passkey_credentials_credential_id ON public.passkey_credentials USING btree (rp_id, credential_id);

--
-- Name: passkey_credentials_user_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX passkey_credentials_user_id ON public.passkey_credentials USING btree (user_id, rp_id);

--
-- Name: product_events_contact; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX product_events_contact ON public.product_events USING btree (organization_id, contact_id, received_at DESC);

--
-- Name: product_events_name; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX product_events_name ON public.product_events USING btree (organization_id, name, received_at DESC);

--
-- Name: product_events_recent; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX product_events_recent ON public.product_events USING btree (organization_id, received_at DESC, id DESC);

--
-- Name: rate_limit_counters_window_start; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX rate_limit_counters_window_start ON public.rate_limit_counters USING btree (window_start);

--
-- Name: river_job_args_index; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX river_job_args_index ON public.river_job USING gin (args);

--
-- Name: river_job_kind; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX river_job_kind ON public.river_job USING btree (kind);

--
-- Name: river_job_metadata_index; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX river_job_metadata_index ON public.river_job USING gin (metadata);

--
-- Name: river_job_prioritized_fetching_index; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX river_job_prioritized_fetching_index ON public.river_job USING btree (state, queue, priority, scheduled_at, id);

--
-- Name: river_job_state_and_finalized_at_index; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX river_job_state_and_finalized_at_index ON public.river_job USING btree (state, finalized_at) WHERE (finalized_at IS NOT NULL);

--
-- Name: river_job_unique_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX river_job_unique_idx ON public.river_job USING btree (unique_key) WHERE ((unique_key IS NOT NULL) AND (unique_states IS NOT NULL) AND public.river_job_state_in_bitmask(unique_states, state));

--
-- Name: river_notification_created_at_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX river_notification_created_at_idx ON public.river_notification USING btree (created_at);

--
-- Name: river_notification_topic_id_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX river_notification_topic_id_idx ON public.river_notification USING btree (topic, id);

--
-- Name: runs_active_campaign; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX runs_active_campaign ON public.runs USING btree (organization_id, campaign_id) WHERE (state = ANY (ARRAY['active'::text, 'paused'::text]));

--
-- Name: runs_recent; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX runs_recent ON public.runs USING btree (organization_id, created_at DESC, id DESC);

--
-- Name: segment_pins_contact; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX segment_pins_contact ON public.segment_pins USING btree (organization_id, contact_id);

--
-- Name: segments_newest; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX segments_newest ON public.segments USING btree (organization_id, created_at DESC, id DESC);

--
-- Name: send_tasks_campaign_variant; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX send_tasks_campaign_variant ON public.send_tasks USING btree (organization_id, campaign_id, variant_id) WHERE (campaign_id IS NOT NULL);

--
-- Name: send_tasks_contact; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX send_tasks_contact ON public.send_tasks USING btree (organization_id, contact_id, created_at DESC, id DESC) WHERE (contact_id IS NOT NULL);

--
-- Name: send_tasks_inbox_pending; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX send_tasks_inbox_pending ON public.send_tasks USING btree (organization_id, not_before) WHERE ((status = 'queued'::text) AND (kind = ANY (ARRAY['reply'::text, 'direct'::text])));

--
-- Name: send_tasks_mailbox; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX send_tasks_mailbox ON public.send_tasks USING btree (organization_id, mailbox_id);

--
-- Name: send_tasks_message_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX send_tasks_message_id ON public.send_tasks USING btree (organization_id, message_id) WHERE (campaign_id IS NOT NULL);

--
-- Name: send_tasks_needs_decision; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX send_tasks_needs_decision ON public.send_tasks USING btree (organization_id, mailbox_id, id) WHERE (outcome_check = 'needs_decision'::text);

--
-- Name: send_tasks_thread_message; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX send_tasks_thread_message ON public.send_tasks USING btree (organization_id, mailbox_id, message_id) WHERE (thread_id IS NOT NULL);

--
-- Name: session_refresh_tokens_session_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX session_refresh_tokens_session_id ON public.session_refresh_tokens USING btree (session_id);

--
-- Name: sessions_user_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX sessions_user_id ON public.sessions USING btree (user_id) WHERE (revoked_at IS NULL);

--
-- Name: suppressions_newest; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX suppressions_newest ON public.suppressions USING btree (organization_id, created_at DESC, id DESC);

--
-- Name: suppressions_value; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX suppressions_value ON public.suppressions USING btree (organization_id, kind, value);

--
-- Name: suppressions_value_trgm; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX suppressions_value_trgm ON public.suppressions USING gin (value public.gin_trgm_ops);

--
-- Name: team_members_user; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX team_members_user ON public.team_members USING btree (organization_id, user_id);

--
-- Name: teams_name; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX teams_name ON public.teams USING btree (organization_id, lower(name));

--
-- Name: tracking_events_task; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX tracking_events_task ON public.tracking_events USING btree (organization_id, task_id, at);

--
-- Name: user_identities_user_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX user_identities_user_id ON public.user_identities USING btree (user_id);

--
-- Name: users_email_key; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX users_email_key ON public.users USING btree (email);

--
-- Name: verification_run_contacts_todo; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX verification_run_contacts_todo ON public.verification_run_contacts USING btree (organization_id, run_id, contact_id) WHERE (NOT done);

--
-- Name: verification_runs_newest; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX verification_runs_newest ON public.verification_runs USING btree (organization_id, created_at DESC, id DESC);

--
-- Name: webauthn_users_handle; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX webauthn_users_handle ON public.webauthn_users USING btree (rp_id, handle);

--
-- Name: webhook_deliveries_due; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX webhook_deliveries_due ON public.webhook_deliveries USING btree (next_attempt_at) WHERE (status = ANY (ARRAY['pending'::text, 'failed'::text, 'in_flight'::text]));

--
-- Name: webhook_deliveries_endpoint; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX webhook_deliveries_endpoint ON public.webhook_deliveries USING btree (organization_id, endpoint_id, created_at DESC, id DESC);

--
-- Name: webhook_deliveries_event; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX webhook_deliveries_event ON public.webhook_deliveries USING btree (organization_id, endpoint_id, event_id);

--
-- Name: webhook_deliveries_in_flight; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX webhook_deliveries_in_flight ON public.webhook_deliveries USING btree (organization_id, endpoint_id) WHERE (status = 'in_flight'::text);

--
-- Name: webhook_deliveries_newest; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX webhook_deliveries_newest ON public.webhook_deliveries USING btree (organization_id, created_at DESC, id DESC);

--
-- Name: webhook_endpoints_app; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX webhook_endpoints_app ON public.webhook_endpoints USING btree (organization_id, oauth_client_id) WHERE (oauth_client_id IS NOT NULL);

--
-- Name: webhook_endpoints_newest; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX webhook_endpoints_newest ON public.webhook_endpoints USING btree (organization_id, created_at DESC, id DESC);

--
-- Name: webhook_endpoints_oauth_client_deliveries; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX webhook_endpoints_oauth_client_deliveries ON public.webhook_endpoints USING btree (oauth_client_id) WHERE (oauth_client_id IS NOT NULL);

--
-- Name: webhook_rate_windows_start; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX webhook_rate_windows_start ON public.webhook_rate_windows USING btree (window_start);

--
-- Name: webhook_throttle_drops_newest; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX webhook_throttle_drops_newest ON public.webhook_throttle_drops USING btree (organization_id, window_start DESC);

--
-- Name: webhook_throttle_drops_window; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX webhook_throttle_drops_window ON public.webhook_throttle_drops USING btree (organization_id, COALESCE(endpoint_id, '00000000-0000-0000-0000-000000000000'::uuid), event_type, reason, window_start);

--
-- Name: campaign_leads campaign_leads_delete; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER campaign_leads_delete AFTER DELETE ON public.campaign_leads REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION public.campaign_leads_count();

--
-- Name: campaign_leads campaign_leads_had_leads; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER campaign_leads_had_leads AFTER INSERT ON public.campaign_leads REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION public.campaign_leads_had_leads();

--
-- Name: campaign_leads campaign_leads_insert; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER campaign_leads_insert AFTER INSERT ON public.campaign_leads REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION public.campaign_leads_count();

--
-- Name: contact_categories contact_categories_delete; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER contact_categories_delete AFTER DELETE ON public.contact_categories REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION public.contact_categories_count();

--
-- Name: contact_categories contact_categories_insert; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER contact_categories_insert AFTER INSERT ON public.contact_categories REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION public.contact_categories_count();

--
-- Name: contacts contact_stats_delete; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER contact_stats_delete AFTER DELETE ON public.contacts REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION public.contact_stats_apply();

--
-- Name: contacts contact_stats_insert; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER contact_stats_insert AFTER INSERT ON public.contacts REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION public.contact_stats_apply();

--
-- Name: contacts contact_stats_update; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER contact_stats_update AFTER UPDATE ON public.contacts REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION public.contact_stats_apply();

--
-- Name: organizations organizations_delete_contacts; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER organizations_delete_contacts AFTER DELETE ON public.organizations REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION public.organizations_delete_contacts();

--
-- Name: agent_policies agent_policies_created_by_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.agent_policies
    ADD CONSTRAINT agent_policies_created_by_fkey FOREIGN KEY (created_by) REFERENCES public.users(id) ON DELETE SET NULL;

--
-- Name: agent_policies agent_policies_organization_id_api_key_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.agent_policies
    ADD CONSTRAINT agent_policies_organization_id_api_key_id_fkey FOREIGN KEY (organization_id, api_key_id) REFERENCES public.api_keys(organization_id, id) ON DELETE CASCADE;

--
-- Name: agent_policies agent_policies_organization_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.agent_policies
    ADD CONSTRAINT agent_policies_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES public.organizations(id) ON DELETE CASCADE;

--
-- Name: agent_policies agent_policies_organization_id_oauth_grant_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.agent_policies
    ADD CONSTRAINT agent_policies_organization_id_oauth_grant_id_fkey FOREIGN KEY (organization_id, oauth_grant_id) REFERENCES public.oauth_grants(organization_id, id) ON DELETE CASCADE;

--
-- Name: agent_policy_usage agent_policy_usage_organization_id_policy_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.agent_policy_usage
    ADD CONSTRAINT agent_policy_usage_organization_id_policy_id_fkey FOREIGN KEY (organization_id, policy_id) REFERENCES public.agent_policies(organization_id, id) ON DELETE CASCADE;

--
-- Name: analytics_engagement analytics_engagement_organization_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.analytics_engagement
    ADD CONSTRAINT analytics_engagement_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES public.organizations(id) ON DELETE CASCADE;

--
-- Name: analytics_mailbox_days analytics_mailbox_days_organization_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.analytics_mailbox_days
    ADD CONSTRAINT analytics_mailbox_days_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES public.organizations(id) ON DELETE CASCADE;

--
-- Name: analytics_org_days analytics_org_days_organization_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.analytics_org_days
    ADD CONSTRAINT analytics_org_days_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES public.organizations(id) ON DELETE CASCADE;

--
-- Name: api_key_usage_logs api_key_usage_logs_organization_id_api_key_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.api_key_usage_logs
    ADD CONSTRAINT api_key_usage_logs_organization_id_api_key_id_fkey FOREIGN KEY (organization_id, api_key_id) REFERENCES public.api_keys(organization_id, id) ON DELETE CASCADE;

--
-- Name: api_keys api_keys_organization_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.api_keys
    ADD CONSTRAINT api_keys_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES public.organizations(id) ON DELETE CASCADE;

--
-- Name: api_keys api_keys_user_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.api_keys
    ADD CONSTRAINT api_keys_user_id_fkey FOREIGN KEY (user_id) REFERENCES public.users(id) ON DELETE SET NULL;

--
-- Name: app_connections app_connections_organization_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.app_connections
    ADD CONSTRAINT app_connections_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES public.organizations(id) ON DELETE CASCADE;

--
-- Name: approvals approvals_decided_by_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.approvals
    ADD CONSTRAINT approvals_decided_by_fkey FOREIGN KEY (decided_by) REFERENCES public.users(id) ON DELETE SET NULL;

--
-- Name: approvals approvals_organization_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.approvals
    ADD CONSTRAINT approvals_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES public.organizations(id) ON DELETE CASCADE;

--
-- Name: approvals approvals_organization_id_run_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.approvals
    ADD CONSTRAINT approvals_organization_id_run_id_fkey FOREIGN KEY (organization_id, run_id) REFERENCES public.runs(organization_id, id) ON DELETE CASCADE;

--
-- Name: audit_log audit_log_organization_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.audit_log
    ADD CONSTRAINT audit_log_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES public.organizations(id) ON DELETE CASCADE;

--
-- Name: auth_challenges auth_challenges_user_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.auth_challenges
    ADD CONSTRAINT auth_challenges_user_id_fkey FOREIGN KEY (user_id) REFERENCES public.users(id) ON DELETE CASCADE;

--
-- Name: campaign_attachments campaign_attachments_organization_id_campaign_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.campaign_attachments
    ADD CONSTRAINT campaign_attachments_organization_id_campaign_id_fkey FOREIGN KEY (organization_id, campaign_id) REFERENCES public.campaigns(organization_id, id) ON DELETE CASCADE;

--
-- Name: campaign_attachments campaign_attachments_organization_id_step_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.campaign_attachments
    ADD CONSTRAINT campaign_attachments_organization_id_step_id_fkey FOREIGN KEY (organization_id, step_id) REFERENCES public.campaign_steps(organization_id, id) ON DELETE CASCADE;

--
-- Name: campaign_creation_days campaign_creation_days_organization_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.campaign_creation_days
    ADD CONSTRAINT campaign_creation_days_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES public.organizations(id) ON DELETE CASCADE;

--
-- Name: campaign_labels campaign_labels_organization_id_campaign_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.campaign_labels
    ADD CONSTRAINT campaign_labels_organization_id_campaign_id_fkey FOREIGN KEY (organization_id, campaign_id) REFERENCES public.campaigns(organization_id, id) ON DELETE CASCADE;

--
-- Name: campaign_labels campaign_labels_organization_id_label_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.campaign_labels
    ADD CONSTRAINT campaign_labels_organization_id_label_id_fkey FOREIGN KEY (organization_id, label_id) REFERENCES public.labels(organization_id, id) ON DELETE CASCADE;

--
-- Name: campaign_leads campaign_leads_organization_id_campaign_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.campaign_leads
    ADD CONSTRAINT campaign_leads_organization_id_campaign_id_fkey FOREIGN KEY (organization_id, campaign_id) REFERENCES public.campaigns(organization_id, id) ON DELETE CASCADE;

--
-- Name: campaign_leads campaign_leads_organization_id_contact_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.campaign_leads
    ADD CONSTRAINT campaign_leads_organization_id_contact_id_fkey FOREIGN KEY (organization_id, contact_id) REFERENCES public.contacts(organization_id, id) ON DELETE CASCADE;

--
-- Name: campaign_logs campaign_logs_organization_id_campaign_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.campaign_logs
    ADD CONSTRAINT campaign_logs_organization_id_campaign_id_fkey FOREIGN KEY (organization_id, campaign_id) REFERENCES public.campaigns(organization_id, id) ON DELETE CASCADE;

--
-- Name: campaign_mailboxes campaign_mailboxes_organization_id_campaign_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.campaign_mailboxes
    ADD CONSTRAINT campaign_mailboxes_organization_id_campaign_id_fkey FOREIGN KEY (organization_id, campaign_id) REFERENCES public.campaigns(organization_id, id) ON DELETE CASCADE;

--
-- Name: campaign_mailboxes campaign_mailboxes_organization_id_mailbox_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.campaign_mailboxes
    ADD CONSTRAINT campaign_mailboxes_organization_id_mailbox_id_fkey FOREIGN KEY (organization_id, mailbox_id) REFERENCES public.mailboxes(organization_id, id) ON DELETE CASCADE;

--
-- Name: campaign_preflight_reports campaign_preflight_reports_organization_id_campaign_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.campaign_preflight_reports
    ADD CONSTRAINT campaign_preflight_reports_organization_id_campaign_id_fkey FOREIGN KEY (organization_id, campaign_id) REFERENCES public.campaigns(organization_id, id) ON DELETE CASCADE;

--
-- Name: campaign_segments campaign_segments_organization_id_campaign_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.campaign_segments
    ADD CONSTRAINT campaign_segments_organization_id_campaign_id_fkey FOREIGN KEY (organization_id, campaign_id) REFERENCES public.campaigns(organization_id, id) ON DELETE CASCADE;

--
-- Name: campaign_segments campaign_segments_organization_id_segment_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.campaign_segments
    ADD CONSTRAINT campaign_segments_organization_id_segment_id_fkey FOREIGN KEY (organization_id, segment_id) REFERENCES public.segments(organization_id, id) ON DELETE CASCADE;

--
-- Name: campaign_send_days campaign_send_days_organization_id_campaign_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.campaign_send_days
    ADD CONSTRAINT campaign_send_days_organization_id_campaign_id_fkey FOREIGN KEY (organization_id, campaign_id) REFERENCES public.campaigns(organization_id, id) ON DELETE CASCADE;

--
-- Name: campaign_step_runs campaign_step_runs_organization_id_campaign_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.campaign_step_runs
    ADD CONSTRAINT campaign_step_runs_organization_id_campaign_id_fkey FOREIGN KEY (organization_id, campaign_id) REFERENCES public.campaigns(organization_id, id) ON DELETE CASCADE;

--
-- Name: campaign_steps campaign_steps_organization_id_campaign_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.campaign_steps
    ADD CONSTRAINT campaign_steps_organization_id_campaign_id_fkey FOREIGN KEY (organization_id, campaign_id) REFERENCES public.campaigns(organization_id, id) ON DELETE CASCADE;

--
-- Name: campaign_test_runs campaign_test_runs_organization_id_campaign_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.campaign_test_runs
    ADD CONSTRAINT campaign_test_runs_organization_id_campaign_id_fkey FOREIGN KEY (organization_id, campaign_id) REFERENCES public.campaigns(organization_id, id) ON DELETE CASCADE;

--
-- Name: campaign_variants campaign_variants_organization_id_campaign_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.campaign_variants
    ADD CONSTRAINT campaign_variants_organization_id_campaign_id_fkey FOREIGN KEY (organization_id, campaign_id) REFERENCES public.campaigns(organization_id, id) ON DELETE CASCADE;

--
-- Name: campaign_variants campaign_variants_organization_id_step_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.campaign_variants
    ADD CONSTRAINT campaign_variants_organization_id_step_id_fkey FOREIGN KEY (organization_id, step_id) REFERENCES public.campaign_steps(organization_id, id) ON DELETE CASCADE;

--
-- Name: campaigns campaigns_organization_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.campaigns
    ADD CONSTRAINT campaigns_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES public.organizations(id) ON DELETE CASCADE;

--
-- Name: contact_activities contact_activities_organization_id_contact_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.contact_activities
    ADD CONSTRAINT contact_activities_organization_id_contact_id_fkey FOREIGN KEY (organization_id, contact_id) REFERENCES public.contacts(organization_id, id) ON DELETE CASCADE;

--
-- Name: contact_categories contact_categories_organization_id_category_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.contact_categories
    ADD CONSTRAINT contact_categories_organization_id_category_id_fkey FOREIGN KEY (organization_id, category_id) REFERENCES public.labels(organization_id, id) ON DELETE CASCADE;

--
-- Name: contact_categories contact_categories_organization_id_contact_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.contact_categories
    ADD CONSTRAINT contact_categories_organization_id_contact_id_fkey FOREIGN KEY (organization_id, contact_id) REFERENCES public.contacts(organization_id, id) ON DELETE CASCADE;

--
-- Name: contact_index_pending contact_index_pending_organization_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.contact_index_pending
    ADD CONSTRAINT contact_index_pending_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES public.organizations(id) ON DELETE CASCADE;

--
-- Name: contact_notes contact_notes_organization_id_contact_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.contact_notes
    ADD CONSTRAINT contact_notes_organization_id_contact_id_fkey FOREIGN KEY (organization_id, contact_id) REFERENCES public.contacts(organization_id, id) ON DELETE CASCADE;

--
-- Name: contact_stats contact_stats_organization_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.contact_stats
    ADD CONSTRAINT contact_stats_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES public.organizations(id) ON DELETE CASCADE;

--
-- Name: custom_roles custom_roles_organization_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.custom_roles
    ADD CONSTRAINT custom_roles_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES public.organizations(id) ON DELETE CASCADE;

--
-- Name: deals deals_organization_id_contact_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.deals
    ADD CONSTRAINT deals_organization_id_contact_id_fkey FOREIGN KEY (organization_id, contact_id) REFERENCES public.contacts(organization_id, id) ON DELETE SET NULL (contact_id);

--
-- Name: deals deals_organization_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.deals
    ADD CONSTRAINT deals_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES public.organizations(id) ON DELETE CASCADE;

--
-- Name: device_tokens device_tokens_user_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.device_tokens
    ADD CONSTRAINT device_tokens_user_id_fkey FOREIGN KEY (user_id) REFERENCES public.users(id) ON DELETE CASCADE;

--
-- Name: event_consumer_acks event_consumer_acks_organization_id_event_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.event_consumer_acks
    ADD CONSTRAINT event_consumer_acks_organization_id_event_id_fkey FOREIGN KEY (organization_id, event_id) REFERENCES public.event_outbox(organization_id, id) ON DELETE CASCADE;

--
-- Name: event_outbox event_outbox_organization_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.event_outbox
    ADD CONSTRAINT event_outbox_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES public.organizations(id) ON DELETE CASCADE;

--
-- Name: held_leads held_leads_organization_id_approval_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.held_leads
    ADD CONSTRAINT held_leads_organization_id_approval_id_fkey FOREIGN KEY (organization_id, approval_id) REFERENCES public.approvals(organization_id, id) ON DELETE CASCADE;

--
-- Name: held_leads held_leads_organization_id_campaign_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.held_leads
    ADD CONSTRAINT held_leads_organization_id_campaign_id_fkey FOREIGN KEY (organization_id, campaign_id) REFERENCES public.campaigns(organization_id, id) ON DELETE CASCADE;

--
-- Name: held_leads held_leads_organization_id_contact_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.held_leads
    ADD CONSTRAINT held_leads_organization_id_contact_id_fkey FOREIGN KEY (organization_id, contact_id) REFERENCES public.contacts(organization_id, id) ON DELETE CASCADE;

--
-- Name: held_leads held_leads_organization_id_segment_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.held_leads
    ADD CONSTRAINT held_leads_organization_id_segment_id_fkey FOREIGN KEY (organization_id, segment_id) REFERENCES public.segments(organization_id, id) ON DELETE CASCADE;

--
-- Name: idempotency_keys idempotency_keys_organization_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.idempotency_keys
    ADD CONSTRAINT idempotency_keys_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES public.organizations(id) ON DELETE CASCADE;

--
-- Name: inbox_messages inbox_messages_organization_id_mailbox_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.inbox_messages
    ADD CONSTRAINT inbox_messages_organization_id_mailbox_id_fkey FOREIGN KEY (organization_id, mailbox_id) REFERENCES public.mailboxes(organization_id, id) ON DELETE CASCADE;

--
-- Name: inbox_messages inbox_messages_organization_id_thread_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.inbox_messages
    ADD CONSTRAINT inbox_messages_organization_id_thread_id_fkey FOREIGN KEY (organization_id, thread_id) REFERENCES public.inbox_threads(organization_id, id) ON DELETE CASCADE;

--
-- Name: inbox_snoozes inbox_snoozes_organization_id_thread_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.inbox_snoozes
    ADD CONSTRAINT inbox_snoozes_organization_id_thread_id_fkey FOREIGN KEY (organization_id, thread_id) REFERENCES public.inbox_threads(organization_id, id) ON DELETE CASCADE;

--
-- Name: inbox_snoozes inbox_snoozes_user_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.inbox_snoozes
    ADD CONSTRAINT inbox_snoozes_user_id_fkey FOREIGN KEY (user_id) REFERENCES public.users(id) ON DELETE CASCADE;

--
-- Name: inbox_thread_folders inbox_thread_folders_organization_id_thread_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.inbox_thread_folders
    ADD CONSTRAINT inbox_thread_folders_organization_id_thread_id_fkey FOREIGN KEY (organization_id, thread_id) REFERENCES public.inbox_threads(organization_id, id) ON DELETE CASCADE;

--
-- Name: inbox_thread_labels inbox_thread_labels_organization_id_label_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.inbox_thread_labels
    ADD CONSTRAINT inbox_thread_labels_organization_id_label_id_fkey FOREIGN KEY (organization_id, label_id) REFERENCES public.labels(organization_id, id) ON DELETE CASCADE;

--
-- Name: inbox_thread_labels inbox_thread_labels_organization_id_thread_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.inbox_thread_labels
    ADD CONSTRAINT inbox_thread_labels_organization_id_thread_id_fkey FOREIGN KEY (organization_id, thread_id) REFERENCES public.inbox_threads(organization_id, id) ON DELETE CASCADE;

--
-- Name: inbox_threads inbox_threads_organization_id_mailbox_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.inbox_threads
    ADD CONSTRAINT inbox_threads_organization_id_mailbox_id_fkey FOREIGN KEY (organization_id, mailbox_id) REFERENCES public.mailboxes(organization_id, id) ON DELETE CASCADE;

--
-- Name: labels labels_organization_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.labels
    ADD CONSTRAINT labels_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES public.organizations(id) ON DELETE CASCADE;

--
-- Name: mailbox_errors mailbox_errors_organization_id_mailbox_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.mailbox_errors
    ADD CONSTRAINT mailbox_errors_organization_id_mailbox_id_fkey FOREIGN KEY (organization_id, mailbox_id) REFERENCES public.mailboxes(organization_id, id) ON DELETE CASCADE;

--
-- Name: mailbox_folders mailbox_folders_organization_id_mailbox_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.mailbox_folders
    ADD CONSTRAINT mailbox_folders_organization_id_mailbox_id_fkey FOREIGN KEY (organization_id, mailbox_id) REFERENCES public.mailboxes(organization_id, id) ON DELETE CASCADE;

--
-- Name: mailbox_oauth_sessions mailbox_oauth_sessions_organization_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.mailbox_oauth_sessions
    ADD CONSTRAINT mailbox_oauth_sessions_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES public.organizations(id) ON DELETE CASCADE;

--
-- Name: mailbox_oauth_sessions mailbox_oauth_sessions_user_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.mailbox_oauth_sessions
    ADD CONSTRAINT mailbox_oauth_sessions_user_id_fkey FOREIGN KEY (user_id) REFERENCES public.users(id) ON DELETE SET NULL;

--
-- Name: mailbox_oauth_tokens mailbox_oauth_tokens_organization_id_mailbox_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.mailbox_oauth_tokens
    ADD CONSTRAINT mailbox_oauth_tokens_organization_id_mailbox_id_fkey FOREIGN KEY (organization_id, mailbox_id) REFERENCES public.mailboxes(organization_id, id) ON DELETE CASCADE;

--
-- Name: mailbox_plans mailbox_plans_organization_id_mailbox_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.mailbox_plans
    ADD CONSTRAINT mailbox_plans_organization_id_mailbox_id_fkey FOREIGN KEY (organization_id, mailbox_id) REFERENCES public.mailboxes(organization_id, id) ON DELETE CASCADE;

--
-- Name: mailbox_send_days mailbox_send_days_organization_id_mailbox_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.mailbox_send_days
    ADD CONSTRAINT mailbox_send_days_organization_id_mailbox_id_fkey FOREIGN KEY (organization_id, mailbox_id) REFERENCES public.mailboxes(organization_id, id) ON DELETE CASCADE;

--
-- Name: mailbox_sync mailbox_sync_organization_id_mailbox_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.mailbox_sync
    ADD CONSTRAINT mailbox_sync_organization_id_mailbox_id_fkey FOREIGN KEY (organization_id, mailbox_id) REFERENCES public.mailboxes(organization_id, id) ON DELETE CASCADE;

--
-- Name: mailbox_warmup_appeals mailbox_warmup_appeals_organization_id_mailbox_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.mailbox_warmup_appeals
    ADD CONSTRAINT mailbox_warmup_appeals_organization_id_mailbox_id_fkey FOREIGN KEY (organization_id, mailbox_id) REFERENCES public.mailboxes(organization_id, id) ON DELETE CASCADE;

--
-- Name: mailboxes mailboxes_organization_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.mailboxes
    ADD CONSTRAINT mailboxes_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES public.organizations(id) ON DELETE CASCADE;

--
-- Name: mailboxes mailboxes_user_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.mailboxes
    ADD CONSTRAINT mailboxes_user_id_fkey FOREIGN KEY (user_id) REFERENCES public.users(id) ON DELETE SET NULL;

--
-- Name: memberships memberships_custom_role_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.memberships
    ADD CONSTRAINT memberships_custom_role_fkey FOREIGN KEY (organization_id, custom_role_id) REFERENCES public.custom_roles(organization_id, id);

--
-- Name: memberships memberships_organization_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.memberships
    ADD CONSTRAINT memberships_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES public.organizations(id) ON DELETE CASCADE;

--
-- Name: memberships memberships_user_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.memberships
    ADD CONSTRAINT memberships_user_id_fkey FOREIGN KEY (user_id) REFERENCES public.users(id) ON DELETE CASCADE;

--
-- Name: notification_channel_windows notification_channel_windows_user_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.notification_channel_windows
    ADD CONSTRAINT notification_channel_windows_user_id_fkey FOREIGN KEY (user_id) REFERENCES public.users(id) ON DELETE CASCADE;

--
-- Name: notification_deliveries notification_deliveries_organization_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.notification_deliveries
    ADD CONSTRAINT notification_deliveries_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES public.organizations(id) ON DELETE CASCADE;

--
-- Name: notification_deliveries notification_deliveries_user_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.notification_deliveries
    ADD CONSTRAINT notification_deliveries_user_id_fkey FOREIGN KEY (user_id) REFERENCES public.users(id) ON DELETE CASCADE;

--
-- Name: notification_preferences notification_preferences_user_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.notification_preferences
    ADD CONSTRAINT notification_preferences_user_id_fkey FOREIGN KEY (user_id) REFERENCES public.users(id) ON DELETE CASCADE;

--
-- Name: notifications notifications_organization_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.notifications
    ADD CONSTRAINT notifications_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES public.organizations(id) ON DELETE CASCADE;

--
-- Name: notifications notifications_user_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.notifications
    ADD CONSTRAINT notifications_user_id_fkey FOREIGN KEY (user_id) REFERENCES public.users(id) ON DELETE CASCADE;

--
-- Name: oauth_clients oauth_clients_organization_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.oauth_clients
    ADD CONSTRAINT oauth_clients_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES public.organizations(id) ON DELETE CASCADE;

--
-- Name: oauth_grants oauth_grants_client_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.oauth_grants
    ADD CONSTRAINT oauth_grants_client_id_fkey FOREIGN KEY (client_id) REFERENCES public.oauth_clients(id) ON DELETE CASCADE;

--
-- Name: oauth_grants oauth_grants_organization_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.oauth_grants
    ADD CONSTRAINT oauth_grants_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES public.organizations(id) ON DELETE CASCADE;

--
-- Name: oauth_grants oauth_grants_user_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.oauth_grants
    ADD CONSTRAINT oauth_grants_user_id_fkey FOREIGN KEY (user_id) REFERENCES public.users(id) ON DELETE CASCADE;

--
-- Name: oauth_tokens oauth_tokens_organization_id_grant_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.oauth_tokens
    ADD CONSTRAINT oauth_tokens_organization_id_grant_id_fkey FOREIGN KEY (organization_id, grant_id) REFERENCES public.oauth_grants(organization_id, id) ON DELETE CASCADE;

--
-- Name: organization_invitations organization_invitations_organization_id_custom_role_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.organization_invitations
    ADD CONSTRAINT organization_invitations_organization_id_custom_role_id_fkey FOREIGN KEY (organization_id, custom_role_id) REFERENCES public.custom_roles(organization_id, id) ON DELETE SET NULL (custom_role_id);

--
-- Name: organization_invitations organization_invitations_organization_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.organization_invitations
    ADD CONSTRAINT organization_invitations_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES public.organizations(id) ON DELETE CASCADE;

--
-- Name: passkey_credentials passkey_credentials_user_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.passkey_credentials
    ADD CONSTRAINT passkey_credentials_user_id_fkey FOREIGN KEY (user_id) REFERENCES public.users(id) ON DELETE CASCADE;

--
-- Name: product_events product_events_organization_id_contact_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.product_events
    ADD CONSTRAINT product_events_organization_id_contact_id_fkey FOREIGN KEY (organization_id, contact_id) REFERENCES public.contacts(organization_id, id) ON DELETE CASCADE;

--
-- Name: product_events product_events_organization_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.product_events
    ADD CONSTRAINT product_events_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES public.organizations(id) ON DELETE CASCADE;

--
-- Name: run_events run_events_organization_id_run_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.run_events
    ADD CONSTRAINT run_events_organization_id_run_id_fkey FOREIGN KEY (organization_id, run_id) REFERENCES public.runs(organization_id, id) ON DELETE CASCADE;

--
-- Name: runs runs_organization_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.runs
    ADD CONSTRAINT runs_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES public.organizations(id) ON DELETE CASCADE;

--
-- Name: segment_pins segment_pins_organization_id_contact_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.segment_pins
    ADD CONSTRAINT segment_pins_organization_id_contact_id_fkey FOREIGN KEY (organization_id, contact_id) REFERENCES public.contacts(organization_id, id) ON DELETE CASCADE;

--
-- Name: segment_pins segment_pins_organization_id_segment_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.segment_pins
    ADD CONSTRAINT segment_pins_organization_id_segment_id_fkey FOREIGN KEY (organization_id, segment_id) REFERENCES public.segments(organization_id, id) ON DELETE CASCADE;

--
-- Name: segments segments_organization_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.segments
    ADD CONSTRAINT segments_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES public.organizations(id) ON DELETE CASCADE;

--
-- Name: send_tasks send_tasks_organization_id_contact_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.send_tasks
    ADD CONSTRAINT send_tasks_organization_id_contact_id_fkey FOREIGN KEY (organization_id, contact_id) REFERENCES public.contacts(organization_id, id) ON DELETE SET NULL (contact_id);

--
-- Name: send_tasks send_tasks_organization_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.send_tasks
    ADD CONSTRAINT send_tasks_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES public.organizations(id) ON DELETE CASCADE;

--
-- Name: session_refresh_tokens session_refresh_tokens_session_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.session_refresh_tokens
    ADD CONSTRAINT session_refresh_tokens_session_id_fkey FOREIGN KEY (session_id) REFERENCES public.sessions(id) ON DELETE CASCADE;

--
-- Name: sessions sessions_organization_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.sessions
    ADD CONSTRAINT sessions_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES public.organizations(id) ON DELETE SET NULL;

--
-- Name: sessions sessions_user_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.sessions
    ADD CONSTRAINT sessions_user_id_fkey FOREIGN KEY (user_id) REFERENCES public.users(id) ON DELETE CASCADE;

--
-- Name: suppressions suppressions_organization_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.suppressions
    ADD CONSTRAINT suppressions_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES public.organizations(id) ON DELETE CASCADE;

--
-- Name: team_members team_members_organization_id_team_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.team_members
    ADD CONSTRAINT team_members_organization_id_team_id_fkey FOREIGN KEY (organization_id, team_id) REFERENCES public.teams(organization_id, id) ON DELETE CASCADE;

--
-- Name: team_members team_members_organization_id_user_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.team_members
    ADD CONSTRAINT team_members_organization_id_user_id_fkey FOREIGN KEY (organization_id, user_id) REFERENCES public.memberships(organization_id, user_id) ON DELETE CASCADE;

--
-- Name: teams teams_organization_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.teams
    ADD CONSTRAINT teams_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES public.organizations(id) ON DELETE CASCADE;

--
-- Name: user_identities user_identities_user_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.user_identities
    ADD CONSTRAINT user_identities_user_id_fkey FOREIGN KEY (user_id) REFERENCES public.users(id) ON DELETE CASCADE;

--
-- Name: user_recovery_codes user_recovery_codes_user_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.user_recovery_codes
    ADD CONSTRAINT user_recovery_codes_user_id_fkey FOREIGN KEY (user_id) REFERENCES public.users(id) ON DELETE CASCADE;

--
-- Name: user_two_factor user_two_factor_user_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.user_two_factor
    ADD CONSTRAINT user_two_factor_user_id_fkey FOREIGN KEY (user_id) REFERENCES public.users(id) ON DELETE CASCADE;

--
-- Name: users users_last_organization_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.users
    ADD CONSTRAINT users_last_organization_id_fkey FOREIGN KEY (last_organization_id) REFERENCES public.organizations(id) ON DELETE SET NULL;

--
-- Name: verification_run_contacts verification_run_contacts_organization_id_contact_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.verification_run_contacts
    ADD CONSTRAINT verification_run_contacts_organization_id_contact_id_fkey FOREIGN KEY (organization_id, contact_id) REFERENCES public.contacts(organization_id, id) ON DELETE CASCADE;

--
-- Name: verification_run_contacts verification_run_contacts_organization_id_run_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.verification_run_contacts
    ADD CONSTRAINT verification_run_contacts_organization_id_run_id_fkey FOREIGN KEY (organization_id, run_id) REFERENCES public.verification_runs(organization_id, id) ON DELETE CASCADE;

--
-- Name: verification_runs verification_runs_organization_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.verification_runs
    ADD CONSTRAINT verification_runs_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES public.organizations(id) ON DELETE CASCADE;

--
-- Name: webauthn_users webauthn_users_user_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.webauthn_users
    ADD CONSTRAINT webauthn_users_user_id_fkey FOREIGN KEY (user_id) REFERENCES public.users(id) ON DELETE CASCADE;

--
-- Name: webhook_deliveries webhook_deliveries_organization_id_endpoint_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.webhook_deliveries
    ADD CONSTRAINT webhook_deliveries_organization_id_endpoint_id_fkey FOREIGN KEY (organization_id, endpoint_id) REFERENCES public.webhook_endpoints(organization_id, id) ON DELETE CASCADE;

--
-- Name: webhook_endpoints webhook_endpoints_oauth_client_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.webhook_endpoints
    ADD CONSTRAINT webhook_endpoints_oauth_client_id_fkey FOREIGN KEY (oauth_client_id) REFERENCES public.oauth_clients(id) ON DELETE CASCADE;

--
-- Name: webhook_endpoints webhook_endpoints_organization_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.webhook_endpoints
    ADD CONSTRAINT webhook_endpoints_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES public.organizations(id) ON DELETE CASCADE;

--
-- Name: webhook_rate_windows webhook_rate_windows_organization_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.webhook_rate_windows
    ADD CONSTRAINT webhook_rate_windows_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES public.organizations(id) ON DELETE CASCADE;

--
-- Name: webhook_throttle_drops webhook_throttle_drops_organization_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.webhook_throttle_drops
    ADD CONSTRAINT webhook_throttle_drops_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES public.organizations(id) ON DELETE CASCADE;

--
-- Name: agent_policies; Type: ROW SECURITY; Schema: public; Owner: -
--

ALTER TABLE public.agent_policies ENABLE ROW LEVEL SECURITY;

--
-- Name: agent_policy_usage; Type: ROW SECURITY; Schema: public; Owner: -
--

ALTER TABLE public.agent_policy_usage ENABLE ROW LEVEL SECURITY;

--
-- Name: analytics_campaign_days; Type: ROW SECURITY; Schema: public; Owner: -
--

ALTER TABLE public.analytics_campaign_days ENABLE ROW LEVEL SECURITY;

--
-- Name: analytics_campaign_hours; Type: ROW SECURITY; Schema: public; Owner: -
--

ALTER TABLE public.analytics_campaign_hours ENABLE ROW LEVEL SECURITY;

--
-- Name: analytics_engagement; Type: ROW SECURITY; Schema: public; Owner: -
--

ALTER TABLE public.analytics_engagement ENABLE ROW LEVEL SECURITY;

--
-- Name: analytics_mailbox_days; Type: ROW SECURITY; Schema: public; Owner: -
--

ALTER TABLE public.analytics_mailbox_days ENABLE ROW LEVEL SECURITY;

--
-- Name: analytics_org_days; Type: ROW SECURITY; Schema: public; Owner: -
--

ALTER TABLE public.analytics_org_days ENABLE ROW LEVEL SECURITY;

--
-- Name: analytics_step_days; Type: ROW SECURITY; Schema: public; Owner: -
--

ALTER TABLE public.analytics_step_days ENABLE ROW LEVEL SECURITY;

--
-- Name: api_key_usage_logs; Type: ROW SECURITY; Schema: public; Owner: -
--

ALTER TABLE public.api_key_usage_logs ENABLE ROW LEVEL SECURITY;

--
-- Name: api_keys; Type: ROW SECURITY; Schema: public; Owner: -
--

ALTER TABLE public.api_keys ENABLE ROW LEVEL SECURITY;

--
-- Name: app_connections; Type: ROW SECURITY; Schema: public; Owner: -
--

ALTER TABLE public.app_connections ENABLE ROW LEVEL SECURITY;

--
-- Name: approvals; Type: ROW SECURITY; Schema: public; Owner: -
--

ALTER TABLE public.approvals ENABLE ROW LEVEL SECURITY;

--
-- Name: audit_log; Type: ROW SECURITY; Schema: public; Owner: -
--

ALTER TABLE public.audit_log ENABLE ROW LEVEL SECURITY;

--
-- Name: campaign_attachments; Type: ROW SECURITY; Schema: public; Owner: -
--

ALTER TABLE public.campaign_attachments ENABLE ROW LEVEL SECURITY;

--
-- Name: campaign_creation_days; Type: ROW SECURITY; Schema: public; Owner: -
--

ALTER TABLE public.campaign_creation_days ENABLE ROW LEVEL SECURITY;

--
-- Name: campaign_labels; Type: ROW SECURITY; Schema: public; Owner: -
--

ALTER TABLE public.campaign_labels ENABLE ROW LEVEL SECURITY;

--
-- Name: campaign_leads; Type: ROW SECURITY; Schema: public; Owner: -
--

ALTER TABLE public.campaign_leads ENABLE ROW LEVEL SECURITY;

--
-- Name: campaign_logs; Type: ROW SECURITY; Schema: public; Owner: -
--

ALTER TABLE public.campaign_logs ENABLE ROW LEVEL SECURITY;

--
-- Name: campaign_mailboxes; Type: ROW SECURITY; Schema: public; Owner: -
--

ALTER TABLE public.campaign_mailboxes ENABLE ROW LEVEL SECURITY;

--
-- Name: campaign_preflight_reports; Type: ROW SECURITY; Schema: public; Owner: -
--

ALTER TABLE public.campaign_preflight_reports ENABLE ROW LEVEL SECURITY;

--
-- Name: campaign_segments; Type: ROW SECURITY; Schema: public; Owner: -
--

ALTER TABLE public.campaign_segments ENABLE ROW LEVEL SECURITY;

--
-- Name: campaign_send_days; Type: ROW SECURITY; Schema: public; Owner: -
--

ALTER TABLE public.campaign_send_days ENABLE ROW LEVEL SECURITY;

--
-- Name: campaign_step_runs; Type: ROW SECURITY; Schema: public; Owner: -
--

ALTER TABLE public.campaign_step_runs ENABLE ROW LEVEL SECURITY;

--
-- Name: campaign_steps; Type: ROW SECURITY; Schema: public; Owner: -
--

ALTER TABLE public.campaign_steps ENABLE ROW LEVEL SECURITY;

--
-- Name: campaign_test_runs; Type: ROW SECURITY; Schema: public; Owner: -
--

ALTER TABLE public.campaign_test_runs ENABLE ROW LEVEL SECURITY;

--
-- Name: campaign_variants; Type: ROW SECURITY; Schema: public; Owner: -
--

ALTER TABLE public.campaign_variants ENABLE ROW LEVEL SECURITY;

--
-- Name: campaigns; Type: ROW SECURITY; Schema: public; Owner: -
--

ALTER TABLE public.campaigns ENABLE ROW LEVEL SECURITY;

--
-- Name: contact_activities; Type: ROW SECURITY; Schema: public; Owner: -
--

ALTER TABLE public.contact_activities ENABLE ROW LEVEL SECURITY;

--
-- Name: contact_categories; Type: ROW SECURITY; Schema: public; Owner: -
--

ALTER TABLE public.contact_categories ENABLE ROW LEVEL SECURITY;

--
-- Name: contact_index_pending; Type: ROW SECURITY; Schema: public; Owner: -
--

ALTER TABLE public.contact_index_pending ENABLE ROW LEVEL SECURITY;

--
-- Name: contact_notes; Type: ROW SECURITY; Schema: public; Owner: -
--

ALTER TABLE public.contact_notes ENABLE ROW LEVEL SECURITY;

--
-- Name: contact_stats; Type: ROW SECURITY; Schema: public; Owner: -
--

ALTER TABLE public.contact_stats ENABLE ROW LEVEL SECURITY;

--
-- Name: contacts; Type: ROW SECURITY; Schema: public; Owner: -
--

ALTER TABLE public.contacts ENABLE ROW LEVEL SECURITY;

--
-- Name: custom_roles; Type: ROW SECURITY; Schema: public; Owner: -
--

ALTER TABLE public.custom_roles ENABLE ROW LEVEL SECURITY;

--
-- Name: deals; Type: ROW SECURITY; Schema: public; Owner: -
--

ALTER TABLE public.deals ENABLE ROW LEVEL SECURITY;

--
-- Name: deliverability_events; Type: ROW SECURITY; Schema: public; Owner: -
--

ALTER TABLE public.deliverability_events ENABLE ROW LEVEL SECURITY;

--
-- Name: event_consumer_acks; Type: ROW SECURITY; Schema: public; Owner: -
--

ALTER TABLE public.event_consumer_acks ENABLE ROW LEVEL SECURITY;

--
-- Name: event_outbox; Type: ROW SECURITY; Schema: public; Owner: -
--

ALTER TABLE public.event_outbox ENABLE ROW LEVEL SECURITY;

--
-- Name: held_leads; Type: ROW SECURITY; Schema: public; Owner: -
--

ALTER TABLE public.held_leads ENABLE ROW LEVEL SECURITY;

--
-- Name: idempotency_keys; Type: ROW SECURITY; Schema: public; Owner: -
--

ALTER TABLE public.idempotency_keys ENABLE ROW LEVEL SECURITY;

--
-- Name: inbox_messages; Type: ROW SECURITY; Schema: public; Owner: -
--

ALTER TABLE public.inbox_messages ENABLE ROW LEVEL SECURITY;

--
-- Name: inbox_snoozes; Type: ROW SECURITY; Schema: public; Owner: -
--

ALTER TABLE public.inbox_snoozes ENABLE ROW LEVEL SECURITY;

--
-- Name: inbox_thread_folders; Type: ROW SECURITY; Schema: public; Owner: -
--

ALTER TABLE public.inbox_thread_folders ENABLE ROW LEVEL SECURITY;

--
-- Name: inbox_thread_labels; Type: ROW SECURITY; Schema: public; Owner: -
--

ALTER TABLE public.inbox_thread_labels ENABLE ROW LEVEL SECURITY;

--
-- Name: inbox_threads; Type: ROW SECURITY; Schema: public; Owner: -
--

ALTER TABLE public.inbox_threads ENABLE ROW LEVEL SECURITY;

--
-- Name: labels; Type: ROW SECURITY; Schema: public; Owner: -
--

ALTER TABLE public.labels ENABLE ROW LEVEL SECURITY;

--
-- Name: mailbox_errors; Type: ROW SECURITY; Schema: public; Owner: -
--

ALTER TABLE public.mailbox_errors ENABLE ROW LEVEL SECURITY;

--
-- Name: mailbox_folders; Type: ROW SECURITY; Schema: public; Owner: -
--

ALTER TABLE public.mailbox_folders ENABLE ROW LEVEL SECURITY;

--
-- Name: mailbox_oauth_sessions; Type: ROW SECURITY; Schema: public; Owner: -
--

ALTER TABLE public.mailbox_oauth_sessions ENABLE ROW LEVEL SECURITY;

--
-- Name: mailbox_oauth_tokens; Type: ROW SECURITY; Schema: public; Owner: -
--

ALTER TABLE public.mailbox_oauth_tokens ENABLE ROW LEVEL SECURITY;

--
-- Name: mailbox_plans; Type: ROW SECURITY; Schema: public; Owner: -
--

ALTER TABLE public.mailbox_plans ENABLE ROW LEVEL SECURITY;

--
-- Name: mailbox_send_days; Type: ROW SECURITY; Schema: public; Owner: -
--

ALTER TABLE public.mailbox_send_days ENABLE ROW LEVEL SECURITY;

--
-- Name: mailbox_sync; Type: ROW SECURITY; Schema: public; Owner: -
--

ALTER TABLE public.mailbox_sync ENABLE ROW LEVEL SECURITY;

--
-- Name: mailbox_warmup_appeals; Type: ROW SECURITY; Schema: public; Owner: -
--

ALTER TABLE public.mailbox_warmup_appeals ENABLE ROW LEVEL SECURITY;

--
-- Name: mailboxes; Type: ROW SECURITY; Schema: public; Owner: -
--

ALTER TABLE public.mailboxes ENABLE ROW LEVEL SECURITY;

--
-- Name: memberships; Type: ROW SECURITY; Schema: public; Owner: -
--

ALTER TABLE public.memberships ENABLE ROW LEVEL SECURITY;

--
-- Name: oauth_clients; Type: ROW SECURITY; Schema: public; Owner: -
--

ALTER TABLE public.oauth_clients ENABLE ROW LEVEL SECURITY;

--
-- Name: oauth_grants; Type: ROW SECURITY; Schema: public; Owner: -
--

ALTER TABLE public.oauth_grants ENABLE ROW LEVEL SECURITY;

--
-- Name: oauth_tokens; Type: ROW SECURITY; Schema: public; Owner: -
--

ALTER TABLE public.oauth_tokens ENABLE ROW LEVEL SECURITY;

--
-- Name: organization_invitations; Type: ROW SECURITY; Schema: public; Owner: -
--

ALTER TABLE public.organization_invitations ENABLE ROW LEVEL SECURITY;

--
-- Name: organizations; Type: ROW SECURITY; Schema: public; Owner: -
--

ALTER TABLE public.organizations ENABLE ROW LEVEL SECURITY;

--
-- Name: product_events; Type: ROW SECURITY; Schema: public; Owner: -
--

ALTER TABLE public.product_events ENABLE ROW LEVEL SECURITY;

--
-- Name: run_events; Type: ROW SECURITY; Schema: public; Owner: -
--

ALTER TABLE public.run_events ENABLE ROW LEVEL SECURITY;

--
-- Name: runs; Type: ROW SECURITY; Schema: public; Owner: -
--

ALTER TABLE public.runs ENABLE ROW LEVEL SECURITY;

--
-- Name: segment_pins; Type: ROW SECURITY; Schema: public; Owner: -
--

ALTER TABLE public.segment_pins ENABLE ROW LEVEL SECURITY;

--
-- Name: segments; Type: ROW SECURITY; Schema: public; Owner: -
--

ALTER TABLE public.segments ENABLE ROW LEVEL SECURITY;

--
-- Name: oauth_clients self_registration; Type: POLICY; Schema: public; Owner: -
--

CREATE POLICY self_registration ON public.oauth_clients FOR INSERT WITH CHECK ((organization_id IS NULL));

--
-- Name: send_tasks; Type: ROW SECURITY; Schema: public; Owner: -
--

ALTER TABLE public.send_tasks ENABLE ROW LEVEL SECURITY;

--
-- Name: suppressions; Type: ROW SECURITY; Schema: public; Owner: -
--

ALTER TABLE public.suppressions ENABLE ROW LEVEL SECURITY;

--
-- Name: team_members; Type: ROW SECURITY; Schema: public; Owner: -
--

ALTER TABLE public.team_members ENABLE ROW LEVEL SECURITY;

--
-- Name: teams; Type: ROW SECURITY; Schema: public; Owner: -
--

ALTER TABLE public.teams ENABLE ROW LEVEL SECURITY;

--
-- Name: agent_policies tenant_isolation; Type: POLICY; Schema: public; Owner: -
--

CREATE POLICY tenant_isolation ON public.agent_policies USING ((organization_id = public.current_org())) WITH CHECK ((organization_id = public.current_org()));

--
-- Name: agent_policy_usage tenant_isolation; Type: POLICY; Schema: public; Owner: -
--

CREATE POLICY tenant_isolation ON public.agent_policy_usage USING ((organization_id = public.current_org())) WITH CHECK ((organization_id = public.current_org()));

--
-- Name: analytics_campaign_days tenant_isolation; Type: POLICY; Schema: public; Owner: -
--

CREATE POLICY tenant_isolation ON public.analytics_campaign_days USING ((organization_id = public.current_org())) WITH CHECK ((organization_id = public.current_org()));

--
-- Name: analytics_campaign_hours tenant_isolation; Type: POLICY; Schema: public; Owner: -
--

CREATE POLICY tenant_isolation ON public.analytics_campaign_hours USING ((organization_id = public.current_org())) WITH CHECK ((organization_id = public.current_org()));

--
-- Name: analytics_engagement tenant_isolation; Type: POLICY; Schema: public; Owner: -
--

CREATE POLICY tenant_isolation ON public.analytics_engagement USING ((organization_id = public.current_org())) WITH CHECK ((organization_id = public.current_org()));

--
-- Name: analytics_mailbox_days tenant_isolation; Type: POLICY; Schema: public; Owner: -
--

CREATE POLICY tenant_isolation ON public.analytics_mailbox_days USING ((organization_id = public.current_org())) WITH CHECK ((organization_id = public.current_org()));

--
-- Name: analytics_org_days tenant_isolation; Type: POLICY; Schema: public; Owner: -
--

CREATE POLICY tenant_isolation ON public.analytics_org_days USING ((organization_id = public.current_org())) WITH CHECK ((organization_id = public.current_org()));

--
-- Name: analytics_step_days tenant_isolation; Type: POLICY; Schema: public; Owner: -
--

CREATE POLICY tenant_isolation ON public.analytics_step_days USING ((organization_id = public.current_org())) WITH CHECK ((organization_id = public.current_org()));

--
-- Name: api_key_usage_logs tenant_isolation; Type: POLICY; Schema: public; Owner: -
--

CREATE POLICY tenant_isolation ON public.api_key_usage_logs USING ((organization_id = public.current_org())) WITH CHECK ((organization_id = public.current_org()));

--
-- Name: api_keys tenant_isolation; Type: POLICY; Schema: public; Owner: -
--

CREATE POLICY tenant_isolation ON public.api_keys USING ((organization_id = public.current_org())) WITH CHECK ((organization_id = public.current_org()));

--
-- Name: app_connections tenant_isolation; Type: POLICY; Schema: public; Owner: -
--

CREATE POLICY tenant_isolation ON public.app_connections USING ((organization_id = public.current_org())) WITH CHECK ((organization_id = public.current_org()));

--
-- Name: approvals tenant_isolation; Type: POLICY; Schema: public; Owner: -
--

CREATE POLICY tenant_isolation ON public.approvals USING ((organization_id = public.current_org())) WITH CHECK ((organization_id = public.current_org()));

--
-- Name: audit_log tenant_isolation; Type: POLICY; Schema: public; Owner: -
--

CREATE POLICY tenant_isolation ON public.audit_log USING ((organization_id = public.current_org())) WITH CHECK ((organization_id = public.current_org()));

--
-- Name: campaign_attachments tenant_isolation; Type: POLICY; Schema: public; Owner: -
--

CREATE POLICY tenant_isolation ON public.campaign_attachments USING ((organization_id = public.current_org())) WITH CHECK ((organization_id = public.current_org()));

--
-- Name: campaign_creation_days tenant_isolation; Type: POLICY; Schema: public; Owner: -
--

CREATE POLICY tenant_isolation ON public.campaign_creation_days USING ((organization_id = public.current_org())) WITH CHECK ((organization_id = public.current_org()));

--
-- Name: campaign_labels tenant_isolation; Type: POLICY; Schema: public; Owner: -
--

CREATE POLICY tenant_isolation ON public.campaign_labels USING ((organization_id = public.current_org())) WITH CHECK ((organization_id = public.current_org()));

--
-- Name: campaign_leads tenant_isolation; Type: POLICY; Schema: public; Owner: -
--

CREATE POLICY tenant_isolation ON public.campaign_leads USING ((organization_id = public.current_org())) WITH CHECK ((organization_id = public.current_org()));

--
-- Name: campaign_logs tenant_isolation; Type: POLICY; Schema: public; Owner: -
--

CREATE POLICY tenant_isolation ON public.campaign_logs USING ((organization_id = public.current_org())) WITH CHECK ((organization_id = public.current_org()));

--
-- Name: campaign_mailboxes tenant_isolation; Type: POLICY; Schema: public; Owner: -
--

CREATE POLICY tenant_isolation ON public.campaign_mailboxes USING ((organization_id = public.current_org())) WITH CHECK ((organization_id = public.current_org()));

--
-- Name: campaign_preflight_reports tenant_isolation; Type: POLICY; Schema: public; Owner: -
--

CREATE POLICY tenant_isolation ON public.campaign_preflight_reports USING ((organization_id = public.current_org())) WITH CHECK ((organization_id = public.current_org()));

--
-- Name: campaign_segments tenant_isolation; Type: POLICY; Schema: public; Owner: -
--

CREATE POLICY tenant_isolation ON public.campaign_segments USING ((organization_id = public.current_org())) WITH CHECK ((organization_id = public.current_org()));

--
-- Name: campaign_send_days tenant_isolation; Type: POLICY; Schema: public; Owner: -
--

CREATE POLICY tenant_isolation ON public.campaign_send_days USING ((organization_id = public.current_org())) WITH CHECK ((organization_id = public.current_org()));

--
-- Name: campaign_step_runs tenant_isolation; Type: POLICY; Schema: public; Owner: -
--

CREATE POLICY tenant_isolation ON public.campaign_step_runs USING ((organization_id = public.current_org())) WITH CHECK ((organization_id = public.current_org()));

--
-- Name: campaign_steps tenant_isolation; Type: POLICY; Schema: public; Owner: -
--

CREATE POLICY tenant_isolation ON public.campaign_steps USING ((organization_id = public.current_org())) WITH CHECK ((organization_id = public.current_org()));

--
-- Name: campaign_test_runs tenant_isolation; Type: POLICY; Schema: public; Owner: -
--

CREATE POLICY tenant_isolation ON public.campaign_test_runs USING ((organization_id = public.current_org())) WITH CHECK ((organization_id = public.current_org()));

--
-- Name: campaign_variants tenant_isolation; Type: POLICY; Schema: public; Owner: -
--

CREATE POLICY tenant_isolation ON public.campaign_variants USING ((organization_id = public.current_org())) WITH CHECK ((organization_id = public.current_org()));

--
-- Name: campaigns tenant_isolation; Type: POLICY; Schema: public; Owner: -
--

CREATE POLICY tenant_isolation ON public.campaigns USING ((organization_id = public.current_org())) WITH CHECK ((organization_id = public.current_org()));

--
-- Name: contact_activities tenant_isolation; Type: POLICY; Schema: public; Owner: -
--

CREATE POLICY tenant_isolation ON public.contact_activities USING ((organization_id = public.current_org())) WITH CHECK ((organization_id = public.current_org()));

--
-- Name: contact_categories tenant_isolation; Type: POLICY; Schema: public; Owner: -
--

CREATE POLICY tenant_isolation ON public.contact_categories USING ((organization_id = public.current_org())) WITH CHECK ((organization_id = public.current_org()));

--
-- Name: contact_index_pending tenant_isolation; Type: POLICY; Schema: public; Owner: -
--

CREATE POLICY tenant_isolation ON public.contact_index_pending USING ((organization_id = public.current_org())) WITH CHECK ((organization_id = public.current_org()));

--
-- Name: contact_notes tenant_isolation; Type: POLICY; Schema: public; Owner: -
--

CREATE POLICY tenant_isolation ON public.contact_notes USING ((organization_id = public.current_org())) WITH CHECK ((organization_id = public.current_org()));

--
-- Name: contact_stats tenant_isolation; Type: POLICY; Schema: public; Owner: -
--

CREATE POLICY tenant_isolation ON public.contact_stats USING ((organization_id = public.current_org())) WITH CHECK ((organization_id = public.current_org()));

--
-- Name: contacts tenant_isolation; Type: POLICY; Schema: public; Owner: -
--

CREATE POLICY tenant_isolation ON public.contacts USING ((organization_id = ( SELECT public.current_org() AS current_org))) WITH CHECK ((organization_id = ( SELECT public.current_org() AS current_org)));

--
-- Name: custom_roles tenant_isolation; Type: POLICY; Schema: public; Owner: -
--

CREATE POLICY tenant_isolation ON public.custom_roles USING ((organization_id = public.current_org())) WITH CHECK ((organization_id = public.current_org()));

--
-- Name: deals tenant_isolation; Type: POLICY; Schema: public; Owner: -
--

CREATE POLICY tenant_isolation ON public.deals USING ((organization_id = public.current_org())) WITH CHECK ((organization_id = public.current_org()));

--
-- Name: deliverability_events tenant_isolation; Type: POLICY; Schema: public; Owner: -
--

CREATE POLICY tenant_isolation ON public.deliverability_events USING ((organization_id = public.current_org())) WITH CHECK ((organization_id = public.current_org()));

--
-- Name: event_consumer_acks tenant_isolation; Type: POLICY; Schema: public; Owner: -
--

CREATE POLICY tenant_isolation ON public.event_consumer_acks USING ((organization_id = public.current_org())) WITH CHECK ((organization_id = public.current_org()));

--
-- Name: event_outbox tenant_isolation; Type: POLICY; Schema: public; Owner: -
--

CREATE POLICY tenant_isolation ON public.event_outbox USING ((organization_id = public.current_org())) WITH CHECK ((organization_id = public.current_org()));

--
-- Name: held_leads tenant_isolation; Type: POLICY; Schema: public; Owner: -
--

CREATE POLICY tenant_isolation ON public.held_leads USING ((organization_id = public.current_org())) WITH CHECK ((organization_id = public.current_org()));

--
-- Name: idempotency_keys tenant_isolation; Type: POLICY; Schema: public; Owner: -
--

CREATE POLICY tenant_isolation ON public.idempotency_keys USING ((organization_id = public.current_org())) WITH CHECK ((organization_id = public.current_org()));

--
-- Name: inbox_messages tenant_isolation; Type: POLICY; Schema: public; Owner: -
--

CREATE POLICY tenant_isolation ON public.inbox_messages USING ((organization_id = public.current_org())) WITH CHECK ((organization_id = public.current_org()));

--
-- Name: inbox_snoozes tenant_isolation; Type: POLICY; Schema: public; Owner: -
--

CREATE POLICY tenant_isolation ON public.inbox_snoozes USING ((organization_id = public.current_org())) WITH CHECK ((organization_id = public.current_org()));

--
-- Name: inbox_thread_folders tenant_isolation; Type: POLICY; Schema: public; Owner: -
--

CREATE POLICY tenant_isolation ON public.inbox_thread_folders USING ((organization_id = public.current_org())) WITH CHECK ((organization_id = public.current_org()));

--
-- Name: inbox_thread_labels tenant_isolation; Type: POLICY; Schema: public; Owner: -
--

CREATE POLICY tenant_isolation ON public.inbox_thread_labels USING ((organization_id = public.current_org())) WITH CHECK ((organization_id = public.current_org()));

--
-- Name: inbox_threads tenant_isolation; Type: POLICY; Schema: public; Owner: -
--

CREATE POLICY tenant_isolation ON public.inbox_threads USING ((organization_id = public.current_org())) WITH CHECK ((organization_id = public.current_org()));

--
-- Name: labels tenant_isolation; Type: POLICY; Schema: public; Owner: -
--

CREATE POLICY tenant_isolation ON public.labels USING ((organization_id = public.current_org())) WITH CHECK ((organization_id = public.current_org()));

--
-- Name: mailbox_errors tenant_isolation; Type: POLICY; Schema: public; Owner: -
--

CREATE POLICY tenant_isolation ON public.mailbox_errors USING ((organization_id = public.current_org())) WITH CHECK ((organization_id = public.current_org()));

--
-- Name: mailbox_folders tenant_isolation; Type: POLICY; Schema: public; Owner: -
--

CREATE POLICY tenant_isolation ON public.mailbox_folders USING ((organization_id = public.current_org())) WITH CHECK ((organization_id = public.current_org()));

--
-- Name: mailbox_oauth_sessions tenant_isolation; Type: POLICY; Schema: public; Owner: -
--

CREATE POLICY tenant_isolation ON public.mailbox_oauth_sessions USING ((organization_id = public.current_org())) WITH CHECK ((organization_id = public.current_org()));

--
-- Name: mailbox_oauth_tokens tenant_isolation; Type: POLICY; Schema: public; Owner: -
--

CREATE POLICY tenant_isolation ON public.mailbox_oauth_tokens USING ((organization_id = public.current_org())) WITH CHECK ((organization_id = public.current_org()));

--
-- Name: mailbox_plans tenant_isolation; Type: POLICY; Schema: public; Owner: -
--

CREATE POLICY tenant_isolation ON public.mailbox_plans USING ((organization_id = public.current_org())) WITH CHECK ((organization_id = public.current_org()));

--
-- Name: mailbox_send_days tenant_isolation; Type: POLICY; Schema: public; Owner: -
--

CREATE POLICY tenant_isolation ON public.mailbox_send_days USING ((organization_id = public.current_org())) WITH CHECK ((organization_id = public.current_org()));

--
-- Name: mailbox_sync tenant_isolation; Type: POLICY; Schema: public; Owner: -
--

CREATE POLICY tenant_isolation ON public.mailbox_sync USING ((organization_id = public.current_org())) WITH CHECK ((organization_id = public.current_org()));

--
-- Name: mailbox_warmup_appeals tenant_isolation; Type: POLICY; Schema: public; Owner: -
--

CREATE POLICY tenant_isolation ON public.mailbox_warmup_appeals USING ((organization_id = public.current_org())) WITH CHECK ((organization_id = public.current_org()));

--
-- Name: mailboxes tenant_isolation; Type: POLICY; Schema: public; Owner: -
--

CREATE POLICY tenant_isolation ON public.mailboxes USING ((organization_id = public.current_org())) WITH CHECK ((organization_id = public.current_org()));

--
-- Name: memberships tenant_isolation; Type: POLICY; Schema: public; Owner: -
--

CREATE POLICY tenant_isolation ON public.memberships USING ((organization_id = public.current_org())) WITH CHECK ((organization_id = public.current_org()));

--
-- Name: oauth_clients tenant_isolation; Type: POLICY; Schema: public; Owner: -
--

CREATE POLICY tenant_isolation ON public.oauth_clients USING ((organization_id = public.current_org())) WITH CHECK ((organization_id = public.current_org()));

--
-- Name: oauth_grants tenant_isolation; Type: POLICY; Schema: public; Owner: -
--

CREATE POLICY tenant_isolation ON public.oauth_grants USING ((organization_id = public.current_org())) WITH CHECK ((organization_id = public.current_org()));

--
-- Name: oauth_tokens tenant_isolation; Type: POLICY; Schema: public; Owner: -
--

CREATE POLICY tenant_isolation ON public.oauth_tokens USING ((organization_id = public.current_org())) WITH CHECK ((organization_id = public.current_org()));

--
-- Name: organization_invitations tenant_isolation; Type: POLICY; Schema: public; Owner: -
--

CREATE POLICY tenant_isolation ON public.organization_invitations USING ((organization_id = public.current_org())) WITH CHECK ((organization_id = public.current_org()));

--
-- Name: organizations tenant_isolation; Type: POLICY; Schema: public; Owner: -
--

CREATE POLICY tenant_isolation ON public.organizations USING ((id = public.current_org())) WITH CHECK ((id = public.current_org()));

--
-- Name: product_events tenant_isolation; Type: POLICY; Schema: public; Owner: -
--

CREATE POLICY tenant_isolation ON public.product_events USING ((organization_id = public.current_org())) WITH CHECK ((organization_id = public.current_org()));

--
-- Name: run_events tenant_isolation; Type: POLICY; Schema: public; Owner: -
--

CREATE POLICY tenant_isolation ON public.run_events USING ((organization_id = public.current_org())) WITH CHECK ((organization_id = public.current_org()));

--
-- Name: runs tenant_isolation; Type: POLICY; Schema: public; Owner: -
--

CREATE POLICY tenant_isolation ON public.runs USING ((organization_id = public.current_org())) WITH CHECK ((organization_id = public.current_org()));

--
-- Name: segment_pins tenant_isolation; Type: POLICY; Schema: public; Owner: -
--

CREATE POLICY tenant_isolation ON public.segment_pins USING ((organization_id = public.current_org())) WITH CHECK ((organization_id = public.current_org()));

--
-- Name: segments tenant_isolation; Type: POLICY; Schema: public; Owner: -
--

CREATE POLICY tenant_isolation ON public.segments USING ((organization_id = public.current_org())) WITH CHECK ((organization_id = public.current_org()));

--
-- Name: send_tasks tenant_isolation; Type: POLICY; Schema: public; Owner: -
--

CREATE POLICY tenant_isolation ON public.send_tasks USING ((organization_id = public.current_org())) WITH CHECK ((organization_id = public.current_org()));

--
-- Name: suppressions tenant_isolation; Type: POLICY; Schema: public; Owner: -
--

CREATE POLICY tenant_isolation ON public.suppressions USING ((organization_id = public.current_org())) WITH CHECK ((organization_id = public.current_org()));

--
-- Name: team_members tenant_isolation; Type: POLICY; Schema: public; Owner: -
--

CREATE POLICY tenant_isolation ON public.team_members USING ((organization_id = public.current_org())) WITH CHECK ((organization_id = public.current_org()));

--
-- Name: teams tenant_isolation; Type: POLICY; Schema: public; Owner: -
--

CREATE POLICY tenant_isolation ON public.teams USING ((organization_id = public.current_org())) WITH CHECK ((organization_id = public.current_org()));

--
-- Name: tracking_events tenant_isolation; Type: POLICY; Schema: public; Owner: -
--

CREATE POLICY tenant_isolation ON public.tracking_events USING ((organization_id = public.current_org())) WITH CHECK ((organization_id = public.current_org()));

--
-- Name: verification_run_contacts tenant_isolation; Type: POLICY; Schema: public; Owner: -
--

CREATE POLICY tenant_isolation ON public.verification_run_contacts USING ((organization_id = public.current_org())) WITH CHECK ((organization_id = public.current_org()));

--
-- Name: verification_runs tenant_isolation; Type: POLICY; Schema: public; Owner: -
--

CREATE POLICY tenant_isolation ON public.verification_runs USING ((organization_id = public.current_org())) WITH CHECK ((organization_id = public.current_org()));

--
-- Name: webhook_deliveries tenant_isolation; Type: POLICY; Schema: public; Owner: -
--

CREATE POLICY tenant_isolation ON public.webhook_deliveries USING ((organization_id = public.current_org())) WITH CHECK ((organization_id = public.current_org()));

--
-- Name: webhook_endpoints tenant_isolation; Type: POLICY; Schema: public; Owner: -
--

CREATE POLICY tenant_isolation ON public.webhook_endpoints USING ((organization_id = public.current_org())) WITH CHECK ((organization_id = public.current_org()));

--
-- Name: webhook_rate_windows tenant_isolation; Type: POLICY; Schema: public; Owner: -
--

CREATE POLICY tenant_isolation ON public.webhook_rate_windows USING ((organization_id = public.current_org())) WITH CHECK ((organization_id = public.current_org()));

--
-- Name: webhook_throttle_drops tenant_isolation; Type: POLICY; Schema: public; Owner: -
--

CREATE POLICY tenant_isolation ON public.webhook_throttle_drops USING ((organization_id = public.current_org())) WITH CHECK ((organization_id = public.current_org()));

--
-- Name: tracking_events; Type: ROW SECURITY; Schema: public; Owner: -
--

ALTER TABLE public.tracking_events ENABLE ROW LEVEL SECURITY;

--
-- Name: verification_run_contacts; Type: ROW SECURITY; Schema: public; Owner: -
--

ALTER TABLE public.verification_run_contacts ENABLE ROW LEVEL SECURITY;

--
-- Name: verification_runs; Type: ROW SECURITY; Schema: public; Owner: -
--

ALTER TABLE public.verification_runs ENABLE ROW LEVEL SECURITY;

--
-- Name: webhook_deliveries; Type: ROW SECURITY; Schema: public; Owner: -
--

ALTER TABLE public.webhook_deliveries ENABLE ROW LEVEL SECURITY;

--
-- Name: webhook_endpoints; Type: ROW SECURITY; Schema: public; Owner: -
--

ALTER TABLE public.webhook_endpoints ENABLE ROW LEVEL SECURITY;

--
-- Name: webhook_rate_windows; Type: ROW SECURITY; Schema: public; Owner: -
--

ALTER TABLE public.webhook_rate_windows ENABLE ROW LEVEL SECURITY;

--
-- Name: webhook_throttle_drops; Type: ROW SECURITY; Schema: public; Owner: -
--

ALTER TABLE public.webhook_throttle_drops ENABLE ROW LEVEL SECURITY;

--
-- PostgreSQL database dump complete
--

