package leadgate

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/agents/approvals"
	"github.com/outflowhq/outflow/internal/agents/policy"
	"github.com/outflowhq/outflow/internal/campaigns/campaign"
	"github.com/outflowhq/outflow/internal/campaigns/checks"
	"github.com/outflowhq/outflow/internal/identity/auth"
)

var queries = dbq.New()

// The operations of the campaign.launch approvals the gate holds (the payload's "operation"), each acted on by
// its own executor.
const (
	// OpAddLeads holds leads and segment pins (rows of held_leads).
	OpAddLeads = "campaign.add_leads"
	// OpLinkSegments holds new segment links of a campaign (in the payload).
	OpLinkSegments = "campaign.link_segments"
)

// Gate decides, for the caller of a write, whether the people it adds to campaigns that send are added now or
// wait for a person (see the package documentation).
type Gate struct {
	held *approvals.Service
}

// New builds the gate on held, with which it registers the executors of its approvals.
func New(held *approvals.Service) *Gate {
	g := &Gate{held: held}
	held.RegisterOperation(policy.CampaignLaunch, OpAddLeads, g.addApproved)
	held.RegisterOperation(policy.CampaignLaunch, OpLinkSegments, g.linkApproved)
	return g
}

// Pin is one contact to pin into one segment as a manual include.
type Pin struct{ Contact, Segment uuid.UUID }

// Request is what one write asks that may add people to campaigns. Every contact, campaign and segment named
// exists (the caller checked its references).
type Request struct {
	Leads []campaign.Lead
	Pins  []Pin
	// Changed are the contacts the write changed (fields, subscription, categories, campaigns) or created,
	// and Watch what they belonged to before it (Gate.Watch; a changed contact it did not read was created):
	// a contact the change brings into a segment linked to a campaign is a new lead of that campaign too.
	Changed []uuid.UUID
	Watch   *Watch
	// Event is the write's audit event (contacts.bulk_updated, ...): a held request, once approved, is
	// recorded under it.
	Event string
}

// Outcome is what Add did.
type Outcome struct {
	// Added are the leads added now: those named and those the pins brought into campaigns that send.
	Added []campaign.Lead
	// Pinned counts the pins written now (a contact already pinned in counts too).
	Pinned int
	// Held is the approval the rest waits for; nil when nothing waits.
	Held *Held
}

// Held is an approval that holds people for campaigns that send.
type Held struct {
	Approval dbq.Approval
	// URL is where a person decides it.
	URL string
	// Campaigns are the campaigns whose new leads wait; Segments the segments whose pins or links wait.
	Campaigns, Segments []uuid.UUID
	// Leads counts the new leads that wait (contact and campaign pairs).
	Leads int
}

// Add writes r for p in tx (organization-scoped, p's organization): at once for a session and for whatever
// adds nobody to a campaign that sends; the new leads of campaigns that send (named, brought by pins, and
// brought by the contacts' new memberships of segments linked to campaigns) only within p's agent policy,
// counted, or else held for a person's approval (Outcome.Held) with nothing of them written.
func (g *Gate) Add(ctx context.Context, tx pgx.Tx, p *auth.Principal, r Request, now time.Time) (Outcome, error) {
	org, by := p.OrganizationID, actor(p)
	leads, pins := unique(r.Leads), unique(r.Pins)
	if p.Kind == auth.KindSession {
		if len(leads)+len(pins) == 0 {
			return Outcome{}, nil
		}
		return write(ctx, tx, org, by, batch{leads, pins})
	}
	m, err := newMatching(ctx, tx, org, r, leads, pins)
	if err != nil {
		return Outcome{}, err
	}
	if m == nil && len(leads)+len(pins) == 0 {
		return Outcome{}, nil
	}
	var also []uuid.UUID
	if m != nil {
		also = m.links.campaigns()
	}
	pl, err := planAdd(ctx, tx, org, leads, pins, also)
	if err != nil {
		return Outcome{}, err
	}
	if m != nil {
		return g.addMatching(ctx, tx, p, r.Event, pl, m, now)
	}
	if len(pl.fresh) == 0 {
		return write(ctx, tx, org, by, pl.writes(false))
	}
	d, err := check(ctx, tx, p, pl.sending(), len(pl.fresh), now)
	if err != nil {
		return Outcome{}, err
	}
	if d.Allowed {
		return write(ctx, tx, org, by, pl.writes(true))
	}
	out, err := write(ctx, tx, org, by, pl.writes(false))
	if err != nil {
		return out, err
	}
	out.Held, err = g.holdAdd(ctx, tx, p, r.Event, pl, d, now)
	return out, err
}

