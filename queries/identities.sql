-- name: IdentityGet :one
SELECT * FROM user_identities WHERE provider = @provider::text AND subject = @subject::text;

-- name: IdentityLink :exec
-- Links a provider identity to a user; a repeated sign-in of the same identity only refreshes its email
-- (kept when the provider sent none this time).
INSERT INTO user_identities (provider, subject, user_id, email)
VALUES (@provider::text, @subject::text, @user_id::uuid, @email::text)
ON CONFLICT (provider, subject) DO UPDATE SET email = coalesce(nullif(excluded.email, ''), user_identities.email), last_used_at = now();
