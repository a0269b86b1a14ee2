-- name: NotificationPreferencesGet :one
SELECT categories, email_digest_minutes FROM notification_preferences WHERE user_id = @user_id::uuid;

-- name: NotificationPreferencesPut :exec
INSERT INTO notification_preferences (user_id, categories, email_digest_minutes)
VALUES (@user_id::uuid, @categories::jsonb, @email_digest_minutes::integer)
ON CONFLICT (user_id) DO UPDATE SET categories = excluded.categories,
  email_digest_minutes = excluded.email_digest_minutes, updated_at = now();

-- name: NotificationCreate :exec
INSERT INTO notifications (id, user_id, organization_id, category, title, body, link)
VALUES (@id::uuid, @user_id::uuid, sqlc.narg(organization_id)::uuid, @category::text, @title::text, @body::text,
        @link::text);

-- name: NotificationListByUser :many
-- Newest first; with only_unread the partial unread index serves it.
SELECT * FROM notifications
WHERE user_id = @user_id::uuid AND (NOT @only_unread::boolean OR read_at IS NULL)
ORDER BY created_at DESC, id DESC
LIMIT @row_limit::integer;

-- name: NotificationCountUnread :one
SELECT count(*)::integer AS unread FROM notifications WHERE user_id = @user_id::uuid AND read_at IS NULL;

-- name: NotificationMarkAllRead :exec
UPDATE notifications SET read_at = now() WHERE user_id = @user_id::uuid AND read_at IS NULL;

-- name: NotificationMarkRead :execrows
-- Matches an already read notification too (it stays as it was), so only an unknown id is "not found".
UPDATE notifications SET read_at = coalesce(read_at, now()) WHERE id = @id::uuid AND user_id = @user_id::uuid;

-- name: DeviceTokenUpsert :exec
-- A token is one device: registering it again, from any account, makes it the caller's.
INSERT INTO device_tokens (token, user_id, platform, environment)
VALUES (@token::text, @user_id::uuid, @platform::text, @environment::text)
ON CONFLICT (token) DO UPDATE SET user_id = excluded.user_id, platform = excluded.platform,
  environment = excluded.environment, updated_at = now();

-- name: DeviceTokenDelete :exec
DELETE FROM device_tokens WHERE token = @token::text AND user_id = @user_id::uuid;

-- name: DeviceTokenListByUser :many
SELECT * FROM device_tokens WHERE user_id = @user_id::uuid ORDER BY created_at, token;

-- name: NotificationWindowLock :one
-- Locks the user's channel window (creating it as "never sent") and returns when it last sent or will send.
INSERT INTO notification_channel_windows (user_id, channel, last_due_at)
VALUES (@user_id::uuid, @channel::text, 'epoch')
ON CONFLICT (user_id, channel) DO UPDATE SET last_due_at = notification_channel_windows.last_due_at
RETURNING last_due_at;

-- name: NotificationWindowSet :exec
UPDATE notification_channel_windows SET last_due_at = @last_due_at::timestamptz
WHERE user_id = @user_id::uuid AND channel = @channel::text;

-- name: NotificationDeliveryCreate :exec
INSERT INTO notification_deliveries (id, user_id, channel, organization_id, category, title, body, link, due_at)
VALUES (@id::uuid, @user_id::uuid, @channel::text, sqlc.narg(organization_id)::uuid, @category::text, @title::text,
        @body::text, @link::text, @due_at::timestamptz);

-- name: NotificationDeliveryListDue :many
-- Locks what is due; a concurrent run for the same user and channel skips these rows instead of sending twice.
SELECT * FROM notification_deliveries
WHERE user_id = @user_id::uuid AND channel = @channel::text AND due_at <= @until::timestamptz
ORDER BY created_at, id
FOR UPDATE SKIP LOCKED;

-- name: NotificationDeliveryDelete :exec
DELETE FROM notification_deliveries WHERE id = ANY(@ids::uuid[]);