// addMatching is Add where the write's contacts may have joined segments linked to campaigns (m). In a
// savepoint (an error aborts the caller's transaction) it writes everything as if allowed and enrolls the
// segment members that brings (m.enroll); the new leads of campaigns that send, named, pinned or joined, are
// then one policy action. Allowed, that stays and is counted. Otherwise the savepoint rolls back, what adds
// nobody to a campaign that sends is written with the segment members it brings to campaigns that do not
// send, and the rest is held: the joined pairs (and named or pinned ones that a segment brings too) with
// held_leads.via_segment, so that enrolment leaves them to the person.
func (g *Gate) addMatching(ctx context.Context, tx pgx.Tx, p *auth.Principal, event string, pl plan, m *matching, now time.Time) (Outcome, error) {
	org, by := p.OrganizationID, actor(p)
	sp, err := tx.Begin(ctx)
	if err != nil {
		return Outcome{}, err
	}
	out, err := write(ctx, sp, org, by, pl.writes(true))
	if err != nil {
		return out, err
	}
	joined, _, _, err := m.enroll(ctx, sp, by, func(campaign.Lead) bool { return true })
	if err != nil {
		return out, err
	}
	out.Added = append(out.Added, joined...)
	for _, l := range joined {
		if sends(pl.campaigns, l.Campaign) {
			pl.matched = append(pl.matched, l)
		}
	}
	if len(pl.fresh)+len(pl.matched) == 0 {
		return out, sp.Commit(ctx)
	}
	d, err := check(ctx, sp, p, pl.sending(), len(pl.fresh)+len(pl.matched), now)
	if err != nil {
		return out, err
	}
	if d.Allowed {
		return out, sp.Commit(ctx)
	}
	if err := sp.Rollback(ctx); err != nil {
		return Outcome{}, err
	}
	if out, err = write(ctx, tx, org, by, pl.writes(false)); err != nil {
		return out, err
	}
	quiet, left, via, err := m.enroll(ctx, tx, by, func(l campaign.Lead) bool { return !sends(pl.campaigns, l.Campaign) })
	if err != nil {
		return out, err
	}
	out.Added = append(out.Added, quiet...)
	fresh := map[campaign.Lead]bool{}
	for _, l := range pl.fresh {
		fresh[l] = true
	}
	pl.matched, pl.via = nil, map[campaign.Lead]uuid.UUID{}
	for _, l := range left {
		pl.via[l] = via[l]
		if !fresh[l] {
			pl.matched = append(pl.matched, l)
		}
	}
	if len(pl.fresh)+len(pl.matched) == 0 {
		return out, nil
	}
	out.Held, err = g.holdAdd(ctx, tx, p, event, pl, d, now)
	return out, err
}

// Scope picks, of the campaigns and segments a write links every one of its contacts to, those whose links
// must go through Add for p: for an API key or OAuth grant, the campaigns that send and the segments linked
// to any campaign (its pins enroll there at once; the campaigns are locked as Add locks them); none for a
// session. A set-based writer (the import) links the others itself and hands these to Add.
func (g *Gate) Scope(ctx context.Context, tx pgx.Tx, p *auth.Principal, campaigns, segments []uuid.UUID) (gated, gatedSegments []uuid.UUID, err error) {
	if p.Kind == auth.KindSession || len(campaigns)+len(segments) == 0 {
		return nil, nil, nil
	}
	linked, rows, err := reach(ctx, tx, p.OrganizationID, campaigns, segments)
	if err != nil {
		return nil, nil, err
	}
	for _, c := range campaigns {
		if sends(rows, c) {
			gated = append(gated, c)
		}
	}
	for _, s := range segments {
		if len(linked[s]) > 0 {
			gatedSegments = append(gatedSegments, s)
		}
	}
	return gated, gatedSegments, nil
}

