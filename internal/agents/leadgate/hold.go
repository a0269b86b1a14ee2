package leadgate

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/agents/approvals"
	"github.com/outflowhq/outflow/internal/agents/policy"
	"github.com/outflowhq/outflow/internal/campaigns/campaign"
	"github.com/outflowhq/outflow/internal/eventing/events"
	"github.com/outflowhq/outflow/internal/identity/auth"
	"github.com/outflowhq/outflow/internal/trail/audit"
)

// holdAdd holds pl's new leads of campaigns that send (its named leads, the pins that bring some, and those
// the contacts' new segment memberships bring) for a person: the approval with a payload the person reads,
// the held rows and the audit entry.
func (g *Gate) holdAdd(ctx context.Context, tx pgx.Tx, p *auth.Principal, event string, pl plan, d policy.Decision, now time.Time) (*Held, error) {
	org := p.OrganizationID
	all := slices.Concat(pl.fresh, pl.matched)
	perCampaign := map[uuid.UUID]int{}
	for _, l := range all {
		perCampaign[l.Campaign]++
	}
	perSegment := map[uuid.UUID]int{}
	var contacts, segments []uuid.UUID
	for _, l := range slices.Concat(pl.heldLeads, pl.matched) {
		contacts = append(contacts, l.Contact)
	}
	for _, pin := range pl.heldPins {
		contacts = append(contacts, pin.Contact)
		if perSegment[pin.Segment]++; perSegment[pin.Segment] == 1 {
			segments = append(segments, pin.Segment)
		}
	}
	contacts = unique(contacts)
	perMatched := map[uuid.UUID]int{}
	var matchedSegments []uuid.UUID
	for _, l := range pl.matched {
		s := pl.via[l]
		if perMatched[s]++; perMatched[s] == 1 {
			matchedSegments = append(matchedSegments, s)
		}
	}
	sample, err := queries.LeadGateSample(ctx, tx, dbq.LeadGateSampleParams{OrganizationID: org, Ids: contacts})
	if err != nil {
		return nil, err
	}
	names, err := segmentNames(ctx, tx, org, slices.Concat(segments, matchedSegments))
	if err != nil {
		return nil, err
	}
	segs := make([]map[string]any, len(segments))
	for i, s := range segments {
		segs[i] = map[string]any{"id": s, "name": names[s], "contacts": perSegment[s]}
	}
	joined := make([]map[string]any, len(matchedSegments))
	for i, s := range matchedSegments {
		joined[i] = map[string]any{"id": s, "name": names[s], "leads": perMatched[s]}
	}
	campaigns := pl.sending()
	payload := map[string]any{"event": event, "campaigns": campaignsPayload(pl.campaigns, campaigns, perCampaign), "segments": segs,
		"leads": len(all), "contacts": len(contacts), "sample": sample}
	if len(pl.matched) > 0 {
		// The leads the write's contacts bring by newly matching segments linked to the campaigns.
		payload["joined_segments"] = joined
	}
	a, err := g.held.Create(ctx, tx, p, approvals.Request{ActionType: policy.CampaignLaunch, Operation: OpAddLeads, Payload: payload,
		Decision: d, Summary: summary(pl.campaigns, campaigns, len(all))}, now)
	if err != nil {
		return nil, err
	}
	if held := heldRows(pl); len(held) > 0 {
		ids, targets, via := make([]uuid.UUID, len(held)), make([]uuid.UUID, len(held)), make([]bool, len(held))
		for i, l := range held {
			_, through := pl.via[l]
			ids[i], targets[i], via[i] = l.Contact, l.Campaign, through
		}
		if err := queries.HeldLeadsAddLeads(ctx, tx, dbq.HeldLeadsAddLeadsParams{OrganizationID: org, ApprovalID: a.ID, ContactIds: ids,
			CampaignIds: targets, ViaSegment: via}); err != nil {
			return nil, fmt.Errorf("leadgate: hold leads: %w", err)
		}
	}
	if len(pl.heldPins) > 0 {
		ids, targets := make([]uuid.UUID, len(pl.heldPins)), make([]uuid.UUID, len(pl.heldPins))
		for i, pin := range pl.heldPins {
			ids[i], targets[i] = pin.Contact, pin.Segment
		}
		if err := queries.HeldLeadsAddPins(ctx, tx, dbq.HeldLeadsAddPinsParams{OrganizationID: org, ApprovalID: a.ID, ContactIds: ids,
			SegmentIds: targets}); err != nil {
			return nil, fmt.Errorf("leadgate: hold pins: %w", err)
		}
	}
	h := &Held{Approval: a, URL: g.held.URL(a.ID), Campaigns: campaigns, Segments: segments, Leads: len(all)}
	return h, auditHeld(ctx, tx, a, OpAddLeads, event, h)
}

