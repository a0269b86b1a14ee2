package campaign

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/audience/activity"
)

// Lead names one contact in one campaign.
type Lead struct{ Contact, Campaign uuid.UUID }

// Sends reports whether a lead added to a campaign in status is mailed without anyone starting it: the
// campaign is active, or completed (a new lead restarts it, see package engine). Adding leads to a draft or a
// paused campaign mails nobody until it is started or resumed.
func Sends(status string) bool { return status == StatusActive || status == StatusCompleted }

// AddLeads adds leads to org's campaigns in tx as pending leads (existing leads are left as they are) and
// answers those that are new. Each campaign's new leads get a campaign_added entry on their contacts'
// timelines, naming by (invalid: the system) as who acted. Every contact and campaign must exist.
func AddLeads(ctx context.Context, tx pgx.Tx, org uuid.UUID, leads []Lead, by uuid.NullUUID) ([]Lead, error) {
	if len(leads) == 0 {
		return nil, nil
	}
	contacts, campaigns := make([]uuid.UUID, len(leads)), make([]uuid.UUID, len(leads))
	for i, l := range leads {
		contacts[i], campaigns[i] = l.Contact, l.Campaign
	}
	rows, err := queries.CampaignLeadsAdd(ctx, tx, dbq.CampaignLeadsAddParams{OrganizationID: org, ContactIds: contacts, CampaignIds: campaigns})
	if err != nil {
		return nil, fmt.Errorf("campaign: add leads: %w", err)
	}
	added := make([]Lead, len(rows))
	byCampaign := map[uuid.UUID][]uuid.UUID{}
	var order []uuid.UUID
	for i, r := range rows {
		added[i] = Lead{Contact: r.ContactID, Campaign: r.CampaignID}
		if _, ok := byCampaign[r.CampaignID]; !ok {
			order = append(order, r.CampaignID)
		}
		byCampaign[r.CampaignID] = append(byCampaign[r.CampaignID], r.ContactID)
	}
	if len(order) == 0 {
		return added, nil
	}
	// The timeline shows the campaign's name as it was.
	names, err := queries.ContactLinksCampaignNames(ctx, tx, dbq.ContactLinksCampaignNamesParams{OrganizationID: org, Ids: order})
	if err != nil {
		return nil, err
	}
	name := make(map[uuid.UUID]string, len(names))
	for _, n := range names {
		name[n.ID] = n.Name
	}
	for _, id := range order {
		if err := activity.Record(ctx, tx, activity.Entry{ContactIDs: byCampaign[id], UserID: by, Type: activity.CampaignAdded,
			Metadata: map[string]any{"campaign_id": id, "campaign_name": name[id]}}); err != nil {
			return nil, err
		}
	}
	return added, nil
}
