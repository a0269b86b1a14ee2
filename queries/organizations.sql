-- name: MemberCustomRolePermissions :one
-- Authentication runs before the request is scoped to an organization: goes through the narrow SECURITY
-- DEFINER function.
SELECT auth_member_role_permissions(@organization_id::uuid, @user_id::uuid)::bigint AS permissions;

-- name: MembershipPageForUser :many
-- Cross-organization by design (the organization switcher), through the SECURITY DEFINER function. Oldest
-- membership first.
SELECT * FROM auth_user_memberships(@user_id::uuid)
WHERE sqlc.narg(after_created_at)::timestamptz IS NULL
   OR (created_at, organization_id) > (sqlc.narg(after_created_at)::timestamptz, sqlc.narg(after_organization_id)::uuid)
ORDER BY created_at, organization_id
LIMIT @row_limit::int;

-- name: OrganizationForMember :one
SELECT o.id AS organization_id, o.name, m.role, m.custom_role_id, r.permissions AS custom_role_permissions,
       m.created_at AS joined_at,
       (SELECT count(*) FROM memberships c WHERE c.organization_id = o.id) AS member_count,
       o.created_at, o.updated_at, o.reply_undo_seconds
FROM organizations o
JOIN memberships m ON m.organization_id = o.id AND m.user_id = @user_id::uuid
LEFT JOIN custom_roles r ON r.organization_id = m.organization_id AND r.id = m.custom_role_id
WHERE o.id = @organization_id::uuid;

-- name: OrganizationRename :exec
UPDATE organizations SET name = @name::text, updated_at = now() WHERE id = @organization_id::uuid;

-- name: OrganizationSetReplyUndo :exec
UPDATE organizations SET reply_undo_seconds = @seconds::int, updated_at = now() WHERE id = @organization_id::uuid;

-- name: OrganizationReplyUndo :one
-- Seconds an instant reply or direct message waits before it leaves (the undo window).
SELECT reply_undo_seconds FROM organizations WHERE id = @organization_id::uuid;

-- name: OrganizationLockMembers :exec
-- Serializes membership changes of one organization, so two concurrent demotions cannot both see another
-- owner. NO KEY UPDATE leaves inserts that reference the organization unblocked.
SELECT id FROM organizations WHERE id = @organization_id::uuid FOR NO KEY UPDATE;

-- name: MemberList :many
SELECT m.user_id, m.role, m.custom_role_id, m.created_at AS joined_at, u.email, u.first_name, u.last_name, u.avatar_url
FROM memberships m JOIN users u ON u.id = m.user_id
WHERE m.organization_id = @organization_id::uuid
  AND (sqlc.narg(after_joined_at)::timestamptz IS NULL
       OR (m.created_at, m.user_id) > (sqlc.narg(after_joined_at)::timestamptz, sqlc.narg(after_user_id)::uuid))
ORDER BY m.created_at, m.user_id
LIMIT @row_limit::int;

-- name: MemberGet :one
SELECT m.user_id, m.role, m.custom_role_id, m.created_at AS joined_at, u.email, u.first_name, u.last_name, u.avatar_url
FROM memberships m JOIN users u ON u.id = m.user_id
WHERE m.organization_id = @organization_id::uuid AND m.user_id = @user_id::uuid;

-- name: MemberOwnerCount :one
SELECT count(*) FROM memberships WHERE organization_id = @organization_id::uuid AND role = 'owner';

-- name: MemberSetRole :exec
UPDATE memberships SET role = @role::text WHERE organization_id = @organization_id::uuid AND user_id = @user_id::uuid;

-- name: MemberDelete :execrows
DELETE FROM memberships WHERE organization_id = @organization_id::uuid AND user_id = @user_id::uuid;

-- name: MemberExistsByEmail :one
SELECT EXISTS (
  SELECT 1 FROM memberships m JOIN users u ON u.id = m.user_id
  WHERE m.organization_id = @organization_id::uuid AND u.email = @email::text
)::boolean AS member;

-- name: CustomRoleCreate :one
INSERT INTO custom_roles (organization_id, id, name, description, permissions)
VALUES (@organization_id::uuid, @id::uuid, @name::text, @description::text, @permissions::bigint)
RETURNING *;

-- name: CustomRoleGet :one
SELECT r.*, (SELECT count(*) FROM memberships m WHERE m.organization_id = r.organization_id AND m.custom_role_id = r.id) AS member_count
FROM custom_roles r
WHERE r.organization_id = @organization_id::uuid AND r.id = @id::uuid;

-- name: CustomRoleList :many
SELECT r.*, (SELECT count(*) FROM memberships m WHERE m.organization_id = r.organization_id AND m.custom_role_id = r.id) AS member_count
FROM custom_roles r
WHERE r.organization_id = @organization_id::uuid
  AND (sqlc.narg(after_name)::text IS NULL OR (r.name, r.id) > (sqlc.narg(after_name)::text, sqlc.narg(after_id)::uuid))
ORDER BY r.name, r.id
LIMIT @row_limit::int;

-- name: CustomRoleUpdate :execrows
UPDATE custom_roles SET
  name = coalesce(sqlc.narg(name)::text, name),
  description = coalesce(sqlc.narg(description)::text, description),
  permissions = coalesce(sqlc.narg(permissions)::bigint, permissions),
  updated_at = now()
WHERE organization_id = @organization_id::uuid AND id = @id::uuid;

