-- name: ContactUpsert :one
-- Creates a contact or enriches the primary one of its address: sent non-empty fields replace, custom fields
-- merge key by key, a sent subscribed or verdict replaces. It answers the id and whether the row is new.
INSERT INTO contacts AS c (organization_id, id, email, first_name, last_name, company, phone,
  custom_fields, subscribed, source, verification_status, verification_sub_status, verification_source,
  verification_provider, verification_checked_at, created_at, updated_at)
VALUES (@organization_id::uuid, @id::uuid, @email, @first_name, @last_name, @company, @phone, @custom_fields::jsonb,
  coalesce(sqlc.narg(subscribed)::boolean, true), @source, coalesce(sqlc.narg(verification_status)::text, 'unknown'),
  coalesce(sqlc.narg(verification_sub_status)::text, ''),
  CASE WHEN sqlc.narg(verification_status)::text IS NULL THEN '' ELSE 'imported' END,
  coalesce(sqlc.narg(verification_provider)::text, ''),
  CASE WHEN sqlc.narg(verification_status)::text IS NULL THEN NULL ELSE now() END, @created_at::timestamptz, now())
ON CONFLICT (organization_id, email, duplicate_seq) DO UPDATE SET
  first_name = CASE WHEN excluded.first_name <> '' THEN excluded.first_name ELSE c.first_name END,
  last_name = CASE WHEN excluded.last_name <> '' THEN excluded.last_name ELSE c.last_name END,
  company = CASE WHEN excluded.company <> '' THEN excluded.company ELSE c.company END,
  phone = CASE WHEN excluded.phone <> '' THEN excluded.phone ELSE c.phone END,
  custom_fields = c.custom_fields || excluded.custom_fields,
  subscribed = coalesce(sqlc.narg(subscribed)::boolean, c.subscribed),
  verification_status = coalesce(sqlc.narg(verification_status)::text, c.verification_status),
  verification_sub_status = CASE WHEN sqlc.narg(verification_status)::text IS NULL THEN c.verification_sub_status ELSE excluded.verification_sub_status END,
  verification_source = CASE WHEN sqlc.narg(verification_status)::text IS NULL THEN c.verification_source ELSE 'imported' END,
  verification_provider = CASE WHEN sqlc.narg(verification_status)::text IS NULL THEN c.verification_provider ELSE excluded.verification_provider END,
  verification_reason = CASE WHEN sqlc.narg(verification_status)::text IS NULL THEN c.verification_reason ELSE '' END,
  verification_confidence = CASE WHEN sqlc.narg(verification_status)::text IS NULL THEN c.verification_confidence ELSE 0 END,
  verification_checked_at = CASE WHEN sqlc.narg(verification_status)::text IS NULL THEN c.verification_checked_at ELSE now() END,
  updated_at = now()
RETURNING c.id, (xmax = 0)::boolean AS inserted;

-- name: ContactIDByEmail :one
-- The contact of an address: the primary one when an import created duplicates.
SELECT id FROM contacts
WHERE organization_id = @organization_id::uuid AND email = @email::text
ORDER BY duplicate_seq LIMIT 1;

-- name: ContactIDsByEmails :many
-- The primary contacts of addresses (those an upsert by address enriches).
SELECT id FROM contacts
WHERE organization_id = @organization_id::uuid AND email = ANY(@emails::text[]) AND duplicate_seq = 0;

-- name: ContactUpdate :exec
-- Changes the sent fields of one contact (NULL keeps a field); custom fields lose the keys in drop_custom and
-- take put_custom. An address another contact has fails on the unique index.
UPDATE contacts SET
  email = coalesce(sqlc.narg(email)::text, email),
  first_name = coalesce(sqlc.narg(first_name)::text, first_name),
  last_name = coalesce(sqlc.narg(last_name)::text, last_name),
  company = coalesce(sqlc.narg(company)::text, company),
  phone = coalesce(sqlc.narg(phone)::text, phone),
  custom_fields = (custom_fields - @drop_custom::text[]) || @put_custom::jsonb,
  subscribed = coalesce(sqlc.narg(subscribed)::boolean, subscribed),
  updated_at = now()
WHERE organization_id = @organization_id::uuid AND id = @id::uuid;

-- name: ContactTouch :exec
-- Marks contacts changed when only their links changed.
UPDATE contacts SET updated_at = now()
WHERE organization_id = @organization_id::uuid AND id = ANY(@ids::uuid[]);

-- name: ContactDelete :one
-- Deletes one contact (links, notes and activities go with it by cascade) and answers its address.
DELETE FROM contacts WHERE organization_id = @organization_id::uuid AND id = @id::uuid RETURNING email;

-- name: ContactDeleteMany :execrows
DELETE FROM contacts WHERE organization_id = @organization_id::uuid AND id = ANY(@ids::uuid[]);

