-- +goose Up
-- The cross-organization lookups that run on every authenticated request, rewritten in PL/pgSQL. A SQL
-- function with SECURITY DEFINER and SET search_path cannot be inlined, and Postgres plans its body again on
-- every call; PL/pgSQL keeps the plan for the connection's lifetime, which saves about half the lookup's time.
-- Definitions, privileges and results are unchanged.

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION auth_api_key_lookup(p_key_hash bytea) RETURNS SETOF api_keys
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, public
AS $$
BEGIN
  RETURN QUERY SELECT * FROM api_keys WHERE key_hash = p_key_hash;
END
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION auth_user_memberships(p_user_id uuid) RETURNS SETOF memberships
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, public
AS $$
BEGIN
  RETURN QUERY SELECT * FROM memberships WHERE user_id = p_user_id ORDER BY created_at, organization_id;
END
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION auth_member_role_permissions(p_organization_id uuid, p_user_id uuid) RETURNS bigint
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, public
AS $$
BEGIN
  RETURN coalesce((SELECT r.permissions FROM memberships m
                   JOIN custom_roles r ON r.organization_id = m.organization_id AND r.id = m.custom_role_id
                   WHERE m.organization_id = p_organization_id AND m.user_id = p_user_id), 0);
END
$$;
-- +goose StatementEnd
