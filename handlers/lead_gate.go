package handlers

import (
	"github.com/google/uuid"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/internal/agents/leadgate"
	"github.com/outflowhq/outflow/internal/campaigns/campaign"
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
