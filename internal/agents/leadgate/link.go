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
	"github.com/outflowhq/outflow/internal/campaigns/campaign"
	"github.com/outflowhq/outflow/internal/identity/auth"
	"github.com/outflowhq/outflow/internal/platform/apierror"
)

// Link decides which of segments, the set a campaign update links campaign id to (replacing its links), the
// update may link now for p; status is the status the update sets ("" for none). A session, and an update
// after which the campaign does not send or which starts it (the launch is gated and counts the segments'
// members), links all of them. Otherwise linking segments it did not link adds their members as leads of a
// campaign that sends: an outbound action counting those members, allowed by p's policy or else held, the
// update then keeping the campaign's other links and leaving the new ones to the approval.
func (g *Gate) Link(ctx context.Context, tx pgx.Tx, p *auth.Principal, id uuid.UUID, segments []uuid.UUID, status string, now time.Time) ([]uuid.UUID, *Held, error) {
	if p.Kind == auth.KindSession {
		return segments, nil, nil
	}
	org := p.OrganizationID
	_, rows, err := reach(ctx, tx, org, []uuid.UUID{id}, nil)
	if err != nil {
		return nil, nil, err
	}
	c, ok := rows[id]
	if !ok {
		return segments, nil, nil // the update answers campaign_not_found
	}
	to := c.Status
	if status != "" {
		to = status
	}
	if !campaign.Sends(to) || to == campaign.StatusActive && c.Status != campaign.StatusActive {
		return segments, nil, nil
	}
	links, err := queries.CampaignSegmentsOf(ctx, tx, dbq.CampaignSegmentsOfParams{OrganizationID: org, CampaignIds: []uuid.UUID{id}})
	if err != nil {
		return nil, nil, err
	}
	var added []uuid.UUID
	for _, s := range unique(segments) {
		if !slices.ContainsFunc(links, func(l dbq.CampaignSegmentsOfRow) bool { return l.SegmentID == s }) {
			added = append(added, s)
		}
	}
	if len(added) == 0 {
		return segments, nil, nil
	}
	known, err := queries.CampaignSegmentsExisting(ctx, tx, dbq.CampaignSegmentsExistingParams{OrganizationID: org, SegmentIds: added})
	if err != nil || len(known) < len(added) {
		return segments, nil, err // the update answers invalid_segment_ids
	}
	// A new link is an action even when the segment is empty today: its members join the campaign later.
	joining, err := campaign.Joining(ctx, tx, org, id, added)
	if err != nil {
		return nil, nil, err
	}
	d, err := check(ctx, tx, p, []uuid.UUID{id}, joining, now)
	if err != nil || d.Allowed {
		return segments, nil, err
	}
	h, err := g.holdLink(ctx, tx, p, c, added, joining, d, now)
	if err != nil {
		return nil, nil, err
	}
	return slices.DeleteFunc(slices.Clone(segments), func(s uuid.UUID) bool { return slices.Contains(added, s) }), h, nil
}

// Refilter lets p's change of which contacts segment id selects (its filters or kind), already made in tx,
// stand: for a credential, the leads the segment's members now bring into the campaigns that send linked to
// it are one outbound action, counted under p's policy and enrolled at once; outside the policy the change is
// refused (403 agent_policy_required) and the caller's transaction rolls back. A session's change stands and
// the periodic job enrolls, as before.
func (g *Gate) Refilter(ctx context.Context, tx pgx.Tx, p *auth.Principal, id uuid.UUID, now time.Time) error {
	if p.Kind == auth.KindSession {
		return nil
	}
	org := p.OrganizationID
	linked, rows, err := reach(ctx, tx, org, nil, []uuid.UUID{id})
	if err != nil {
		return err
	}
	var names []string
	var ids []uuid.UUID
	total := 0
	for _, c := range linked[id] {
		if !sends(rows, c) {
			continue
		}
		n, err := campaign.Joining(ctx, tx, org, c, []uuid.UUID{id})
		if err != nil {
			return err
		}
		if n > 0 {
			ids, total = append(ids, c), total+n
			names = append(names, fmt.Sprintf("%q", rows[c].Name))
		}
	}
	if total == 0 {
		return nil
	}
	d, err := check(ctx, tx, p, ids, total, now)
	if err != nil {
		return err
	}
	if !d.Allowed {
		return apierror.Forbidden("agent_policy_required", fmt.Sprintf("With this change the segment adds %d lead(s) to %d campaign(s) that send (%s), "+
			"which an API key or OAuth app does only under an agent policy that allows campaign.launch: %s Ask a person to change it, or "+
			"unlink the segment from those campaigns first.", total, len(ids), strings.Join(names, ", "), strings.Join(d.Reasons, " ")))
	}
	for _, c := range ids {
		if _, err := campaign.Enroll(ctx, tx, org, c); err != nil {
			return err
		}
	}
	return nil
}
