-- name: VerificationCounts :one
-- The org-wide verdict counts the contact_stats triggers keep; no row yet means no contacts.
SELECT valid, risky, invalid, unknown, pending FROM contact_stats WHERE organization_id = @organization_id::uuid;

-- name: VerificationRunCreate :one
INSERT INTO verification_runs (organization_id, id, provider)
VALUES (@organization_id::uuid, @id::uuid, @provider::text)
RETURNING *;

-- name: VerificationRunContactsAdd :execrows
-- Puts the selected contacts into a run, leaving out ids that are not the organization's contacts and
-- contacts still waiting in another queued or running run (that run checks them; checking twice at once
-- would only race). The anti-join walks the few active runs' primary keys.
INSERT INTO verification_run_contacts (organization_id, run_id, contact_id)
SELECT @organization_id::uuid, @run_id::uuid, c.id
FROM contacts c
WHERE c.organization_id = @organization_id::uuid AND c.id = ANY(@contact_ids::uuid[])
  AND NOT EXISTS (
    SELECT 1 FROM verification_runs r
    JOIN verification_run_contacts rc ON rc.organization_id = r.organization_id AND rc.run_id = r.id
    WHERE r.organization_id = @organization_id::uuid AND r.status IN ('queued', 'running')
      AND rc.contact_id = c.id AND NOT rc.done);

-- name: VerificationRunSetTotal :one
UPDATE verification_runs SET total = @total::int
WHERE organization_id = @organization_id::uuid AND id = @id::uuid
RETURNING *;

-- name: VerificationRunGet :one
SELECT * FROM verification_runs WHERE organization_id = @organization_id::uuid AND id = @id::uuid;

-- name: VerificationRunRecent :many
-- Queued and running runs first, then the newest finished ones; each half is an index walk of
-- verification_runs_newest, so the organization's history length does not matter.
SELECT r.* FROM (
  (SELECT * FROM verification_runs a
   WHERE a.organization_id = @organization_id::uuid AND a.status IN ('queued', 'running')
   ORDER BY a.created_at DESC, a.id DESC LIMIT @row_limit::int)
  UNION ALL
  (SELECT * FROM verification_runs f
   WHERE f.organization_id = @organization_id::uuid AND f.status IN ('completed', 'failed')
   ORDER BY f.created_at DESC, f.id DESC LIMIT @row_limit::int)
) r
ORDER BY r.status IN ('queued', 'running') DESC, r.created_at DESC, r.id DESC
LIMIT @row_limit::int;

-- name: VerificationRunStart :one
-- The worker takes the run up; a finished (or deleted) run returns no row and the job ends.
UPDATE verification_runs SET status = 'running', started_at = coalesce(started_at, now())
WHERE organization_id = @organization_id::uuid AND id = @id::uuid AND status IN ('queued', 'running')
RETURNING id;

-- name: VerificationRunTodo :many
-- The next contacts of a run still to check, with what decides whether their verdict may be replaced.
SELECT c.id, c.email, c.verification_source
FROM verification_run_contacts rc
JOIN contacts c ON c.organization_id = rc.organization_id AND c.id = rc.contact_id
WHERE rc.organization_id = @organization_id::uuid AND rc.run_id = @run_id::uuid AND NOT rc.done
ORDER BY rc.contact_id
LIMIT @row_limit::int;

-- name: VerificationVerdictsApply :exec
-- Writes the built-in verifier's verdicts. A verdict that was imported or came from an external provider is
-- never replaced, and neither is a contact whose address changed since it was checked (the verdict was about
-- the old address).
UPDATE contacts c SET
  verification_status = v.status, verification_sub_status = v.sub_status, verification_source = @source::text,
  verification_provider = @provider::text, verification_reason = v.reason, verification_checked_at = now(),
  verification_confidence = v.confidence, is_catch_all = v.catch_all, updated_at = now()
FROM (SELECT unnest(@ids::uuid[]) AS id, unnest(@emails::text[]) AS email, unnest(@statuses::text[]) AS status,
             unnest(@sub_statuses::text[]) AS sub_status, unnest(@reasons::text[]) AS reason,
             unnest(@confidences::smallint[]) AS confidence, unnest(@catch_alls::boolean[]) AS catch_all) AS v
WHERE c.organization_id = @organization_id::uuid AND c.id = v.id AND c.email = v.email
  AND c.verification_source NOT IN ('imported', 'provider');

-- name: VerificationRunContactsDone :many
-- Marks checked contacts done; only the ones not done before are returned, so a batch is counted once.
UPDATE verification_run_contacts SET done = true
WHERE organization_id = @organization_id::uuid AND run_id = @run_id::uuid AND contact_id = ANY(@contact_ids::uuid[])
  AND NOT done
RETURNING contact_id;

-- name: VerificationRunTally :exec
-- Adds a batch to the run's counts by the verdict each contact carries now: the new one, or the imported or
-- provider verdict that was kept.
UPDATE verification_runs r SET
  processed = r.processed + t.n, valid = r.valid + t.valid, risky = r.risky + t.risky,
  invalid = r.invalid + t.invalid, unknown = r.unknown + t.unknown
FROM (SELECT count(*)::int AS n,
             count(*) FILTER (WHERE c.verification_status = 'valid')::int AS valid,
             count(*) FILTER (WHERE c.verification_status = 'risky')::int AS risky,
             count(*) FILTER (WHERE c.verification_status = 'invalid')::int AS invalid,
             count(*) FILTER (WHERE c.verification_status = 'unknown')::int AS unknown
      FROM contacts c WHERE c.organization_id = @organization_id::uuid AND c.id = ANY(@contact_ids::uuid[])) AS t
WHERE r.organization_id = @organization_id::uuid AND r.id = @run_id::uuid;

-- name: VerificationRunFinish :one
-- Ends a run. A completed run's total becomes what it processed: contacts deleted while it ran leave it.
-- No row when the run had already ended (or was deleted): its end was recorded once.
UPDATE verification_runs SET status = @status::text, error = @error::text, finished_at = now(),
  total = CASE WHEN @status::text = 'completed' THEN processed ELSE total END
WHERE organization_id = @organization_id::uuid AND id = @id::uuid AND status IN ('queued', 'running')
RETURNING *;

-- name: VerificationUnchecked :many
-- Which of the contacts still have no verdict at all (never checked, none imported or from a provider): what
-- a check asked for before a campaign's first send has left to do.
SELECT id, email FROM contacts
WHERE organization_id = @organization_id::uuid AND id = ANY(@ids::uuid[]) AND verification_source = ''
  AND verification_checked_at IS NULL
ORDER BY id;
