-- +goose Up
-- Webhook endpoints, the OAuth-app side. An app's managed endpoint (oauth_client_id set) lives in the
-- organization that authorized the app and is created and removed with the app's grant there. Its URL follows
-- the app's webhook_url, and it signs with the app's secret, shared by every install: that secret lives in
-- oauth_clients.webhook_secret_sealed (sealed under the app's id, read per organization through webhook_app),
-- so a managed endpoint's own secret_sealed is empty and its secret_generation unused. A dashboard endpoint's
-- secret_sealed and previous_secret_sealed hold its whsec_ secrets (delivery.SealSecret).

-- oauth_app_webhook_endpoints lists an app's managed endpoints in every organization that authorized it, for
-- the app's developer: it answers only for an app that belongs to the organization the transaction is scoped
-- to. Oldest install first.
CREATE FUNCTION oauth_app_webhook_endpoints(p_client_id uuid) RETURNS SETOF webhook_endpoints
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, public
AS $$
  SELECT e.*
  FROM oauth_clients c
  JOIN webhook_endpoints e ON e.oauth_client_id = c.id
  WHERE c.id = p_client_id AND c.organization_id = current_org()
  ORDER BY e.created_at, e.organization_id
$$;

-- oauth_app_webhook_endpoints_sync makes an app's managed endpoints follow its webhook_url after the developer
-- changed it, in every organization that authorized the app: an empty webhook_url (the app opted out) removes
-- them; otherwise every endpoint takes the new URL (p_rearm, a changed host, makes it unverified again) and an
-- organization with a live grant but no endpoint (the app had no webhook_url when it was authorized) gets one.
-- Only for an app of the organization the transaction is scoped to; returns the number of endpoints touched.
-- +goose StatementBegin
CREATE FUNCTION oauth_app_webhook_endpoints_sync(p_client_id uuid, p_rearm boolean) RETURNS bigint
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, public
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
-- +goose StatementEnd

REVOKE ALL ON FUNCTION oauth_app_webhook_endpoints(uuid) FROM PUBLIC;
REVOKE ALL ON FUNCTION oauth_app_webhook_endpoints_sync(uuid, boolean) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION oauth_app_webhook_endpoints(uuid) TO outflow_app;
GRANT EXECUTE ON FUNCTION oauth_app_webhook_endpoints_sync(uuid, boolean) TO outflow_app;
