-- name: HeartbeatBeat :exec
INSERT INTO system_heartbeats (name, beat_at) VALUES (@name::text, now())
ON CONFLICT (name) DO UPDATE SET beat_at = excluded.beat_at;

-- name: HeartbeatAge :one
-- Seconds since the named heartbeat last beat; no row when it never did.
SELECT extract(epoch FROM now() - beat_at)::float8 AS age_seconds FROM system_heartbeats WHERE name = @name::text;

-- name: MigrationVersion :one
SELECT coalesce(max(version_id), 0)::bigint AS version FROM schema_migrations WHERE is_applied;

-- name: JobLeaderActive :one
-- A worker process holds River's leadership while it runs; an unexpired row means one is alive.
SELECT EXISTS (SELECT 1 FROM river_leader WHERE expires_at > now())::boolean AS active;

-- name: AdvisoryXactLock :exec
-- Serializes work on one logical key until the transaction ends.
SELECT pg_advisory_xact_lock(@lock_key::bigint);