// heldRows are the leads pl holds as rows of held_leads: its named leads, the pairs segments bring (matched),
// and the pairs of its held pins that a segment brings too (held as leads as well, so that enrolment leaves
// them to the person; the pin row holds the pin).
func heldRows(pl plan) []campaign.Lead {
	out := slices.Concat(pl.heldLeads, pl.matched)
	for _, l := range pl.fresh {
		if _, through := pl.via[l]; through {
			out = append(out, l)
		}
	}
	return unique(out)
}

// holdLink holds the links of segments to campaign c, whose members would add leads now, for a person.
func (g *Gate) holdLink(ctx context.Context, tx pgx.Tx, p *auth.Principal, c dbq.LeadGateCampaignsRow, segments []uuid.UUID, leads int,
	d policy.Decision, now time.Time) (*Held, error) {
	names, err := segmentNames(ctx, tx, p.OrganizationID, segments)
	if err != nil {
		return nil, err
	}
	segs := make([]map[string]any, len(segments))
	for i, s := range segments {
		segs[i] = map[string]any{"id": s, "name": names[s]}
	}
	rows := map[uuid.UUID]dbq.LeadGateCampaignsRow{c.ID: c}
	payload := map[string]any{"event": eventCampaignUpdated, "campaign_id": c.ID, "segment_ids": segments,
		"campaigns": campaignsPayload(rows, []uuid.UUID{c.ID}, map[uuid.UUID]int{c.ID: leads}), "segments": segs, "leads": leads}
	a, err := g.held.Create(ctx, tx, p, approvals.Request{ActionType: policy.CampaignLaunch, Operation: OpLinkSegments, Payload: payload,
		Decision: d, Summary: fmt.Sprintf("link %d segment(s) to the %s campaign %q (%d new lead(s) now, and members who join later)",
			len(segments), c.Status, c.Name, leads)}, now)
	if err != nil {
		return nil, err
	}
	h := &Held{Approval: a, URL: g.held.URL(a.ID), Campaigns: []uuid.UUID{c.ID}, Segments: segments, Leads: leads}
	return h, auditHeld(ctx, tx, a, OpLinkSegments, eventCampaignUpdated, h)
}

// eventCampaignUpdated is the audit event of a campaign update, under which approved links are recorded.
const eventCampaignUpdated = "campaign.updated"

// auditHeld records that the request under event was held as approval a of operation.
func auditHeld(ctx context.Context, tx pgx.Tx, a dbq.Approval, operation, event string, h *Held) error {
	return audit.Record(ctx, tx, audit.Entry{Action: audit.ActionCreate, Event: string(events.ApprovalRequested), EntityType: audit.EntityApproval,
		EntityID: a.ID.String(), Metadata: map[string]any{"action_type": a.ActionType, "operation": operation, "request_event": event,
			"campaign_ids": h.Campaigns, "segment_ids": nonNil(h.Segments), "leads": h.Leads, "reasons": a.Reasons}})
}

// campaignsPayload describes campaigns (of rows) for the person deciding, with the new leads each would get.
func campaignsPayload(rows map[uuid.UUID]dbq.LeadGateCampaignsRow, campaigns []uuid.UUID, leads map[uuid.UUID]int) []map[string]any {
	out := make([]map[string]any, len(campaigns))
	for i, id := range campaigns {
		out[i] = map[string]any{"id": id, "name": rows[id].Name, "status": rows[id].Status, "leads": leads[id]}
	}
	return out
}

// summary is the line the people who may decide read: "An agent asks to launch a campaign: <summary>".
func summary(rows map[uuid.UUID]dbq.LeadGateCampaignsRow, campaigns []uuid.UUID, leads int) string {
	if len(campaigns) == 1 {
		c := rows[campaigns[0]]
		return fmt.Sprintf("add %d lead(s) to the %s campaign %q", leads, c.Status, c.Name)
	}
	var names []string
	for _, id := range campaigns[:min(3, len(campaigns))] {
		names = append(names, fmt.Sprintf("%q", rows[id].Name))
	}
	more := ""
	if len(campaigns) > 3 {
		more = fmt.Sprintf(" and %d more", len(campaigns)-3)
	}
	return fmt.Sprintf("add %d lead(s) to %d campaigns that send (%s%s)", leads, len(campaigns), strings.Join(names, ", "), more)
}

func segmentNames(ctx context.Context, tx pgx.Tx, org uuid.UUID, ids []uuid.UUID) (map[uuid.UUID]string, error) {
	out := map[uuid.UUID]string{}
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := queries.LeadGateSegmentNames(ctx, tx, dbq.LeadGateSegmentNamesParams{OrganizationID: org, Ids: ids})
	for _, r := range rows {
		out[r.ID] = r.Name
	}
	return out, err
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
