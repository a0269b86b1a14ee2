package handlers

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/internal/audience/contacts"
)

// contactViews turns stored rows into API contacts with their campaigns and categories (two queries for the
// whole page), plus each one's campaign_lead when campaign is set (a search naming exactly one campaign).
func contactViews(ctx context.Context, q contacts.Querier, org uuid.UUID, rows []contacts.Row, campaign *uuid.UUID) ([]api.Contact, error) {
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
	camps, err := q.Query(ctx, `SELECT l.contact_id, k.id, k.name FROM campaign_leads l
		JOIN campaigns k ON k.organization_id = l.organization_id AND k.id = l.campaign_id
		WHERE l.organization_id = $1 AND l.contact_id = ANY($2) ORDER BY l.created_at, k.id`, org, ids)
	if err != nil {
		return nil, fmt.Errorf("load contact campaigns: %w", err)
	}
	for camps.Next() {
		var contact, id uuid.UUID
		var name string
		if err := camps.Scan(&contact, &id, &name); err != nil {
			camps.Close()
			return nil, err
		}
		c := &out[at[contact]]
		c.Campaigns = append(c.Campaigns, api.MiniCampaign{ID: id.String(), Name: name})
	}
	camps.Close()
	if err := camps.Err(); err != nil {
		return nil, err
	}
	cats, err := q.Query(ctx, `SELECT cc.contact_id, l.id, l.title, l.color FROM contact_categories cc
		JOIN labels l ON l.organization_id = cc.organization_id AND l.id = cc.category_id
		WHERE cc.organization_id = $1 AND cc.contact_id = ANY($2) ORDER BY l.position, l.id`, org, ids)
	if err != nil {
		return nil, fmt.Errorf("load contact categories: %w", err)
	}
	for cats.Next() {
		var contact, id uuid.UUID
		var title, color string
		if err := cats.Scan(&contact, &id, &title, &color); err != nil {
			cats.Close()
			return nil, err
		}
		c := &out[at[contact]]
		c.Categories = append(c.Categories, api.MiniCategory{ID: id, Title: title, Color: color})
	}
	cats.Close()
	if err := cats.Err(); err != nil {
		return nil, err
	}
	if campaign == nil {
		return out, nil
	}
	leads, err := q.Query(ctx, `SELECT l.contact_id, `+contacts.LeadStatusSQL+`, l.sent, l.opened, l.machine_opened, l.clicked,
		l.replied, l.bounced, l.current_step, l.sender, l.failure_reason, l.last_activity_at, l.hold_since, l.hold_until,
		l.hold_reason, l.hold_source
		FROM campaign_leads l JOIN contacts c ON c.organization_id = l.organization_id AND c.id = l.contact_id
		WHERE l.organization_id = $1 AND l.campaign_id = $2 AND l.contact_id = ANY($3)`, org, *campaign, ids)
	if err != nil {
		return nil, fmt.Errorf("load campaign leads: %w", err)
	}
	defer leads.Close()
	for leads.Next() {
		var contact uuid.UUID
		var status, step, sender, failure, holdReason string
		var sent, opened, machine, clicked, replied, bounced int32
		var lastAt, holdSince, holdUntil *time.Time
		var holdSource *string
		if err := leads.Scan(&contact, &status, &sent, &opened, &machine, &clicked, &replied, &bounced, &step, &sender,
			&failure, &lastAt, &holdSince, &holdUntil, &holdReason, &holdSource); err != nil {
			return nil, err
		}
		p := api.ContactCampaignProgress{
			Status: api.ContactCampaignProgressStatus(status), Sent: int(sent), Opened: int(opened),
			MachineOpened: api.NewOptInt(int(machine)), Clicked: int(clicked), Replied: int(replied), Bounced: int(bounced),
			LastActivityAt: optNilTime(lastAt),
		}
		if step != "" {
			p.CurrentStep = api.NewOptString(step)
		}
		if sender != "" {
			p.Sender = api.NewOptString(sender)
		}
		if status == "failed" {
			p.FailureReason = api.NewOptString(failure)
		}
		if holdSince != nil && holdSource != nil {
			h := api.CampaignLeadHold{Since: *holdSince, Source: api.CampaignLeadHoldSource(*holdSource), Until: optNilTime(holdUntil)}
			if holdReason != "" {
				h.Reason = api.NewOptString(holdReason)
			}
			p.Hold = api.NewOptCampaignLeadHold(h)
		}
		out[at[contact]].CampaignLead = api.NewOptContactCampaignProgress(p)
	}
	return out, leads.Err()
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