-- name: ContactSubscribeMany :exec
-- Sets the subscription of contacts whose subscription differs.
UPDATE contacts SET subscribed = @subscribed::boolean, updated_at = now()
WHERE organization_id = @organization_id::uuid AND id = ANY(@ids::uuid[]) AND subscribed <> @subscribed::boolean;

-- name: ContactFieldAdd :exec
-- Sets a custom field on the contacts that do not have it.
UPDATE contacts SET custom_fields = custom_fields || jsonb_build_object(@key::text, @value::text), updated_at = now()
WHERE organization_id = @organization_id::uuid AND id = ANY(@ids::uuid[]) AND NOT custom_fields ? @key::text;

-- name: ContactFieldEdit :exec
-- Sets a custom field on every one of the contacts.
UPDATE contacts SET custom_fields = custom_fields || jsonb_build_object(@key::text, @value::text), updated_at = now()
WHERE organization_id = @organization_id::uuid AND id = ANY(@ids::uuid[]);

-- name: ContactFieldDelete :exec
-- Removes a custom field from the contacts that have it.
UPDATE contacts SET custom_fields = custom_fields - @key::text, updated_at = now()
WHERE organization_id = @organization_id::uuid AND id = ANY(@ids::uuid[]) AND custom_fields ? @key::text;

-- name: ContactFieldRename :exec
-- Moves a custom field's value to the key value on the contacts that have it.
UPDATE contacts SET custom_fields = (custom_fields - @key::text) || jsonb_build_object(@value::text, custom_fields -> @key::text),
  updated_at = now()
WHERE organization_id = @organization_id::uuid AND id = ANY(@ids::uuid[]) AND custom_fields ? @key::text;

-- name: ContactLinksCampaignsAdd :many
-- Adds every campaign (as a pending lead) to every contact and answers the links that are new.
INSERT INTO campaign_leads (organization_id, campaign_id, contact_id)
SELECT @organization_id::uuid, k.id, c.id
FROM (SELECT unnest(@contact_ids::uuid[]) AS id) AS c CROSS JOIN (SELECT unnest(@campaign_ids::uuid[]) AS id) AS k
ON CONFLICT DO NOTHING RETURNING contact_id, campaign_id;

-- name: ContactLinksCategoriesAdd :many
-- Adds every category to every contact and answers the links that are new.
INSERT INTO contact_categories (organization_id, contact_id, category_id)
SELECT @organization_id::uuid, c.id, k.id
FROM (SELECT unnest(@contact_ids::uuid[]) AS id) AS c CROSS JOIN (SELECT unnest(@category_ids::uuid[]) AS id) AS k
ON CONFLICT DO NOTHING RETURNING contact_id, category_id;

-- name: ContactLinksCampaignsRemove :many
-- Removes the campaigns from the contacts and answers the links removed.
DELETE FROM campaign_leads
WHERE organization_id = @organization_id::uuid AND contact_id = ANY(@contact_ids::uuid[]) AND campaign_id = ANY(@campaign_ids::uuid[])
RETURNING contact_id, campaign_id;

-- name: ContactLinksCategoriesRemove :many
-- Removes the categories from the contacts and answers the links removed.
DELETE FROM contact_categories
WHERE organization_id = @organization_id::uuid AND contact_id = ANY(@contact_ids::uuid[]) AND category_id = ANY(@category_ids::uuid[])
RETURNING contact_id, category_id;

-- name: ContactLinksCampaignNames :many
-- The names of campaigns, for timeline entries that show them as they were.
SELECT id, name FROM campaigns WHERE organization_id = @organization_id::uuid AND id = ANY(@ids::uuid[]);

-- name: ContactLinksCategoryTitles :many
-- The titles of categories, for timeline entries that show them as they were.
SELECT id, title FROM labels WHERE organization_id = @organization_id::uuid AND id = ANY(@ids::uuid[]);

-- name: ContactLinksCampaignIDs :many
SELECT campaign_id FROM campaign_leads WHERE organization_id = @organization_id::uuid AND contact_id = @contact_id::uuid;

-- name: ContactLinksCategoryIDs :many
SELECT category_id FROM contact_categories WHERE organization_id = @organization_id::uuid AND contact_id = @contact_id::uuid;

-- name: ContactViewCampaigns :many
-- The campaigns of a page of contacts, in the order they were added.
SELECT l.contact_id, k.id, k.name FROM campaign_leads l
JOIN campaigns k ON k.organization_id = l.organization_id AND k.id = l.campaign_id
WHERE l.organization_id = @organization_id::uuid AND l.contact_id = ANY(@contact_ids::uuid[])
ORDER BY l.created_at, k.id;

-- name: ContactViewCategories :many
-- The categories of a page of contacts, in the list's order.
SELECT cc.contact_id, l.id, l.title, l.color FROM contact_categories cc
JOIN labels l ON l.organization_id = cc.organization_id AND l.id = cc.category_id
WHERE cc.organization_id = @organization_id::uuid AND cc.contact_id = ANY(@contact_ids::uuid[])
ORDER BY l.position, l.id;