// plan is how Add splits a request for a credential.
type plan struct {
	// campaigns are the locked campaigns the request reaches, named or linked to its pins' segments.
	campaigns map[uuid.UUID]dbq.LeadGateCampaignsRow
	// leads and pins add nobody to a campaign that sends: written at once.
	leads []campaign.Lead
	pins  []Pin
	// quiet are the leads each pin brings into the linked campaigns that do not send, enrolled with the pin
	// (not left to the periodic job), so that a later start counts them.
	quiet map[Pin][]campaign.Lead
	// fresh are the new leads of campaigns that send the rest would add (named, and brought by pins): what
	// the policy counts.
	fresh []campaign.Lead
	// heldLeads are the named leads among fresh; heldPins the pins that bring some of fresh.
	heldLeads []campaign.Lead
	heldPins  []Pin
	// matched are the new leads of campaigns that send that the contacts' new segment memberships bring,
	// apart from fresh (counted with it); via names, for each pair a segment brings (matched, and those of
	// fresh a segment brings too), that segment.
	matched []campaign.Lead
	via     map[campaign.Lead]uuid.UUID
}

// batch is leads and pins written together.
type batch struct {
	leads []campaign.Lead
	pins  []Pin
}

// writes is what pl writes: what adds nobody to a campaign that sends, and with gated (allowed, or approved)
// the rest too; each pin written with the leads it brings.
func (p plan) writes(gated bool) batch {
	b := batch{slices.Clone(p.leads), slices.Clone(p.pins)}
	if gated {
		b.leads, b.pins = append(b.leads, p.fresh...), append(b.pins, p.heldPins...)
	}
	for _, pin := range b.pins {
		b.leads = append(b.leads, p.quiet[pin]...)
	}
	return b
}

// sending are the campaigns of p.fresh and p.matched.
func (p plan) sending() []uuid.UUID {
	var out []uuid.UUID
	for _, l := range slices.Concat(p.fresh, p.matched) {
		if !slices.Contains(out, l.Campaign) {
			out = append(out, l.Campaign)
		}
	}
	return out
}

// planAdd locks the campaigns leads and pins reach, and those of also, and splits the leads and pins (see
// plan).
func planAdd(ctx context.Context, tx pgx.Tx, org uuid.UUID, leads []campaign.Lead, pins []Pin, also []uuid.UUID) (plan, error) {
	named, segments := slices.Clone(also), []uuid.UUID(nil)
	for _, l := range leads {
		named = append(named, l.Campaign)
	}
	for _, p := range pins {
		segments = append(segments, p.Segment)
	}
	linked, rows, err := reach(ctx, tx, org, named, segments)
	if err != nil {
		return plan{}, err
	}
	pl := plan{campaigns: rows, quiet: map[Pin][]campaign.Lead{}}
	var candidates []campaign.Lead
	for _, l := range leads {
		if sends(rows, l.Campaign) {
			candidates = append(candidates, l)
		} else {
			pl.leads = append(pl.leads, l)
		}
	}
	brings := map[Pin][]campaign.Lead{}
	for _, p := range pins {
		for _, c := range linked[p.Segment] {
			l := campaign.Lead{Contact: p.Contact, Campaign: c}
			if sends(rows, c) {
				brings[p] = append(brings[p], l)
				candidates = append(candidates, l)
			} else {
				pl.quiet[p] = append(pl.quiet[p], l)
			}
		}
	}
	candidates = unique(candidates)
	fresh := map[campaign.Lead]bool{}
	if len(candidates) > 0 {
		contacts, campaigns := make([]uuid.UUID, len(candidates)), make([]uuid.UUID, len(candidates))
		for i, l := range candidates {
			contacts[i], campaigns[i] = l.Contact, l.Campaign
		}
		found, err := queries.LeadGateFresh(ctx, tx, dbq.LeadGateFreshParams{OrganizationID: org, ContactIds: contacts, CampaignIds: campaigns})
		if err != nil {
			return plan{}, fmt.Errorf("leadgate: new leads: %w", err)
		}
		for _, f := range found {
			l := campaign.Lead{Contact: f.ContactID, Campaign: f.CampaignID}
			fresh[l] = true
			pl.fresh = append(pl.fresh, l)
		}
	}
	for _, l := range leads {
		if fresh[l] {
			pl.heldLeads = append(pl.heldLeads, l)
		} // a named lead of a sending campaign that exists already needs nothing
	}
	for _, p := range pins {
		if slices.ContainsFunc(brings[p], func(l campaign.Lead) bool { return fresh[l] }) {
			pl.heldPins = append(pl.heldPins, p)
		} else {
			pl.pins = append(pl.pins, p)
		}
	}
	return pl, nil
}

