-- The agent policy gate on adding leads (internal/agents/leadgate): which campaigns a write reaches, which of
-- its leads are new, and the leads and pins an approval holds (held_leads). Every statement names
-- organization_id; RLS is the second wall.

-- name: LeadGateCampaigns :many
-- The campaigns a write adds leads to, locked in id order (two writes never deadlock) until it commits, so a
-- start, stop or completion waits and the status the gate decided by is the one the leads join.
SELECT id, name, status FROM campaigns
WHERE organization_id = @organization_id::uuid AND id = ANY(@ids::uuid[])
ORDER BY id
FOR UPDATE;

-- name: LeadGateSegmentLinks :many
-- The campaigns linked to the segments (a pin into one of them enrolls the contact there).
SELECT segment_id, campaign_id FROM campaign_segments
WHERE organization_id = @organization_id::uuid AND segment_id = ANY(@segment_ids::uuid[])
ORDER BY segment_id, campaign_id;

-- name: LeadGateFresh :many
-- The pairs (contact_ids[i], campaign_ids[i]) that are not leads yet, of contacts that exist.
SELECT pa.contact_id::uuid AS contact_id, pb.campaign_id::uuid AS campaign_id
FROM unnest(@contact_ids::uuid[]) WITH ORDINALITY AS pa(contact_id, n)
JOIN unnest(@campaign_ids::uuid[]) WITH ORDINALITY AS pb(campaign_id, n) USING (n)
WHERE EXISTS (SELECT 1 FROM contacts c WHERE c.organization_id = @organization_id::uuid AND c.id = pa.contact_id)
  AND NOT EXISTS (SELECT 1 FROM campaign_leads l
    WHERE l.organization_id = @organization_id::uuid AND l.campaign_id = pb.campaign_id AND l.contact_id = pa.contact_id);

-- name: LeadGateDynamicLinks :many
-- The segment links of every campaign linked to a dynamic segment: the campaigns whose audience grows when a
-- contact comes to match a segment's filters, with all their segments (a contact already in one of them was in
-- the audience before).
SELECT cs.campaign_id, cs.segment_id FROM campaign_segments cs
WHERE cs.organization_id = @organization_id::uuid AND EXISTS (SELECT 1 FROM campaign_segments d
  JOIN segments s ON s.organization_id = d.organization_id AND s.id = d.segment_id
  WHERE d.organization_id = @organization_id::uuid AND d.campaign_id = cs.campaign_id AND s.kind = 'dynamic')
ORDER BY cs.campaign_id, cs.segment_id;

-- name: LeadGateContactsLock :exec
-- Locks the contacts a write is about to change, in id order, until it commits: a concurrent writer of the
-- same contacts waits, so what they belonged to before the write is what the write changed. FOR NO KEY UPDATE
-- lets rows that reference them (a lead enrolled meanwhile) be written.
SELECT id FROM contacts WHERE organization_id = @organization_id::uuid AND id = ANY(@ids::uuid[])
ORDER BY id FOR NO KEY UPDATE;

-- name: LeadGateJoinable :many
-- Of the pairs (contact_ids[i], campaign_ids[i]), those a segment's new member would still join: not leads
-- yet, and not held as a segment's new member by an approval that is pending or was denied or expired
-- (held_leads.via_segment).
SELECT pa.contact_id::uuid AS contact_id, pb.campaign_id::uuid AS campaign_id
FROM unnest(@contact_ids::uuid[]) WITH ORDINALITY AS pa(contact_id, n)
JOIN unnest(@campaign_ids::uuid[]) WITH ORDINALITY AS pb(campaign_id, n) USING (n)
WHERE NOT EXISTS (SELECT 1 FROM campaign_leads l
    WHERE l.organization_id = @organization_id::uuid AND l.campaign_id = pb.campaign_id AND l.contact_id = pa.contact_id)
  AND NOT EXISTS (SELECT 1 FROM held_leads h JOIN approvals a ON a.organization_id = h.organization_id AND a.id = h.approval_id
    WHERE h.organization_id = @organization_id::uuid AND h.campaign_id = pb.campaign_id AND h.contact_id = pa.contact_id
      AND h.via_segment AND a.status NOT IN ('approved', 'executed'));

-- name: LeadGateSample :many
-- Up to 10 of the contacts' addresses, for the person deciding.
SELECT email FROM contacts WHERE organization_id = @organization_id::uuid AND id = ANY(@ids::uuid[])
ORDER BY email LIMIT 10;

-- name: LeadGateSegmentNames :many
SELECT id, name FROM segments WHERE organization_id = @organization_id::uuid AND id = ANY(@ids::uuid[]) ORDER BY id;

-- name: LeadGatePinsAdd :exec
-- Pins contact_ids[i] into segment_ids[i] as a manual include (an exclude pin turns into an include).
INSERT INTO segment_pins (organization_id, segment_id, contact_id, include)
SELECT @organization_id::uuid, pb.segment_id, pa.contact_id, true
FROM unnest(@contact_ids::uuid[]) WITH ORDINALITY AS pa(contact_id, n)
JOIN unnest(@segment_ids::uuid[]) WITH ORDINALITY AS pb(segment_id, n) USING (n)
ON CONFLICT (organization_id, segment_id, contact_id) DO UPDATE SET include = true, created_at = now()
WHERE NOT segment_pins.include;

-- name: HeldLeadsAddLeads :exec
-- Holds contact_ids[i] for campaign_ids[i] under the approval; via_segment[i] marks a lead a segment linked to
-- the campaign would take in (enrolment skips it meanwhile).
INSERT INTO held_leads (organization_id, approval_id, contact_id, campaign_id, via_segment)
SELECT @organization_id::uuid, @approval_id::uuid, pa.contact_id, pb.campaign_id, pc.via_segment
FROM unnest(@contact_ids::uuid[]) WITH ORDINALITY AS pa(contact_id, n)
JOIN unnest(@campaign_ids::uuid[]) WITH ORDINALITY AS pb(campaign_id, n) USING (n)
JOIN unnest(@via_segment::boolean[]) WITH ORDINALITY AS pc(via_segment, n) USING (n);

-- name: HeldLeadsAddPins :exec
-- Holds the pins of contact_ids[i] into segment_ids[i] under the approval.
INSERT INTO held_leads (organization_id, approval_id, contact_id, segment_id)
SELECT @organization_id::uuid, @approval_id::uuid, pa.contact_id, pb.segment_id
FROM unnest(@contact_ids::uuid[]) WITH ORDINALITY AS pa(contact_id, n)
JOIN unnest(@segment_ids::uuid[]) WITH ORDINALITY AS pb(segment_id, n) USING (n);

-- name: HeldLeadsOf :many
-- What the approval holds and still exists (a deleted contact, campaign or segment took its rows along).
SELECT contact_id, campaign_id, segment_id FROM held_leads
WHERE organization_id = @organization_id::uuid AND approval_id = @approval_id::uuid
ORDER BY campaign_id, segment_id, contact_id;