-- name: CustomRoleHolders :one
-- What keeps a role from being deleted: members holding it and pending invitations carrying it.
SELECT
  (SELECT count(*) FROM memberships m WHERE m.organization_id = @organization_id::uuid AND m.custom_role_id = @id::uuid) AS members,
  (SELECT count(*) FROM organization_invitations i
   WHERE i.organization_id = @organization_id::uuid AND i.custom_role_id = @id::uuid AND i.state = 'pending') AS invitations;

-- name: CustomRoleDelete :execrows
DELETE FROM custom_roles WHERE organization_id = @organization_id::uuid AND id = @id::uuid;

-- name: InvitationExpireStale :exec
-- Settles a lapsed pending invitation of the address, so a new one may be pending.
UPDATE organization_invitations SET state = 'expired'
WHERE organization_id = @organization_id::uuid AND email = @email::text AND state = 'pending' AND expires_at <= now();

-- name: InvitationCreate :one
INSERT INTO organization_invitations (organization_id, id, email, role, custom_role_id, token_hash, invited_by, expires_at)
VALUES (@organization_id::uuid, @id::uuid, @email::text, @role::text, sqlc.narg(custom_role_id)::uuid, @token_hash::bytea,
        @invited_by::uuid, @expires_at::timestamptz)
RETURNING id, organization_id, email, role, custom_role_id, invited_by, expires_at, accepted_at, created_at, state::text AS status;

-- name: InvitationGetForUpdate :one
SELECT i.id, i.organization_id, i.email, i.role, i.custom_role_id, i.invited_by, i.expires_at, i.accepted_at, i.created_at,
       (CASE WHEN i.state = 'pending' AND i.expires_at <= now() THEN 'expired' ELSE i.state END)::text AS status
FROM organization_invitations i
WHERE i.organization_id = @organization_id::uuid AND i.id = @id::uuid
FOR UPDATE;

-- name: InvitationList :many
-- Newest first. The status filter matches what the list shows, lapsed pending invitations as expired.
SELECT * FROM (
  SELECT i.id, i.organization_id, i.email, i.role, i.custom_role_id, i.invited_by, i.expires_at, i.accepted_at, i.created_at,
         (CASE WHEN i.state = 'pending' AND i.expires_at <= now() THEN 'expired' ELSE i.state END)::text AS status
  FROM organization_invitations i
  WHERE i.organization_id = @organization_id::uuid
    AND (sqlc.narg(before_created_at)::timestamptz IS NULL
         OR (i.created_at, i.id) < (sqlc.narg(before_created_at)::timestamptz, sqlc.narg(before_id)::uuid))
) v
WHERE sqlc.narg(status)::text IS NULL OR v.status = sqlc.narg(status)::text
ORDER BY v.created_at DESC, v.id DESC
LIMIT @row_limit::int;

-- name: InvitationRevoke :exec
UPDATE organization_invitations SET state = 'revoked', revoked_at = now()
WHERE organization_id = @organization_id::uuid AND id = @id::uuid;

-- name: InvitationAccept :exec
UPDATE organization_invitations SET state = 'accepted', accepted_at = now()
WHERE organization_id = @organization_id::uuid AND id = @id::uuid;

-- name: InvitationByToken :one
-- The invitee is not in the organization yet: the narrow SECURITY DEFINER function names which one it is.
SELECT organization_id, id FROM invitation_by_token(@token_hash::bytea);

-- name: TeamCreate :one
INSERT INTO teams (organization_id, id, name, color) VALUES (@organization_id::uuid, @id::uuid, @name::text, @color::text)
RETURNING *;

-- name: TeamGet :one
SELECT * FROM teams WHERE organization_id = @organization_id::uuid AND id = @id::uuid;

-- name: TeamList :many
SELECT * FROM teams WHERE organization_id = @organization_id::uuid ORDER BY name, id;

-- name: TeamUpdate :one
UPDATE teams SET name = coalesce(sqlc.narg(name)::text, name), color = coalesce(sqlc.narg(color)::text, color), updated_at = now()
WHERE organization_id = @organization_id::uuid AND id = @id::uuid
RETURNING *;

-- name: TeamDelete :execrows
DELETE FROM teams WHERE organization_id = @organization_id::uuid AND id = @id::uuid;

-- name: TeamMemberList :many
-- The members of one team, or of every team when team_id is null.
SELECT tm.team_id, tm.user_id, tm.added_at, u.email, u.first_name, u.last_name
FROM team_members tm JOIN users u ON u.id = tm.user_id
WHERE tm.organization_id = @organization_id::uuid AND (sqlc.narg(team_id)::uuid IS NULL OR tm.team_id = sqlc.narg(team_id)::uuid)
ORDER BY tm.added_at, tm.user_id;

-- name: TeamMemberAdd :exec
INSERT INTO team_members (organization_id, team_id, user_id) VALUES (@organization_id::uuid, @team_id::uuid, @user_id::uuid);

-- name: TeamMemberRemove :execrows
DELETE FROM team_members WHERE organization_id = @organization_id::uuid AND team_id = @team_id::uuid AND user_id = @user_id::uuid;

-- name: SessionRetireRefreshTokens :exec
-- Switching organization reissues the session's tokens: every refresh token given before counts as rotated,
-- so presenting one again is reuse.
UPDATE session_refresh_tokens SET rotated_at = now() WHERE session_id = @session_id::uuid AND rotated_at IS NULL;

-- name: OrganizationTrialEndsAt :one
-- When the organization's trial ends; NULL when it is not on a trial (a paid plan).
SELECT trial_ends_at FROM organizations WHERE id = @organization_id::uuid;
