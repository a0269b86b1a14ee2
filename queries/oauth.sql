-- name: OAuthClientLookup :one
-- The authorization and token endpoints know no organization yet (and self-registered clients have none):
-- the narrow SECURITY DEFINER function is the only cross-organization read of oauth_clients.
SELECT * FROM oauth_client_lookup(@client_id::text);

-- name: OAuthClientRegister :exec
-- Dynamic registration: a client of no organization, which the self_registration policy admits. No
-- RETURNING: the application role cannot read the row back.
INSERT INTO oauth_clients (id, organization_id, client_id, client_type, token_endpoint_auth_method, secret_hash,
                           name, logo, website, policy_uri, tos_uri, contacts, software_id, software_version,
                           redirect_uris, grant_types, scopes, created_at, updated_at)
VALUES (@id::uuid, NULL, @client_id::text, @client_type::text, @token_endpoint_auth_method::text,
        sqlc.narg(secret_hash)::bytea, @name::text, @logo::text, @website::text, @policy_uri::text, @tos_uri::text,
        @contacts::text[], @software_id::text, @software_version::text, @redirect_uris::text[],
        @grant_types::text[], @scopes::bigint, @created_at::timestamptz, @created_at::timestamptz);

-- name: OAuthApplicationCreate :one
INSERT INTO oauth_clients (id, organization_id, client_id, client_type, token_endpoint_auth_method, secret_hash,
                           name, description, logo, website, redirect_uris, grant_types, scopes,
                           allowed_webhook_domains, webhook_url, webhook_events, webhook_secret_sealed)
VALUES (@id::uuid, @organization_id::uuid, @client_id::text, @client_type::text, @token_endpoint_auth_method::text,
        sqlc.narg(secret_hash)::bytea, @name::text, @description::text, @logo::text, @website::text,
        @redirect_uris::text[], @grant_types::text[], @scopes::bigint, @allowed_webhook_domains::text[],
        @webhook_url::text, @webhook_events::text[], @webhook_secret_sealed::bytea)
RETURNING *;

-- name: OAuthApplicationGet :one
SELECT * FROM oauth_clients WHERE organization_id = @organization_id::uuid AND id = @id::uuid;

-- name: OAuthApplicationGetForUpdate :one
SELECT * FROM oauth_clients WHERE organization_id = @organization_id::uuid AND id = @id::uuid FOR UPDATE;

-- name: OAuthApplicationList :many
-- Newest first; the (created_at, id) keyset walks oauth_clients_newest without an OFFSET.
SELECT * FROM oauth_clients
WHERE organization_id = @organization_id::uuid
  AND (sqlc.narg(before_created_at)::timestamptz IS NULL
       OR (created_at, id) < (sqlc.narg(before_created_at)::timestamptz, sqlc.narg(before_id)::uuid))
ORDER BY created_at DESC, id DESC
LIMIT @row_limit::int;

-- name: OAuthApplicationUpdate :one
-- The handler merges the request into the current row and validates the result, so every field is written.
UPDATE oauth_clients SET
  name = @name::text,
  description = @description::text,
  logo = @logo::text,
  website = @website::text,
  redirect_uris = @redirect_uris::text[],
  scopes = @scopes::bigint,
  allowed_webhook_domains = @allowed_webhook_domains::text[],
  webhook_url = @webhook_url::text,
  webhook_events = @webhook_events::text[],
  updated_at = now()
WHERE organization_id = @organization_id::uuid AND id = @id::uuid
RETURNING *;

-- name: OAuthApplicationSetWebhookSecret :execrows
UPDATE oauth_clients SET webhook_secret_sealed = @webhook_secret_sealed::bytea, updated_at = now()
WHERE organization_id = @organization_id::uuid AND id = @id::uuid;

-- name: OAuthApplicationDelete :execrows
-- Grants of every organization (and their tokens) go with the app through the foreign keys' cascades.
DELETE FROM oauth_clients WHERE organization_id = @organization_id::uuid AND id = @id::uuid;

-- name: OAuthGrantCreate :one
INSERT INTO oauth_grants (organization_id, id, client_id, user_id, scopes)
VALUES (@organization_id::uuid, @id::uuid, @client_id::uuid, @user_id::uuid, @scopes::bigint)
RETURNING *;

-- name: OAuthGrantRevoke :one
-- Revoking twice changes nothing; only the first revocation returns the grant (the caller audits it once).
UPDATE oauth_grants SET revoked_at = now(), revoked_reason = @reason::text
WHERE organization_id = @organization_id::uuid AND id = @id::uuid AND revoked_at IS NULL
RETURNING *;

-- name: OAuthGrantRevokeLive :many
-- Approving an app again replaces its live grant in the organization.
UPDATE oauth_grants SET revoked_at = now(), revoked_reason = @reason::text
WHERE organization_id = @organization_id::uuid AND client_id = @client_id::uuid AND revoked_at IS NULL
RETURNING *;

-- name: OAuthGrantOrganization :one
-- fosite revokes and rotates by request id (the grant id) alone: the narrow SECURITY DEFINER function names the
-- grant's organization, and the change itself is made inside it.
SELECT o.v::uuid AS organization_id FROM oauth_grant_organization(@grant_id::uuid) AS o(v) WHERE o.v IS NOT NULL;

-- name: OAuthTokenCreate :exec
INSERT INTO oauth_tokens (organization_id, signature, kind, grant_id, scopes, request, expires_at)
VALUES (@organization_id::uuid, @signature::text, @kind::text, @grant_id::uuid, @scopes::bigint,
        @request::jsonb, @expires_at::timestamptz);

-- name: OAuthTokenLookup :one
-- The token endpoint knows no organization until it finds the row: the narrow SECURITY DEFINER function
-- answers by kind and signature alone.
SELECT * FROM oauth_token_lookup(@kind::text, @signature::text);

-- name: OAuthTokenDeactivate :execrows
-- Redeems a code or rotates a refresh token; a second concurrent attempt changes no row.
UPDATE oauth_tokens SET active = false
WHERE organization_id = @organization_id::uuid AND signature = @signature::text AND kind = @kind::text AND active;

-- name: OAuthTokenDelete :exec
DELETE FROM oauth_tokens
WHERE organization_id = @organization_id::uuid AND signature = @signature::text AND kind = @kind::text;

-- name: OAuthTokenDeleteByGrant :exec
-- kind NULL deletes every code, token and PKCE session of the grant.
DELETE FROM oauth_tokens
WHERE organization_id = @organization_id::uuid AND grant_id = @grant_id::uuid
  AND (sqlc.narg(kind)::text IS NULL OR kind = sqlc.narg(kind)::text);

-- name: OAuthAccessTokenVerify :one
-- Authentication does not know the organization yet: one SECURITY DEFINER read resolves the token, its live
-- grant, the app and the approving member.
SELECT v.organization_id::uuid AS organization_id, v.grant_id::uuid AS grant_id, v.user_id::uuid AS user_id,
       v.client_id::text AS client_id, v.scopes::bigint AS scopes, v.expires_at::timestamptz AS expires_at
FROM auth_oauth_access_token(@signature::text) AS v;

-- name: OAuthTokenSweep :one
SELECT oauth_token_sweep(@before::timestamptz)::bigint AS deleted;