-- name: ContactViewLeads :many
-- A page of contacts' progress as leads of one campaign. The status expression is contacts.LeadStatusSQL
-- (a test in internal/audience/contacts keeps the two the same).
SELECT l.contact_id,
  (CASE WHEN NOT c.subscribed THEN 'unsubscribed' WHEN l.bounced > 0 THEN 'bounced'
  WHEN l.replied > 0 THEN 'replied' WHEN l.state = 'failed' THEN 'failed' WHEN l.state = 'completed' THEN 'completed'
  WHEN l.state = 'paused' OR l.hold_since IS NOT NULL THEN 'paused' WHEN l.state = 'active' OR l.sent > 0 THEN 'active'
  WHEN l.state = 'undeliverable' THEN 'undeliverable' ELSE 'pending' END)::text AS status,
  l.sent, l.opened, l.machine_opened, l.clicked, l.replied, l.bounced, l.current_step, l.sender, l.failure_reason,
  l.last_activity_at, l.hold_since, l.hold_until, l.hold_reason, l.hold_source
FROM campaign_leads l JOIN contacts c ON c.organization_id = l.organization_id AND c.id = l.contact_id
WHERE l.organization_id = @organization_id::uuid AND l.campaign_id = @campaign_id::uuid AND l.contact_id = ANY(@contact_ids::uuid[]);

-- name: ContactEngagement :one
-- One contact's sending totals and the last time of each.
SELECT count(*) FILTER (WHERE sent_at IS NOT NULL) AS sent, count(opened_at) AS opened, count(clicked_at) AS clicked,
  count(replied_at) AS replied, count(bounced_at) AS bounced,
  max(sent_at) AS last_sent_at, max(opened_at) AS last_opened_at, max(clicked_at) AS last_clicked_at,
  max(replied_at) AS last_replied_at, max(bounced_at) AS last_bounced_at
FROM send_tasks WHERE organization_id = @organization_id::uuid AND contact_id = @contact_id::uuid;

-- name: ContactStats :one
-- The organization-wide counts the triggers keep (no scan of the contacts).
SELECT coalesce(max(total), 0)::bigint AS total, coalesce(max(subscribed), 0)::bigint AS subscribed,
  coalesce(max(in_campaign), 0)::bigint AS in_campaign, coalesce(max(not_contacted), 0)::bigint AS not_contacted
FROM contact_stats WHERE organization_id = @organization_id::uuid;

-- name: ContactStatsCategories :many
-- Each category's contact count, kept by a trigger, in the list's order.
SELECT id, contact_count FROM labels
WHERE organization_id = @organization_id::uuid AND kind = 'category' ORDER BY position, id;

-- name: ContactSegmentDefs :many
-- The kind and stored filters of the segments a segment_ids condition names.
SELECT id, kind, filters FROM segments WHERE organization_id = @organization_id::uuid AND id = ANY(@ids::uuid[]);

-- name: ContactIDsExisting :many
-- Which of ids are contacts of the organization, in id order.
SELECT id FROM contacts WHERE organization_id = @organization_id::uuid AND id = ANY(@ids::uuid[]) ORDER BY id;

-- name: ContactIndexBatchPick :many
-- The next batch_size pending contacts with ids above after, lowest first. Each pending range is read in key
-- order from after and stops at the batch's end, so the index job reads its backlog once rather than from the
-- start for every batch (past rows it has indexed, and their old versions, each time).
SELECT p.id FROM contacts_pending_ranges(@organization_id::uuid) r, LATERAL (
  SELECT c.id FROM contacts c WHERE c.organization_id = @organization_id::uuid AND c.id BETWEEN r.lo AND r.hi
    AND c.id > @after::uuid AND NOT c.search_ready ORDER BY c.id LIMIT @batch_size::int) p
WHERE r.hi > @after::uuid
ORDER BY p.id LIMIT @batch_size::int;

-- name: ContactIndexBatch :execrows
-- Moves the picked contacts that are still pending into the search indexes (search_ready).
UPDATE contacts SET search_ready = true
WHERE organization_id = @organization_id::uuid AND NOT search_ready AND id = ANY(@ids::uuid[]);

-- name: ContactIndexSettle :exec
-- After a run of the index job: merges the trigram indexes' pending lists and analyzes the table when the
-- import asked or the planner's picture of the organization's indexed contacts is far off
-- (contacts_index_settle; its migration says why and when).
SELECT contacts_index_settle(@asked::boolean);

-- name: ContactIndexRangesDrop :exec
-- Drops the pending ranges no unindexed contact falls in any more.
DELETE FROM contact_index_pending p WHERE p.organization_id = @organization_id::uuid AND NOT EXISTS (
  SELECT 1 FROM contacts c WHERE c.organization_id = p.organization_id AND c.id BETWEEN p.lo AND p.hi AND NOT c.search_ready);
