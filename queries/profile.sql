-- name: ProfileUpdateName :execrows
UPDATE users SET first_name = @first_name::text, last_name = @last_name::text, updated_at = now()
WHERE id = @id::uuid;

-- name: ProfileCompleteOnboarding :execrows
-- The first completion is the one the app keeps: answering the survey again updates it but not the stamp.
UPDATE users SET first_name = @first_name::text, last_name = @last_name::text,
  referral_source = @referral_source::text, onboarding_role = @onboarding_role::text,
  onboarding_team_size = @onboarding_team_size::text,
  onboarding_completed_at = coalesce(onboarding_completed_at, now()), updated_at = now()
WHERE id = @id::uuid;

-- name: ProfileSetAvatar :one
-- Returns the previous avatar URL, read under the row lock, so its file can be deleted after the commit.
UPDATE users u SET avatar_url = @avatar_url::text, updated_at = now()
FROM (SELECT id, avatar_url FROM users WHERE id = @id::uuid FOR UPDATE) old
WHERE u.id = old.id
RETURNING old.avatar_url;