// reach locks the campaigns named and those linked to segments, and answers each segment's linked campaigns
// with the locked rows by id.
func reach(ctx context.Context, tx pgx.Tx, org uuid.UUID, named, segments []uuid.UUID) (map[uuid.UUID][]uuid.UUID, map[uuid.UUID]dbq.LeadGateCampaignsRow, error) {
	linked := map[uuid.UUID][]uuid.UUID{}
	ids := unique(named)
	if len(segments) > 0 {
		links, err := queries.LeadGateSegmentLinks(ctx, tx, dbq.LeadGateSegmentLinksParams{OrganizationID: org, SegmentIds: unique(segments)})
		if err != nil {
			return nil, nil, fmt.Errorf("leadgate: segment links: %w", err)
		}
		for _, l := range links {
			linked[l.SegmentID] = append(linked[l.SegmentID], l.CampaignID)
			if !slices.Contains(ids, l.CampaignID) {
				ids = append(ids, l.CampaignID)
			}
		}
	}
	rows := map[uuid.UUID]dbq.LeadGateCampaignsRow{}
	if len(ids) == 0 {
		return linked, rows, nil
	}
	locked, err := queries.LeadGateCampaigns(ctx, tx, dbq.LeadGateCampaignsParams{OrganizationID: org, Ids: ids})
	if err != nil {
		return nil, nil, fmt.Errorf("leadgate: lock campaigns: %w", err)
	}
	for _, r := range locked {
		rows[r.ID] = r
	}
	return linked, rows, nil
}

func sends(rows map[uuid.UUID]dbq.LeadGateCampaignsRow, id uuid.UUID) bool {
	r, ok := rows[id]
	return ok && campaign.Sends(r.Status)
}

// check asks the policy gate whether p may add recipients new leads to campaigns now: capability
// campaign.launch, every mailbox the campaigns can send from; an allowed action is counted in tx.
func check(ctx context.Context, tx pgx.Tx, p *auth.Principal, campaigns []uuid.UUID, recipients int, now time.Time) (policy.Decision, error) {
	var senders []uuid.UUID
	for _, id := range campaigns {
		s, err := checks.Load(ctx, tx, p.OrganizationID, id, now)
		if err != nil {
			return policy.Decision{}, err
		}
		for _, m := range s.Senders() {
			if !slices.Contains(senders, m) {
				senders = append(senders, m)
			}
		}
	}
	return policy.Check(ctx, tx, p, policy.Action{Capability: policy.CampaignLaunch, Mailboxes: senders, Recipients: recipients}, now)
}

// write adds b's leads and pins in tx at once, by as the person who acted.
func write(ctx context.Context, tx pgx.Tx, org uuid.UUID, by uuid.NullUUID, b batch) (Outcome, error) {
	added, err := campaign.AddLeads(ctx, tx, org, unique(b.leads), by)
	if err != nil {
		return Outcome{}, err
	}
	out := Outcome{Added: added}
	if pins := unique(b.pins); len(pins) > 0 {
		contacts, segments := make([]uuid.UUID, len(pins)), make([]uuid.UUID, len(pins))
		for i, p := range pins {
			contacts[i], segments[i] = p.Contact, p.Segment
		}
		if err := queries.LeadGatePinsAdd(ctx, tx, dbq.LeadGatePinsAddParams{OrganizationID: org, ContactIds: contacts, SegmentIds: segments}); err != nil {
			return out, fmt.Errorf("leadgate: pin: %w", err)
		}
		out.Pinned = len(pins)
	}
	return out, nil
}

// actor is the person behind p (an API key acts for its owner), invalid for none.
func actor(p *auth.Principal) uuid.NullUUID {
	return uuid.NullUUID{UUID: p.UserID, Valid: p.UserID != uuid.Nil}
}

// unique is s without repeats, in first-seen order.
func unique[T comparable](s []T) []T {
	seen := make(map[T]bool, len(s))
	out := make([]T, 0, len(s))
	for _, v := range s {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}
