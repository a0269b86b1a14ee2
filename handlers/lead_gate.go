package handlers

import (
	"context"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/outflowhq/outflow/gen/api"
	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/agents/leadgate"
	"github.com/outflowhq/outflow/internal/campaigns/campaign"
	"github.com/outflowhq/outflow/internal/identity/auth"
)

// heldLeads maps leads an agent's write left waiting for a person (leadgate.Held) onto the `approval` of a 202
// answer.
func heldLeads(h *leadgate.Held) api.HeldLeads {
	a := h.Approval
	reasons := a.Reasons
	if reasons == nil {
		reasons = []string{}
	}
	out := api.HeldLeads{Result: api.HeldLeadsResultAwaitingApproval, ApprovalID: a.ID, ExpiresAt: a.ExpiresAt, Reasons: reasons,
		CampaignIds: append([]uuid.UUID{}, h.Campaigns...), SegmentIds: append([]uuid.UUID{}, h.Segments...), Leads: h.Leads}
	if u, ok := approvalLink(h.URL).Get(); ok {
		out.ApprovalURL = u
	}
	return out
}

// leadsOf pairs every contact with every campaign: the leads a write naming campaigns for contacts asks for.
func leadsOf(contacts, campaigns []uuid.UUID) []campaign.Lead {
	out := make([]campaign.Lead, 0, len(contacts)*len(campaigns))
	for _, c := range contacts {
		for _, k := range campaigns {
			out = append(out, campaign.Lead{Contact: c, Campaign: k})
		}
	}
	return out
}

// pinsOf pairs every contact with every segment: the pins a write naming segments for contacts asks for.
func pinsOf(contacts, segments []uuid.UUID) []leadgate.Pin {
	out := make([]leadgate.Pin, 0, len(contacts)*len(segments))
	for _, c := range contacts {
		for _, s := range segments {
			out = append(out, leadgate.Pin{Contact: c, Segment: s})
		}
	}
	return out
}

// watchAddresses is the gate's Watch, for an API key or OAuth grant, of the contacts POST /contacts is about
// to enrich: the primary contacts of the inputs' addresses (the contacts it creates belonged to nothing
// before). Nil for a session.
func watchAddresses(ctx context.Context, tx pgx.Tx, gate *leadgate.Gate, p *auth.Principal, inputs []contactInput) (*leadgate.Watch, error) {
	if p.IsSession() {
		return nil, nil
	}
	emails := make([]string, len(inputs))
	for i, in := range inputs {
		emails[i] = in.email
	}
	existing, err := dbq.New().ContactIDsByEmails(ctx, tx, dbq.ContactIDsByEmailsParams{OrganizationID: p.OrganizationID, Emails: emails})
	if err != nil {
		return nil, err
	}
	return gate.Watch(ctx, tx, p, existing)
}
