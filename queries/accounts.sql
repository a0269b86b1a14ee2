-- name: UserGetByEmail :one
SELECT * FROM users WHERE email = @email::text;

-- name: UserCreate :one
INSERT INTO users (id, email, password_hash, first_name, last_name)
VALUES (@id::uuid, @email::text, @password_hash::text, @first_name::text, @last_name::text)
RETURNING *;

-- name: UserMemberships :many
-- Cross-organization by design: goes through the narrow SECURITY DEFINER function, not the tables.
SELECT * FROM auth_user_memberships(@user_id::uuid);

-- name: OrganizationCreate :one
INSERT INTO organizations (id, name) VALUES (@organization_id::uuid, @name::text) RETURNING *;

-- name: OrganizationGet :one
SELECT * FROM organizations WHERE id = @organization_id::uuid;

-- name: MembershipCreate :exec
INSERT INTO memberships (organization_id, user_id, role)
VALUES (@organization_id::uuid, @user_id::uuid, @role::text);
