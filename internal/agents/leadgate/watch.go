package leadgate

import (
	"context"
	"fmt"
	"slices"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/audience/contacts"
	"github.com/outflowhq/outflow/internal/campaigns/campaign"
	"github.com/outflowhq/outflow/internal/identity/auth"
)

// Watch is what contacts belonged to before a credential's write changed them: of the segments linked to
// campaigns that take in a dynamic segment's members, the ones each contact was in (Gate.Watch). Add reads
// them again after the write; a contact in none of a campaign's segments before and in one after is a new
// lead the write brings into that campaign.
type Watch struct {
	org uuid.UUID
	// segments are the segments linked to campaigns with a dynamic segment when the watch began.
	segments []uuid.UUID
	// contacts are the contacts read (locked until the write commits).
	contacts map[uuid.UUID]bool
	// members are the (contact, segment) memberships they had.
	members map[member]bool
}

// member is a contact in a segment.
type member struct{ contact, segment uuid.UUID }

// Watch reads, before p's write changes contacts (their fields, subscription, categories or campaigns), which
// segments linked to campaigns with a dynamic segment each of ids belongs to, and locks them until the write
// commits, so that a concurrent writer's change is not taken for this one's. Call it in the write's
// transaction before changing them (Read adds contacts known later) and hand the result to Add
// (Request.Watch) with every contact the write changed or created. Nil for a session, which is never gated.
func (g *Gate) Watch(ctx context.Context, tx pgx.Tx, p *auth.Principal, ids []uuid.UUID) (*Watch, error) {
	if p.IsSession() {
		return nil, nil
	}
	l, err := dynamicLinks(ctx, tx, p.OrganizationID)
	if err != nil {
		return nil, err
	}
	w := &Watch{org: p.OrganizationID, segments: l.segments(), contacts: map[uuid.UUID]bool{}, members: map[member]bool{}}
	return w, w.Read(ctx, tx, ids)
}

// Reads reports whether w has anything to read: false for a session's (nil) and when no campaign was linked
// to a dynamic segment, where a writer may skip finding the contacts it is about to change.
func (w *Watch) Reads() bool { return w != nil && len(w.segments) > 0 }

// Read adds to w what those of ids it has not read belong to now, locking them (see Gate.Watch).
func (w *Watch) Read(ctx context.Context, tx pgx.Tx, ids []uuid.UUID) error {
	return w.read(ctx, tx, w.segments, ids)
}

// read adds the memberships in segments of those of ids it has not read, locking them.
func (w *Watch) read(ctx context.Context, tx pgx.Tx, segments, ids []uuid.UUID) error {
	var fresh []uuid.UUID
	for _, id := range ids {
		if !w.contacts[id] {
			w.contacts[id] = true
			fresh = append(fresh, id)
		}
	}
	if len(fresh) == 0 || len(segments) == 0 {
		return nil
	}
	if err := queries.LeadGateContactsLock(ctx, tx, dbq.LeadGateContactsLockParams{OrganizationID: w.org, Ids: fresh}); err != nil {
		return fmt.Errorf("leadgate: lock contacts: %w", err)
	}
	m, err := contacts.Memberships(ctx, tx, w.org, segments, fresh)
	if err != nil {
		return err
	}
	for s, ids := range m.Of {
		for _, id := range ids {
			w.members[member{id, s}] = true
		}
	}
	return nil
}

// links are the segment links of the campaigns linked to a dynamic segment: each such campaign's segments.
type links map[uuid.UUID][]uuid.UUID

// dynamicLinks reads the organization's links (see links).
func dynamicLinks(ctx context.Context, tx pgx.Tx, org uuid.UUID) (links, error) {
	rows, err := queries.LeadGateDynamicLinks(ctx, tx, org)
	if err != nil {
		return nil, fmt.Errorf("leadgate: dynamic segment links: %w", err)
	}
	l := links{}
	for _, r := range rows {
		l[r.CampaignID] = append(l[r.CampaignID], r.SegmentID)
	}
	return l, nil
}

// segments are every segment linked, in id order.
func (l links) segments() []uuid.UUID {
	var out []uuid.UUID
	for _, segs := range l {
		out = append(out, segs...)
	}
	slices.SortFunc(out, func(a, b uuid.UUID) int { return slices.Compare(a[:], b[:]) })
	return slices.Compact(out)
}

// campaigns are the campaigns, in id order.
func (l links) campaigns() []uuid.UUID {
	out := make([]uuid.UUID, 0, len(l))
	for c := range l {
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b uuid.UUID) int { return slices.Compare(a[:], b[:]) })
	return out
}

// matching is how Add finds the leads a credential's write brings into campaigns through their segments: the
// campaigns linked to a dynamic segment, what the write's contacts belonged to before it, and every contact
// the write changed, created or names in its leads and pins.
type matching struct {
	org   uuid.UUID
	links links
	was   *Watch
	ids   []uuid.UUID
	// readLeads: a segment selects by campaign leads (from the last reading), so a lead added can bring its
	// contact into another campaign.
	readLeads bool
}

