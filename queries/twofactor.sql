-- name: TwoFactorGetForUpdate :one
-- Locks the row so two codes checked at once cannot both redeem the same time step.
SELECT * FROM user_two_factor WHERE user_id = @user_id::uuid FOR UPDATE;

-- name: TwoFactorStartEnrollment :execrows
-- A new secret replaces a pending enrolment; an enabled one is left alone (0 rows).
INSERT INTO user_two_factor (user_id, secret_sealed) VALUES (@user_id::uuid, @secret_sealed::bytea)
ON CONFLICT (user_id) DO UPDATE SET secret_sealed = excluded.secret_sealed, last_used_step = 0, created_at = now()
WHERE user_two_factor.enabled_at IS NULL;

-- name: TwoFactorEnable :exec
UPDATE user_two_factor SET enabled_at = now(), last_used_step = @step::bigint WHERE user_id = @user_id::uuid;

-- name: TwoFactorUseStep :exec
UPDATE user_two_factor SET last_used_step = @step::bigint WHERE user_id = @user_id::uuid;

-- name: TwoFactorDelete :exec
DELETE FROM user_two_factor WHERE user_id = @user_id::uuid;

-- name: RecoveryCodesReplace :exec
-- Drops every earlier code of the user and stores the new hashes.
WITH gone AS (DELETE FROM user_recovery_codes WHERE user_id = @user_id::uuid)
INSERT INTO user_recovery_codes (user_id, code_hash) SELECT @user_id::uuid, unnest(@code_hashes::bytea[]);

-- name: RecoveryCodeUse :execrows
-- Spends one unused code whose hash is any of the candidates (one per deployment key); 0 rows: no such code.
UPDATE user_recovery_codes SET used_at = now()
WHERE user_id = @user_id::uuid AND code_hash = ANY(@code_hashes::bytea[]) AND used_at IS NULL;

-- name: RecoveryCodesDelete :exec
DELETE FROM user_recovery_codes WHERE user_id = @user_id::uuid;

-- name: WebAuthnUserEnsure :one
-- Returns the user's handle under the relying party, creating it on first use (the no-op update makes an
-- existing row come back through RETURNING).
INSERT INTO webauthn_users (rp_id, user_id, handle) VALUES (@rp_id::text, @user_id::uuid, @handle::bytea)
ON CONFLICT (rp_id, user_id) DO UPDATE SET handle = webauthn_users.handle
RETURNING handle;

-- name: WebAuthnUserByHandle :one
SELECT * FROM webauthn_users WHERE rp_id = @rp_id::text AND handle = @handle::bytea;

-- name: PasskeyCreate :one
INSERT INTO passkey_credentials (id, user_id, rp_id, credential_id, name, provider, aaguid, public_key_sealed,
  attestation_type, attestation_format, transports, attachment, sign_count, flags, attestation)
VALUES (@id::uuid, @user_id::uuid, @rp_id::text, @credential_id::bytea, @name::text, @provider::text,
  sqlc.narg(aaguid)::uuid, @public_key_sealed::bytea, @attestation_type::text, @attestation_format::text,
  @transports::text[], @attachment::text, @sign_count::bigint, @flags::smallint, @attestation::jsonb)
RETURNING *;

-- name: PasskeyListByUser :many
SELECT * FROM passkey_credentials WHERE user_id = @user_id::uuid AND rp_id = @rp_id::text ORDER BY created_at, id;

-- name: PasskeyListByUserForUpdate :many
-- Locks the user's passkeys while a sign-in checks and advances one of their counters.
SELECT * FROM passkey_credentials WHERE user_id = @user_id::uuid AND rp_id = @rp_id::text ORDER BY created_at, id
FOR UPDATE;

-- name: PasskeyRecordUse :exec
UPDATE passkey_credentials SET sign_count = @sign_count::bigint, clone_warning = @clone_warning::boolean,
  flags = @flags::smallint, last_used_at = CASE WHEN @used::boolean THEN now() ELSE last_used_at END
WHERE id = @id::uuid;

-- name: PasskeyRename :one
UPDATE passkey_credentials SET name = @name::text WHERE id = @id::uuid AND user_id = @user_id::uuid RETURNING *;

-- name: PasskeyDelete :execrows
DELETE FROM passkey_credentials WHERE id = @id::uuid AND user_id = @user_id::uuid;

-- name: PasskeyCeremonyLatest :one
-- The caller's newest pending registration ceremony, for a finish call that does not name one (ChallengeConsume
-- then claims it atomically).
SELECT * FROM auth_challenges
WHERE user_id = @user_id::uuid AND kind = 'passkey_register' AND consumed_at IS NULL AND expires_at > now()
ORDER BY created_at DESC, id DESC LIMIT 1;
