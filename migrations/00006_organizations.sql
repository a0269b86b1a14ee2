-- +goose Up
-- Organization governance: custom roles, invitations by email and teams. A membership's role is now one of the
-- built-in roles or the id of a custom role of the same organization, whose permission set applies at once to
-- every member holding it.

CREATE TABLE custom_roles (
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  id uuid NOT NULL,
  name text NOT NULL CHECK (length(name) BETWEEN 1 AND 255),
  description text NOT NULL DEFAULT '' CHECK (length(description) <= 1000),
  -- An auth.OrgPermission bitmask: the values are stored, so the bits are never renumbered.
  permissions bigint NOT NULL CHECK (permissions >= 0),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (organization_id, id)
);
CREATE UNIQUE INDEX custom_roles_name ON custom_roles (organization_id, lower(name));

-- role holds owner, admin, member or a custom role id; custom_role_id is derived from it so the custom role
-- cannot be deleted while a member holds it, whatever path the delete takes.
ALTER TABLE memberships DROP CONSTRAINT memberships_role_check;
ALTER TABLE memberships
  ADD CONSTRAINT memberships_role_check CHECK (
    role IN ('owner', 'admin', 'member') OR role ~ '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'),
  ADD COLUMN custom_role_id uuid GENERATED ALWAYS AS (
    CASE WHEN role IN ('owner', 'admin', 'member') THEN NULL ELSE role::uuid END) STORED,
  ADD CONSTRAINT memberships_custom_role_fkey FOREIGN KEY (organization_id, custom_role_id)
    REFERENCES custom_roles (organization_id, id);
CREATE INDEX memberships_custom_role ON memberships (organization_id, custom_role_id) WHERE custom_role_id IS NOT NULL;

-- Invitations by email. Only a hash of the emailed token is stored. state is what happened to the invitation;
-- a pending one past expires_at reads as expired, and is marked so when the same address is invited again, so
-- at most one invitation per address is pending at a time.
CREATE TABLE organization_invitations (
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  id uuid NOT NULL,
  email text NOT NULL CHECK (email = lower(email) AND length(email) BETWEEN 3 AND 320),
  role text NOT NULL CHECK (role IN ('owner', 'admin', 'member')),
  custom_role_id uuid,
  token_hash bytea NOT NULL,
  state text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'accepted', 'revoked', 'expired')),
  -- The user who sent it; kept as history, so not a reference that would vanish with the account.
  invited_by uuid NOT NULL,
  expires_at timestamptz NOT NULL,
  accepted_at timestamptz,
  revoked_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (organization_id, id),
  CHECK (custom_role_id IS NULL OR role = 'member'),
  -- Deleting a custom role is refused while a pending invitation carries it; settled ones just lose it.
  FOREIGN KEY (organization_id, custom_role_id) REFERENCES custom_roles (organization_id, id) ON DELETE SET NULL (custom_role_id)
);
CREATE UNIQUE INDEX organization_invitations_token_hash ON organization_invitations (token_hash);
CREATE UNIQUE INDEX organization_invitations_pending ON organization_invitations (organization_id, email) WHERE state = 'pending';
CREATE INDEX organization_invitations_created ON organization_invitations (organization_id, created_at DESC, id DESC);

-- Teams group members (CRM tasks are assigned to them). A team membership needs an organization membership and
-- ends with it.
CREATE TABLE teams (
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  id uuid NOT NULL,
  name text NOT NULL CHECK (length(name) BETWEEN 1 AND 255),
  color text NOT NULL CHECK (color ~ '^#[0-9a-f]{6}$'),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (organization_id, id)
);
CREATE UNIQUE INDEX teams_name ON teams (organization_id, lower(name));

CREATE TABLE team_members (
  organization_id uuid NOT NULL,
  team_id uuid NOT NULL,
  user_id uuid NOT NULL,
  added_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (organization_id, team_id, user_id),
  FOREIGN KEY (organization_id, team_id) REFERENCES teams (organization_id, id) ON DELETE CASCADE,
  FOREIGN KEY (organization_id, user_id) REFERENCES memberships (organization_id, user_id) ON DELETE CASCADE
);
CREATE INDEX team_members_user ON team_members (organization_id, user_id);

ALTER TABLE custom_roles ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON custom_roles USING (organization_id = current_org()) WITH CHECK (organization_id = current_org());
ALTER TABLE organization_invitations ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON organization_invitations USING (organization_id = current_org()) WITH CHECK (organization_id = current_org());
ALTER TABLE teams ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON teams USING (organization_id = current_org()) WITH CHECK (organization_id = current_org());
ALTER TABLE team_members ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON team_members USING (organization_id = current_org()) WITH CHECK (organization_id = current_org());

-- auth_member_role_permissions is the permission set of a user's custom role in one organization (0 when their
-- role is built in): authentication resolves it before the request is scoped to the organization.
CREATE FUNCTION auth_member_role_permissions(p_organization_id uuid, p_user_id uuid) RETURNS bigint
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, public
AS $$
  SELECT coalesce((SELECT r.permissions FROM memberships m
                   JOIN custom_roles r ON r.organization_id = m.organization_id AND r.id = m.custom_role_id
                   WHERE m.organization_id = p_organization_id AND m.user_id = p_user_id), 0)
$$;

-- invitation_by_token finds which organization's invitation an emailed token names: the invitee is not scoped
-- to that organization yet. Everything else about the invitation is read inside the organization.
CREATE FUNCTION invitation_by_token(p_token_hash bytea) RETURNS SETOF organization_invitations
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, public
AS $$ SELECT * FROM organization_invitations WHERE token_hash = p_token_hash $$;

REVOKE ALL ON FUNCTION auth_member_role_permissions(uuid, uuid) FROM PUBLIC;
REVOKE ALL ON FUNCTION invitation_by_token(bytea) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION auth_member_role_permissions(uuid, uuid) TO outflow_app;
GRANT EXECUTE ON FUNCTION invitation_by_token(bytea) TO outflow_app;
