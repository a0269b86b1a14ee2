package handlers

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"github.com/outflowhq/outflow/gen/api"
	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/audience/contacts"
)

// contactViews turns stored rows into API contacts with their campaigns and categories (two queries for the
// whole page), plus each one's campaign_lead when campaign is set (a search naming exactly one campaign).
func contactViews(ctx context.Context, tx dbq.DBTX, org uuid.UUID, rows []contacts.Row, campaign *uuid.UUID) ([]api.Contact, error) {
	out := make([]api.Contact, len(rows))
	if len(rows) == 0 {
		return out, nil
	}
	ids := make([]uuid.UUID, len(rows))
	at := make(map[uuid.UUID]int, len(rows))
	for i, r := range rows {
		ids[i], at[r.ID] = r.ID, i
		out[i] = contactOf(r)
	}
	q := dbq.New()
	camps, err := q.ContactViewCampaigns(ctx, tx, dbq.ContactViewCampaignsParams{OrganizationID: org, ContactIds: ids})
	if err != nil {
		return nil, fmt.Errorf("load contact campaigns: %w", err)
	}
	for _, k := range camps {
		c := &out[at[k.ContactID]]
		c.Campaigns = append(c.Campaigns, api.MiniCampaign{ID: k.ID.String(), Name: k.Name})
	}
	cats, err := q.ContactViewCategories(ctx, tx, dbq.ContactViewCategoriesParams{OrganizationID: org, ContactIds: ids})
	if err != nil {
		return nil, fmt.Errorf("load contact categories: %w", err)
	}
	for _, k := range cats {
		c := &out[at[k.ContactID]]
		c.Categories = append(c.Categories, api.MiniCategory{ID: k.ID, Title: k.Title, Color: k.Color})
	}
	if campaign == nil {
		return out, nil
	}
	leads, err := q.ContactViewLeads(ctx, tx, dbq.ContactViewLeadsParams{OrganizationID: org, CampaignID: *campaign, ContactIds: ids})
	if err != nil {
		return nil, fmt.Errorf("load campaign leads: %w", err)
	}
	for _, l := range leads {
		p := api.ContactCampaignProgress{
			Status: api.ContactCampaignProgressStatus(l.Status), Sent: int(l.Sent), Opened: int(l.Opened),
			MachineOpened: api.NewOptInt(int(l.MachineOpened)), Clicked: int(l.Clicked), Replied: int(l.Replied), Bounced: int(l.Bounced),
			LastActivityAt: optNilTime(l.LastActivityAt),
		}
		if l.CurrentStep != "" {
			p.CurrentStep = api.NewOptString(l.CurrentStep)
		}
		if l.Sender != "" {
			p.Sender = api.NewOptString(l.Sender)
		}
		if l.Status == "failed" {
			p.FailureReason = api.NewOptString(l.FailureReason)
		}
		if l.HoldSince != nil && l.HoldSource != nil {
			h := api.CampaignLeadHold{Since: *l.HoldSince, Source: api.CampaignLeadHoldSource(*l.HoldSource), Until: optNilTime(l.HoldUntil)}
			if l.HoldReason != "" {
				h.Reason = api.NewOptString(l.HoldReason)
			}
			p.Hold = api.NewOptCampaignLeadHold(h)
		}
		out[at[l.ContactID]].CampaignLead = api.NewOptContactCampaignProgress(p)
	}
	return out, nil
}

// contactOf maps the stored columns of one contact; campaigns and categories start empty.
func contactOf(r contacts.Row) api.Contact {
	c := api.Contact{
		ID: r.ID, FirstName: r.FirstName, LastName: r.LastName, Email: r.Email, Company: r.Company, Phone: r.Phone,
		CustomFields: api.ContactCustomFields(r.CustomFields), Subscribed: r.Subscribed,
		Campaigns: []api.MiniCampaign{}, Categories: []api.MiniCategory{},
		VerificationStatus:     api.ContactVerificationStatus(r.VerificationStatus),
		VerificationSubStatus:  api.NewOptContactVerificationSubStatus(api.ContactVerificationSubStatus(r.VerificationSubStatus)),
		VerificationSource:     api.NewOptContactVerificationSource(api.ContactVerificationSource(r.VerificationSource)),
		VerificationReason:     r.VerificationReason,
		IsCatchAll:             r.IsCatchAll,
		VerificationCheckedAt:  optNilTime(r.VerificationCheckedAt),
		VerificationConfidence: api.NewOptInt(int(r.VerificationConfidence)),
		EspProvider:            r.ESPProvider,
		EspResolvedAt:          optNilTime(r.ESPResolvedAt),
		UpdatedAt:              r.UpdatedAt,
		CreatedAt:              r.CreatedAt,
	}
	if r.VerificationProvider != "" {
		c.VerificationProvider = api.NewOptString(r.VerificationProvider)
	}
	return c
}
