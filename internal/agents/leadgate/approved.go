package leadgate

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/campaigns/campaign"
	"github.com/outflowhq/outflow/internal/identity/auth"
	"github.com/outflowhq/outflow/internal/platform/apierror"
	"github.com/outflowhq/outflow/internal/trail/audit"
)

// addApproved is the executor of approved OpAddLeads approvals: it writes what a holds and still exists (the
// hard gate of adding: a contact, campaign or segment deleted meanwhile took its rows along), the pins'
// leads of campaigns that send enrolled with them, approver as the person who acted, counting nothing
// against a policy, and records the held request's audit entry. Nothing left is a refusal (409 nothing_to_add).
func (g *Gate) addApproved(ctx context.Context, tx pgx.Tx, a dbq.Approval, approver *auth.Principal, _ time.Time) (map[string]any, error) {
	org := a.OrganizationID
	rows, err := queries.HeldLeadsOf(ctx, tx, dbq.HeldLeadsOfParams{OrganizationID: org, ApprovalID: a.ID})
	if err != nil {
		return nil, fmt.Errorf("leadgate: held rows of %s: %w", a.ID, err)
	}
	if len(rows) == 0 {
		return nil, nothingLeft()
	}
	var leads []campaign.Lead
	var pins []Pin
	for _, r := range rows {
		if r.CampaignID.Valid {
			leads = append(leads, campaign.Lead{Contact: r.ContactID, Campaign: r.CampaignID.UUID})
		} else {
			pins = append(pins, Pin{Contact: r.ContactID, Segment: r.SegmentID.UUID})
		}
	}
	pl, err := planAdd(ctx, tx, org, leads, pins, nil)
	if err != nil {
		return nil, err
	}
	out, err := write(ctx, tx, org, actor(approver), pl.writes(true))
	if err != nil {
		return nil, err
	}
	var campaigns []uuid.UUID
	for _, l := range out.Added {
		campaigns = append(campaigns, l.Campaign)
	}
	campaigns = unique(campaigns)
	var h struct {
		Event string `json:"event"`
	}
	if err := json.Unmarshal(a.Payload, &h); err != nil {
		return nil, fmt.Errorf("leadgate: payload of %s: %w", a.ID, err)
	}
	if err := audit.Record(ctx, tx, audit.Entry{Action: audit.ActionUpdate, Event: h.Event, EntityType: audit.EntityContact,
		Metadata: approvedMeta(a, approver, map[string]any{"leads_added": len(out.Added), "pins_added": out.Pinned,
			"campaign_ids": nonNil(campaigns)})}); err != nil {
		return nil, err
	}
	return map[string]any{"leads_added": len(out.Added), "pins_added": out.Pinned, "campaign_ids": nonNil(campaigns)}, nil
}

// linkApproved is the executor of approved OpLinkSegments approvals: it links the held segments that still
// exist to the campaign, if it still exists (keeping its other links), and enrolls their members now, approver
// as the person who acted, counting nothing against a policy, recorded as a campaign update.
func (g *Gate) linkApproved(ctx context.Context, tx pgx.Tx, a dbq.Approval, approver *auth.Principal, _ time.Time) (map[string]any, error) {
	var h struct {
		CampaignID uuid.UUID   `json:"campaign_id"`
		SegmentIDs []uuid.UUID `json:"segment_ids"`
	}
	if err := json.Unmarshal(a.Payload, &h); err != nil {
		return nil, fmt.Errorf("leadgate: payload of %s: %w", a.ID, err)
	}
	_, rows, err := reach(ctx, tx, a.OrganizationID, []uuid.UUID{h.CampaignID}, nil)
	if err != nil {
		return nil, err
	}
	if _, ok := rows[h.CampaignID]; !ok {
		return nil, nothingLeft()
	}
	linked, added, err := campaign.Link(ctx, tx, a.OrganizationID, h.CampaignID, h.SegmentIDs)
	if err != nil {
		return nil, err
	}
	if len(linked) == 0 {
		return nil, nothingLeft()
	}
	if err := audit.Record(ctx, tx, audit.Entry{Action: audit.ActionUpdate, Event: eventCampaignUpdated, EntityType: audit.EntityCampaign,
		EntityID: h.CampaignID.String(), Metadata: approvedMeta(a, approver, map[string]any{"changed": []string{"segment_ids"},
			"segment_ids": linked, "leads_added": added})}); err != nil {
		return nil, err
	}
	return map[string]any{"campaign_id": h.CampaignID, "segment_ids": linked, "leads_added": added}, nil
}

// approvedMeta is an approved request's audit metadata: m with the approval, who approved it and who asked.
func approvedMeta(a dbq.Approval, approver *auth.Principal, m map[string]any) map[string]any {
	m["approval_id"], m["approved_by"] = a.ID, approver.UserID
	m["requester_kind"], m["requester_id"] = a.CredentialKind, a.CredentialID
	return m
}

func nothingLeft() error {
	return apierror.Conflict("nothing_to_add", "Everything this approval held (contacts, campaigns, segments) was deleted meanwhile; nothing was added.")
}
