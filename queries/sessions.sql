-- name: SigningKeyList :many
-- Keys that may still verify a live token.
SELECT * FROM signing_keys WHERE retires_at > now() - interval '1 day' ORDER BY retires_at DESC;

-- name: SigningKeyCreate :exec
INSERT INTO signing_keys (kid, private_key_sealed, retires_at) VALUES (@kid::text, @private_key_sealed::bytea, @retires_at::timestamptz);

-- name: SessionCreate :one
INSERT INTO sessions (id, user_id, organization_id, auth_provider, browser, os, ip_address, refresh_expires_at,
                      location_city, location_region, location_country, country_code)
VALUES (@id::uuid, @user_id::uuid, sqlc.narg(organization_id)::uuid, @auth_provider::text, @browser::text, @os::text,
        @ip_address::text, @refresh_expires_at::timestamptz, @location_city::text, @location_region::text,
        @location_country::text, @country_code::text)
RETURNING *;

-- name: SessionGet :one
SELECT * FROM sessions WHERE id = @id::uuid;

-- name: SessionTouch :exec
UPDATE sessions SET last_active_at = now() WHERE id = @id::uuid AND last_active_at < now() - interval '1 minute';

-- name: SessionListActiveByUser :many
SELECT * FROM sessions WHERE user_id = @user_id::uuid AND revoked_at IS NULL AND refresh_expires_at > now()
ORDER BY last_active_at DESC, id;

-- name: SessionRevoke :execrows
UPDATE sessions SET revoked_at = now(), revoked_reason = @reason::text
WHERE id = @id::uuid AND user_id = @user_id::uuid AND revoked_at IS NULL;

-- name: SessionRevokeAllForUser :execrows
UPDATE sessions SET revoked_at = now(), revoked_reason = @reason::text
WHERE user_id = @user_id::uuid AND revoked_at IS NULL AND id <> @except_id::uuid;

-- name: SessionRotate :exec
UPDATE sessions SET refresh_expires_at = @refresh_expires_at::timestamptz, last_active_at = now(),
  organization_id = coalesce(sqlc.narg(organization_id)::uuid, organization_id)
WHERE id = @id::uuid;

-- name: RefreshTokenCreate :exec
INSERT INTO session_refresh_tokens (token_hash, session_id) VALUES (@token_hash::bytea, @session_id::uuid);

-- name: RefreshTokenGetForUpdate :one
SELECT t.token_hash, t.session_id, t.rotated_at, s.user_id, s.organization_id, s.revoked_at, s.refresh_expires_at
FROM session_refresh_tokens t JOIN sessions s ON s.id = t.session_id
WHERE t.token_hash = @token_hash::bytea
FOR UPDATE OF t, s;

-- name: RefreshTokenMarkRotated :exec
UPDATE session_refresh_tokens SET rotated_at = now() WHERE token_hash = @token_hash::bytea;

-- name: ChallengeCreate :exec
INSERT INTO auth_challenges (id, kind, user_id, email, code_hash, payload, expires_at)
VALUES (@id::uuid, @kind::text, sqlc.narg(user_id)::uuid, @email::text, sqlc.narg(code_hash)::bytea, @payload::jsonb,
        @expires_at::timestamptz);

-- name: ChallengeGet :one
-- Read without a lock: a wrong code is counted from another transaction, which a row lock held here would
-- block; ChallengeConsume re-checks atomically.
SELECT * FROM auth_challenges WHERE id = @id::uuid;

-- name: ChallengeCountAttempt :exec
UPDATE auth_challenges SET attempts = attempts + 1 WHERE id = @id::uuid;

-- name: ChallengeConsume :execrows
-- Single use: only one transaction can consume a challenge, however many race for it.
UPDATE auth_challenges SET consumed_at = now()
WHERE id = @id::uuid AND consumed_at IS NULL AND expires_at > now() AND attempts < @max_attempts::int;

-- name: ChallengeSweep :execrows
DELETE FROM auth_challenges WHERE expires_at < now() - interval '1 day';

-- name: RateLimitHit :one
-- Counts one hit in the current fixed window and returns the window's total.
INSERT INTO rate_limit_counters (key, window_start, hits) VALUES (@key::text, @window_start::timestamptz, 1)
ON CONFLICT (key, window_start) DO UPDATE SET hits = rate_limit_counters.hits + 1
RETURNING hits;

-- name: RateLimitSweep :execrows
DELETE FROM rate_limit_counters WHERE window_start < now() - interval '1 day';

-- name: UserGetByID :one
SELECT * FROM users WHERE id = @id::uuid;

-- name: UserUpdatePassword :exec
UPDATE users SET password_hash = @password_hash::text, updated_at = now() WHERE id = @id::uuid;

-- name: UserSetLastOrganization :exec
UPDATE users SET last_organization_id = @organization_id::uuid, updated_at = now() WHERE id = @id::uuid;

-- name: TwoFactorEnabled :one
SELECT EXISTS (SELECT 1 FROM user_two_factor WHERE user_id = @user_id::uuid AND enabled_at IS NOT NULL)::boolean AS enabled;

-- name: UserMarkEmailVerified :exec
UPDATE users SET email_verified_at = coalesce(email_verified_at, now()), updated_at = now() WHERE id = @id::uuid;

-- name: OrganizationStartTrial :exec
UPDATE organizations SET trial_ends_at = @trial_ends_at::timestamptz WHERE id = @organization_id::uuid;
