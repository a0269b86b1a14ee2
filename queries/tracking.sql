-- name: TrackingEventsInsert :execrows
-- One batch of opens and clicks of one organization, as the tracking endpoints received them (not yet
-- classified). link_index and url are NULL for an open.
INSERT INTO tracking_events (organization_id, id, task_id, kind, at, user_agent, ip_hash, source_network, scanner,
                             scanner_probable, privacy_proxy, link_index, url, ticket_issued)
SELECT @organization_id::uuid, u.id, u.task_id, u.kind, u.at, u.ua, u.ip_hash, u.network, u.scanner,
       u.probable, u.proxy, CASE WHEN u.kind = 'click' THEN u.link_index END, CASE WHEN u.kind = 'click' THEN u.url END,
       u.ticket
FROM (SELECT unnest(@ids::uuid[]) AS id, unnest(@task_ids::uuid[]) AS task_id, unnest(@kinds::text[]) AS kind,
             unnest(@ats::timestamptz[]) AS at, unnest(@uas::text[]) AS ua, unnest(@ip_hashes::text[]) AS ip_hash,
             unnest(@networks::text[]) AS network, unnest(@scanners::text[]) AS scanner,
             unnest(@probables::boolean[]) AS probable, unnest(@proxies::boolean[]) AS proxy,
             unnest(@link_indexes::int[]) AS link_index, unnest(@urls::text[]) AS url,
             unnest(@tickets::boolean[]) AS ticket) AS u;