// newMatching builds Add's matching for r (leads and pins are r's, each once): nil when no campaign is
// linked to a dynamic segment or r names no contact. The contacts of r's leads and pins that r.Watch did not
// read and the write did not change (Request.Changed) are read now, before Add writes anything; a contact
// the write changed that r.Watch did not read was created by it (it belonged to nothing before).
func newMatching(ctx context.Context, tx pgx.Tx, org uuid.UUID, r Request, leads []campaign.Lead, pins []Pin) (*matching, error) {
	ids := slices.Clone(r.Changed)
	for _, l := range leads {
		ids = append(ids, l.Contact)
	}
	for _, p := range pins {
		ids = append(ids, p.Contact)
	}
	ids = unique(ids)
	if len(ids) == 0 {
		return nil, nil
	}
	l, err := dynamicLinks(ctx, tx, org)
	if err != nil || len(l) == 0 {
		return nil, err
	}
	w := r.Watch
	if w == nil {
		w = &Watch{org: org, contacts: map[uuid.UUID]bool{}, members: map[member]bool{}}
	}
	changed := map[uuid.UUID]bool{}
	for _, id := range r.Changed {
		changed[id] = true
	}
	var unread []uuid.UUID
	for _, id := range ids {
		if !w.contacts[id] && !changed[id] {
			unread = append(unread, id)
		}
	}
	if err := w.read(ctx, tx, l.segments(), unread); err != nil {
		return nil, err
	}
	return &matching{org: org, links: l, was: w, ids: ids}, nil
}

// joined reads the contacts' memberships now and answers the pairs (contact, campaign) they newly joined: in
// a segment of the campaign now and in none of them before, not a lead of it yet and not held as a segment's
// new member (LeadGateJoinable), leaving out skip; with, for each, the segment that brings it. In campaign
// and contact order.
func (m *matching) joined(ctx context.Context, tx pgx.Tx, skip map[campaign.Lead]bool) ([]campaign.Lead, map[campaign.Lead]uuid.UUID, error) {
	now, err := contacts.Memberships(ctx, tx, m.org, m.links.segments(), m.ids)
	if err != nil {
		return nil, nil, err
	}
	m.readLeads = now.ReadLeads
	via := map[campaign.Lead]uuid.UUID{}
	var ids, targets []uuid.UUID
	for _, c := range m.links.campaigns() {
		for _, s := range m.links[c] {
			for _, id := range now.Of[s] {
				l := campaign.Lead{Contact: id, Campaign: c}
				if _, seen := via[l]; seen || skip[l] || m.wasIn(id, c) {
					continue
				}
				via[l] = s
				ids, targets = append(ids, id), append(targets, c)
			}
		}
	}
	if len(ids) == 0 {
		return nil, nil, nil
	}
	rows, err := queries.LeadGateJoinable(ctx, tx, dbq.LeadGateJoinableParams{OrganizationID: m.org, ContactIds: ids, CampaignIds: targets})
	if err != nil {
		return nil, nil, fmt.Errorf("leadgate: joinable segment members: %w", err)
	}
	out := make([]campaign.Lead, len(rows))
	for i, r := range rows {
		out[i] = campaign.Lead{Contact: r.ContactID, Campaign: r.CampaignID}
	}
	slices.SortFunc(out, func(a, b campaign.Lead) int {
		if c := slices.Compare(a.Campaign[:], b.Campaign[:]); c != 0 {
			return c
		}
		return slices.Compare(a.Contact[:], b.Contact[:])
	})
	return out, via, nil
}

// wasIn reports whether contact id was in a segment of campaign c before the write.
func (m *matching) wasIn(id, c uuid.UUID) bool {
	return slices.ContainsFunc(m.links[c], func(s uuid.UUID) bool { return m.was.members[member{id, s}] })
}

// enroll adds as leads (by the person who acted) the pairs the contacts newly joined that add allows, and
// reads again while a lead it added may have brought its contact into another campaign's segment (one that
// selects by campaign leads), until nothing new joins. It answers the pairs added, those left (not allowed,
// each read once) and the segment that brings each.
func (m *matching) enroll(ctx context.Context, tx pgx.Tx, by uuid.NullUUID, add func(campaign.Lead) bool) (added, left []campaign.Lead,
	via map[campaign.Lead]uuid.UUID, err error) {
	seen, via := map[campaign.Lead]bool{}, map[campaign.Lead]uuid.UUID{}
	for {
		pairs, through, err := m.joined(ctx, tx, seen)
		if err != nil {
			return nil, nil, nil, err
		}
		var now []campaign.Lead
		for _, l := range pairs {
			seen[l], via[l] = true, through[l]
			if add(l) {
				now = append(now, l)
			} else {
				left = append(left, l)
			}
		}
		if len(now) == 0 {
			return added, left, via, nil
		}
		if _, err := campaign.AddLeads(ctx, tx, m.org, now, by); err != nil {
			return nil, nil, nil, err
		}
		added = append(added, now...)
		if !m.readLeads {
			return added, left, via, nil
		}
	}
}
